package io.pgqueue.sample;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A file-storage backend that runs its background work on pgqueue: push notifications after an
 * upload (fast, 1 s delay tolerance), folder copies of thousands of files (slow, with progress),
 * "memories" published later (scheduled), thumbnails from a flaky dependency (retries), and
 * device sync (deduplicated, re-run when changes arrive while it runs).
 */
@SpringBootApplication
public class SampleApplication {

    /**
     * Starts the application.
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }
}
