package io.pgqueue.testing;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock a test sets and moves; thread-safe. */
public final class SettableClock extends Clock {

    private volatile Instant now;

    /** @param now the time it starts at */
    public SettableClock(Instant now) {
        this.now = now;
    }

    /** @param now the new time */
    public void set(Instant now) {
        this.now = now;
    }

    /** @param duration how far to move it forward */
    public void advance(Duration duration) {
        this.now = this.now.plus(duration);
    }

    @Override
    public Instant instant() {
        return this.now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
