package io.pgqueue.internal.store;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.IntStream;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The outbox of a sharded installation: on the main shard, the jobs enqueued in a transaction for
 * partitions on other shards; on every shard, the marks of the rows relayed there. Internal API;
 * its SQL is in {@link OutboxStatements}.
 */
public final class OutboxStore {

    private final NamedParameterJdbcTemplate jdbc;

    private final String schema;

    /**
     * Creates a store.
     * @param dataSource the database
     * @param config the queue's settings
     */
    public OutboxStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.schema = config.schema();
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.schema);
    }

    /**
     * A job waiting in the outbox.
     * @param id the outbox row's id
     * @param jobId the job's id
     * @param partition the job's partition
     * @param task the task
     * @param payload the payload as JSON text
     * @param headers the headers as JSON text
     * @param priority the priority
     * @param scheduleTime when it is due
     * @param delayToleranceDeadline when it should start at the latest, or {@code null}
     * @param maxAttempts the maximum number of attempts
     * @param dedupKey the dedup key, or {@code null}
     * @param dedupPolicy the name of the dedup policy, or {@code null} for the task's own
     * @param createdAt when it was enqueued
     */
    public record Pending(long id, long jobId, int partition, String task, String payload, String headers, int priority,
            Instant scheduleTime, Instant delayToleranceDeadline, int maxAttempts, String dedupKey, String dedupPolicy,
            Instant createdAt) {

        /** @return the job as a new job, to resolve its duplicate on the shard */
        public NewJob asNewJob() {
            Long tolerance = this.delayToleranceDeadline == null ? null
                    : this.delayToleranceDeadline.toEpochMilli() - this.scheduleTime.toEpochMilli();
            return new NewJob(this.task, this.payload, this.headers, this.priority, this.scheduleTime, 0, tolerance,
                    this.maxAttempts, this.dedupKey, this.partition);
        }
    }

    /**
     * What relaying a job to its shard did.
     * @param outboxId the outbox row
     * @param fresh whether it was relayed now (false: an earlier relay wrote it already)
     * @param inserted whether its job was written (false for a fresh job: an active job holds its dedup key)
     */
    public record Relayed(long outboxId, boolean fresh, boolean inserted) {
    }

    /**
     * Writes jobs to the outbox, in the caller's transaction if there is one.
     * @param jobs the jobs, each with its partition
     * @param dedupPolicies per job, the name of its dedup policy, or {@code null} for the task's own
     * @return per job, in order, the id it will have on its shard
     */
    public List<Long> write(List<NewJob> jobs, List<String> dedupPolicies) {
        MapSqlParameterSource params = JobStore.arrays(jobs)
            .addValue("dedupPolicies", SqlArrays.texts(dedupPolicies));
        List<long[]> rows = this.jdbc.query(sql(OutboxStatements.WRITE), params,
                (rs, row) -> new long[] {rs.getLong("id"), rs.getLong("job_id")});
        // Identities are taken in insertion order, which is the input order.
        rows.sort(Comparator.comparingLong(row -> row[0]));
        return rows.stream().map(row -> row[1]).toList();
    }

    /**
     * Locks the oldest outbox rows no other relay works on, until the current transaction ends.
     * @param limit the most rows
     * @return the rows, oldest first
     */
    public List<Pending> lockPending(int limit) {
        return this.jdbc.query(sql(OutboxStatements.LOCK_PENDING), new MapSqlParameterSource("limit", limit),
                (rs, row) -> new Pending(rs.getLong("id"), rs.getLong("job_id"), rs.getInt("partition"), rs.getString("task"),
                        rs.getString("payload"), rs.getString("headers"), rs.getInt("priority"),
                        instant(rs.getObject("schedule_time", OffsetDateTime.class)),
                        instant(rs.getObject("delay_tolerance_deadline", OffsetDateTime.class)), rs.getInt("max_attempts"),
                        rs.getString("dedup_key"), rs.getString("dedup_policy"),
                        instant(rs.getObject("created_at", OffsetDateTime.class))));
    }

    /**
     * Deletes relayed outbox rows.
     * @param ids the rows
     */
    public void delete(List<Long> ids) {
        this.jdbc.update(sql(OutboxStatements.DELETE), new MapSqlParameterSource("ids", SqlArrays.bigints(ids)));
    }

    /** @return the oldest outbox row not yet deleted, or {@link Long#MAX_VALUE} if there is none */
    public long oldestPending() {
        Long oldest = this.jdbc.queryForObject(sql(OutboxStatements.OLDEST_PENDING), Map.of(), Long.class);
        return oldest == null ? Long.MAX_VALUE : oldest;
    }

    /**
     * Writes relayed jobs on this shard (see {@link OutboxStatements#RELAY}), with the marks that keep
     * a second relay of the same rows from writing them again.
     * @param rows the outbox rows, all of partitions the shard should hold
     * @param channelPrefix the prefix of the tasks' NOTIFY channels
     * @param skipped the indexes of rows to mark relayed without writing their jobs (held keys)
     * @return per row, in order, what was done
     * @throws PartitionNotHeldException if the shard does not hold one of the partitions ACTIVE; nothing was written
     */
    public List<Relayed> relay(List<Pending> rows, String channelPrefix, Set<Integer> skipped) {
        MapSqlParameterSource params = new MapSqlParameterSource()
            .addValue("outboxIds", SqlArrays.bigints(rows.stream().map(Pending::id).toList()))
            .addValue("jobIds", SqlArrays.bigints(rows.stream().map(Pending::jobId).toList()))
            .addValue("partitions", SqlArrays.ints(rows.stream().map(Pending::partition).toList()))
            .addValue("tasks", SqlArrays.texts(rows.stream().map(Pending::task).toList()))
            .addValue("payloads", SqlArrays.texts(rows.stream().map(Pending::payload).toList()))
            .addValue("headers", SqlArrays.texts(rows.stream().map(Pending::headers).toList()))
            .addValue("priorities", SqlArrays.ints(rows.stream().map(Pending::priority).toList()))
            .addValue("scheduleTimes", SqlArrays.texts(rows.stream().map(row -> row.scheduleTime().toString()).toList()))
            .addValue("tolerances", SqlArrays.texts(rows.stream()
                .map(row -> row.delayToleranceDeadline() == null ? null : row.delayToleranceDeadline().toString()).toList()))
            .addValue("maxAttempts", SqlArrays.ints(rows.stream().map(Pending::maxAttempts).toList()))
            .addValue("dedupKeys", SqlArrays.texts(rows.stream().map(Pending::dedupKey).toList()))
            .addValue("createdAts", SqlArrays.texts(rows.stream().map(row -> row.createdAt().toString()).toList()))
            .addValue("skips", SqlArrays.booleans(IntStream.range(0, rows.size()).mapToObj(skipped::contains).toList()))
            .addValue("channelPrefix", channelPrefix);
        List<Relayed> relayed = new ArrayList<>(rows.size());
        Set<Integer> notHeld = new TreeSet<>();
        this.jdbc.query(sql(OutboxStatements.RELAY), params, rs -> {
            int index = relayed.size();
            relayed.add(new Relayed(rs.getLong("outbox_id"), rs.getBoolean("fresh"), rs.getBoolean("inserted")));
            if (!rs.getBoolean("held")) {
                notHeld.add(rows.get(index).partition());
            }
        });
        if (!notHeld.isEmpty()) {
            throw new PartitionNotHeldException(notHeld);
        }
        return relayed;
    }

    /**
     * Forgets the relay marks of outbox rows older than the given one: those rows are gone.
     * @param below the oldest outbox row still pending
     * @return how many marks were forgotten
     */
    public int forgetRelayedBelow(long below) {
        return this.jdbc.update(sql(OutboxStatements.FORGET_RELAYED_BELOW), new MapSqlParameterSource("below", below));
    }

    private static Instant instant(OffsetDateTime time) {
        return time == null ? null : time.toInstant();
    }
}
