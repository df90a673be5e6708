package io.pgqueue;

import io.pgqueue.internal.engine.Engine;

/**
 * Reaches a queue's engine past its facades, for the tests of engine parts.
 */
public final class Engines {

    private Engines() {
    }

    /**
     * @param queue a queue built with {@link PgQueue#builder}
     * @return its engine
     */
    public static Engine of(PgQueue queue) {
        return queue.engine();
    }
}
