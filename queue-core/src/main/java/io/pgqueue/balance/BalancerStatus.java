package io.pgqueue.balance;

import java.util.Map;
import java.util.Optional;


/**
 * What a node's balancer has done, as its meters and the endpoint read it.
 */
public interface BalancerStatus {

    /** @return whether the installation is sharded (else there is nothing to balance) */
    boolean sharded();

    /** @return whether this node runs the balancer now */
    boolean leading();

    /** @return the last round this node ran, if it ran one */
    Optional<BalancerRound> lastRound();

    /** @return moves this node carried out, by reason */
    Map<MoveReason, Long> moves();

    /** @return moves this node's rounds passed over for friction */
    long blockedByFriction();
}
