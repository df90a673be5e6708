package io.pgqueue;

import java.time.Duration;

/**
 * Default values of the queue's settings, defined once here. The Spring Boot properties refer to
 * these constants.
 */
public final class QueueDefaults {

    /** Default database schema of the queue's tables. */
    public static final String SCHEMA = "pgqueue";

    /** Default upper bound of a job's serialized payload: 256 KiB. */
    public static final int MAX_PAYLOAD_BYTES = 256 * 1024;

    /** Default number of attempts a job gets before it fails for good. */
    public static final int MAX_ATTEMPTS = 20;

    /** Lowest allowed job priority. */
    public static final int MIN_PRIORITY = -1000;

    /** Highest allowed job priority (claimed first). */
    public static final int MAX_PRIORITY = 1000;

    /** Default job priority. */
    public static final int PRIORITY = 0;

    /** Default lease of a claimed job; a worker renews it by heartbeats while the handler runs. */
    public static final Duration LEASE = Duration.ofSeconds(30);

    /** Default timeout of each statement the queue runs itself. */
    public static final Duration STATEMENT_TIMEOUT = Duration.ofSeconds(30);

    /** Default time completed jobs are kept before retention deletes them. */
    public static final Duration COMPLETED_RETENTION = Duration.ofHours(1);

    /** Default time failed jobs are kept before retention deletes them. */
    public static final Duration FAILED_RETENTION = Duration.ofDays(7);

    /** Default time cancelled jobs are kept before retention deletes them. */
    public static final Duration CANCELLED_RETENTION = Duration.ofDays(7);

    /** Default number of rows one retention or rescue statement handles. */
    public static final int MAINTENANCE_BATCH_SIZE = 1000;

    /** Maximum length of a task name (it becomes part of a NOTIFY channel name). */
    public static final int MAX_TASK_NAME_LENGTH = 48;

    /** Maximum length of a dedup key. */
    public static final int MAX_DEDUP_KEY_LENGTH = 512;

    private QueueDefaults() {
    }
}
