package io.pgqueue.test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * The clock the queue's scheduler reads in tests: the system clock plus whatever
 * {@link QueueTester#advance(Duration)} added. Thread-safe.
 */
public final class QueueTestClock extends Clock {

    private volatile Duration offset = Duration.ZERO;

    /** @return how far this clock is ahead of the system clock */
    public Duration offset() {
        return this.offset;
    }

    synchronized void advance(Duration duration) {
        this.offset = this.offset.plus(duration);
    }

    void reset() {
        this.offset = Duration.ZERO;
    }

    @Override
    public Instant instant() {
        return Instant.now().plus(this.offset);
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        throw new UnsupportedOperationException("The queue's test clock is in UTC");
    }
}
