package io.pgqueue.sample.tasks;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Stands in for a remote image service that fails: the first {@code sample.images.fail-first}
 * calls for each file (default 0), then a share {@code sample.images.failure-rate} of the rest
 * (default 0.5).
 */
@Component
public class FlakyImageService {

    private final int failFirst;

    private final double failureRate;

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    public FlakyImageService(@Value("${sample.images.fail-first:0}") int failFirst,
            @Value("${sample.images.failure-rate:0.5}") double failureRate) {
        this.failFirst = failFirst;
        this.failureRate = failureRate;
    }

    /**
     * Renders a thumbnail.
     * @param name the file name
     * @return the thumbnail's name
     * @throws IllegalStateException when the service "times out"
     */
    public String render(String name) {
        int call = this.calls.computeIfAbsent(name, n -> new AtomicInteger()).incrementAndGet();
        if (call <= this.failFirst || ThreadLocalRandom.current().nextDouble() < this.failureRate) {
            throw new IllegalStateException("image service timed out");
        }
        return "thumb-" + name + ".webp";
    }
}
