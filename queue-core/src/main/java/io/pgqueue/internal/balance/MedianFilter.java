package io.pgqueue.internal.balance;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;

/**
 * The median of a signal's samples over a sliding time window: a single spike, or a few, does not
 * move it; only a signal that stays high for about half the window does.
 */
public final class MedianFilter {

    private record Sample(Instant at, double value) {
    }

    private final Duration window;

    private final Deque<Sample> samples = new ArrayDeque<>();

    MedianFilter(Duration window) {
        this.window = window;
    }

    /**
     * Adds a sample and drops those older than the window.
     * @param at when it was taken
     * @param value its value
     */
    void add(Instant at, double value) {
        this.samples.addLast(new Sample(at, value));
        Instant oldest = at.minus(this.window);
        while (!this.samples.isEmpty() && this.samples.peekFirst().at().isBefore(oldest)) {
            this.samples.removeFirst();
        }
    }

    /**
     * @return the median of the samples in the window (of an even number, the lower middle one, so
     * that it exceeds a threshold only when more than half the samples do), 0 without samples
     */
    double median() {
        if (this.samples.isEmpty()) {
            return 0;
        }
        double[] values = this.samples.stream().mapToDouble(Sample::value).sorted().toArray();
        return values[(values.length - 1) / 2];
    }

    /** @return the number of samples in the window */
    int size() {
        return this.samples.size();
    }

    @Override
    public String toString() {
        return Arrays.toString(this.samples.stream().mapToDouble(Sample::value).toArray());
    }
}
