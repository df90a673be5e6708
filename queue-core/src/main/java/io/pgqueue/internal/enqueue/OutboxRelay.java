package io.pgqueue.internal.enqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.pgqueue.DedupPolicy;
import io.pgqueue.QueueDefaults;
import io.pgqueue.internal.lifecycle.BackgroundService;
import io.pgqueue.internal.shard.PartitionMap;
import io.pgqueue.internal.shard.Shards;
import io.pgqueue.internal.store.JobStore;
import io.pgqueue.internal.store.NewJob;
import io.pgqueue.internal.store.OutboxStore;
import io.pgqueue.internal.store.PartitionNotHeldException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Relays the main shard's outbox to the shards of the jobs' partitions: it locks the oldest rows
 * (SKIP LOCKED, so every node can relay at once), writes each shard's jobs there together with
 * marks of the rows relayed, and deletes the rows from the outbox in the transaction that locked
 * them. A relay that dies after a shard committed leaves the rows in the outbox; the next relay
 * finds their marks on the shard and writes nothing twice. So every job of a committed outbox row
 * reaches its shard exactly once, keeping the schedule time it was enqueued with (and so its place
 * among its partition's jobs). Duplicates of an active job's dedup key are resolved on the shard by
 * the recorded dedup policy. A shard that is down or does not hold a partition any more leaves its
 * rows for a later round; the others go on.
 * <p>
 * Woken when a transaction that wrote to the outbox commits; every {@link QueueDefaults#OUTBOX_RELAY_INTERVAL}
 * it also looks for rows that a node which stopped left behind.
 */
public final class OutboxRelay extends BackgroundService {

    private static final Logger log = LoggerFactory.getLogger(OutboxRelay.class);

    /** Outbox rows relayed per round at most. */
    static final int BATCH = 500;

    private final Shards shards;

    private final Duplicates duplicates;

    private boolean failing;

    /**
     * @param shards the installation's shards
     * @param duplicates resolves relayed jobs whose dedup key an active job on the shard holds
     */
    public OutboxRelay(Shards shards, Duplicates duplicates) {
        super("pgqueue-outbox-relay", Duration.ofSeconds(10));
        this.shards = shards;
        this.duplicates = duplicates;
    }

    /** Relays at once: a transaction wrote to the outbox. */
    public void wake() {
        wakeUp();
    }

    @Override
    protected void run() {
        while (isRunning()) {
            int relayed = 0;
            try {
                relayed = relayOnce();
                if (this.failing) {
                    log.info("The outbox relay works again");
                    this.failing = false;
                }
            }
            catch (RuntimeException ex) {
                if (!this.failing) {
                    log.warn("The outbox relay failed; trying again every {} ms: {}",
                            QueueDefaults.OUTBOX_RELAY_INTERVAL.toMillis(), ex.toString());
                    this.failing = true;
                }
            }
            if (relayed < BATCH && !pause(QueueDefaults.OUTBOX_RELAY_INTERVAL)) {
                return;
            }
        }
    }

    /**
     * Relays one batch of the oldest outbox rows.
     * @return how many rows were relayed
     */
    public int relayOnce() {
        Shards.Shard main = this.shards.main();
        OutboxStore outbox = main.outbox();
        List<Shards.Shard> touched = new ArrayList<>();
        Integer relayed = main.stores().jobs().inTransaction(() -> {
            List<OutboxStore.Pending> rows = outbox.lockPending(BATCH);
            if (rows.isEmpty()) {
                return 0;
            }
            PartitionMap map = this.shards.map();
            Map<String, List<OutboxStore.Pending>> byShard = new LinkedHashMap<>();
            for (OutboxStore.Pending row : rows) {
                if (!map.isMoving(row.partition())) {
                    byShard.computeIfAbsent(map.shardOf(row.partition()), name -> new ArrayList<>()).add(row);
                }
            }
            List<Long> done = new ArrayList<>();
            for (Map.Entry<String, List<OutboxStore.Pending>> part : byShard.entrySet()) {
                Shards.Shard shard = this.shards.find(part.getKey()).orElse(null);
                if (shard == null) {
                    continue;
                }
                try {
                    shard.stores().jobs().inTransaction(() -> {
                        relayTo(shard, part.getValue());
                        return null;
                    });
                    part.getValue().forEach(row -> done.add(row.id()));
                    touched.add(shard);
                }
                catch (PartitionNotHeldException ex) {
                    this.shards.refresh();
                }
                catch (RuntimeException ex) {
                    log.debug("Could not relay {} outbox rows to shard '{}': {}", part.getValue().size(), shard.name(),
                            ex.toString());
                }
            }
            outbox.delete(done);
            return done.size();
        });
        if (!touched.isEmpty()) {
            long oldest = outbox.oldestPending();
            for (Shards.Shard shard : touched) {
                shard.outbox().forgetRelayedBelow(oldest);
            }
        }
        return relayed;
    }

    private void relayTo(Shards.Shard shard, List<OutboxStore.Pending> rows) {
        JobStore jobs = shard.stores().jobs();
        List<DedupPolicy> policies = rows.stream().map(row -> this.duplicates.named(row.task(), row.dedupPolicy())).toList();
        Runnable relay = () -> {
            // Unique keys a finished job holds are marked relayed without their jobs.
            List<NewJob> relayed = rows.stream().map(OutboxStore.Pending::asNewJob).toList();
            Set<Integer> held = this.duplicates.heldByFinished(jobs, relayed, policies).keySet();
            List<OutboxStore.Relayed> results = shard.outbox().relay(rows, jobs.channel(""), held);
            for (int i = 0; i < rows.size(); i++) {
                OutboxStore.Relayed result = results.get(i);
                if (result.inserted()) {
                    this.duplicates.heldAfterInsert(jobs, relayed.get(i), policies.get(i), rows.get(i).jobId());
                }
                else if (result.fresh() && !held.contains(i)) {
                    this.duplicates.resolve(jobs, relayed.get(i), policies.get(i));
                }
            }
        };
        if (policies.stream().anyMatch(DedupPolicy.Unique.class::isInstance)) {
            jobs.inTransaction(() -> {
                relay.run();
                return null;
            });
        }
        else {
            relay.run();
        }
    }
}
