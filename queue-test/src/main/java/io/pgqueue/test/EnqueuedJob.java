package io.pgqueue.test;

import java.time.Instant;
import java.util.Map;

import io.pgqueue.JobState;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.ObjectMapper;

/**
 * A job in the queue, as {@link QueueTester#enqueuedJobs(String)} sees it: waiting, due, scheduled
 * or running.
 */
public final class EnqueuedJob {

    private final long id;
    private final String task;
    private final JobState state;
    private final int priority;
    private final JsonNode payload;
    private final Map<String, String> headers;
    private final Instant scheduledAt;
    private final String dedupKey;
    private final int attempt;
    private final ObjectMapper mapper;

    EnqueuedJob(long id, String task, JobState state, int priority, JsonNode payload, Map<String, String> headers,
            Instant scheduledAt, String dedupKey, int attempt, ObjectMapper mapper) {
        this.id = id;
        this.task = task;
        this.state = state;
        this.priority = priority;
        this.payload = payload;
        this.headers = headers;
        this.scheduledAt = scheduledAt;
        this.dedupKey = dedupKey;
        this.attempt = attempt;
        this.mapper = mapper;
    }

    /** @return the job id */
    public long id() {
        return this.id;
    }

    /** @return the task */
    public String task() {
        return this.task;
    }

    /** @return READY (due or scheduled), STARTING, RUNNING, or WAITING for the jobs it runs after */
    public JobState state() {
        return this.state;
    }

    /** @return the priority */
    public int priority() {
        return this.priority;
    }

    /** @return the payload as JSON */
    public JsonNode payload() {
        return this.payload;
    }

    /**
     * Reads the payload as a type, with the application's JSON mapper.
     * @param <P> the type
     * @param type the type, usually the handler's payload type
     * @return the payload
     */
    public <P> P payload(Class<P> type) {
        return this.mapper.treeToValue(this.payload, type);
    }

    /** @return the headers */
    public Map<String, String> headers() {
        return this.headers;
    }

    /**
     * Returns when the job is due, on the queue's clock as the test moved it.
     * @return the time, or {@code null} for a job that waits for others
     */
    public Instant scheduledAt() {
        return this.scheduledAt;
    }

    /** @return the dedup key, or {@code null} */
    public String dedupKey() {
        return this.dedupKey;
    }

    /** @return the attempts made so far */
    public int attempt() {
        return this.attempt;
    }

    @Override
    public String toString() {
        return this.task + "#" + this.id + " " + this.state + " " + this.payload
                + (this.dedupKey == null ? "" : " key=" + this.dedupKey) + " at " + this.scheduledAt;
    }
}
