package io.pgqueue.internal.store;

/**
 * The SQL of the outbox (tables {@code job_outbox} on the main shard, {@code job_relayed} on every
 * shard), one named statement per operation. {@code ${schema}} stands for the validated queue schema.
 */
public final class OutboxStatements {

    private OutboxStatements() {
    }

    /**
     * Writes jobs to the outbox, in the caller's transaction, with ids from the main shard's range;
     * schedule and creation times are taken now, so the jobs keep their place in the queue
     * however late they are relayed.
     */
    static final String WRITE = """
            INSERT INTO ${schema}.job_outbox (job_id, partition, task, payload, headers, priority, schedule_time,
                                              delay_tolerance_deadline, max_attempts, dedup_key, dedup_policy, created_at)
            SELECT nextval('${schema}.job_id_seq'), t.partition, t.task, CAST(t.payload AS jsonb), CAST(t.headers AS jsonb),
                   t.priority, s.schedule_time, s.schedule_time + t.tolerance_ms * interval '1 millisecond',
                   t.max_attempts, t.dedup_key, t.dedup_policy, statement_timestamp()
            FROM unnest(CAST(:partitions AS integer[]), CAST(:tasks AS text[]), CAST(:payloads AS text[]),
                        CAST(:headers AS text[]), CAST(:priorities AS integer[]), CAST(:runAts AS text[]),
                        CAST(:delays AS bigint[]), CAST(:tolerances AS bigint[]), CAST(:maxAttempts AS integer[]),
                        CAST(:dedupKeys AS text[]), CAST(:dedupPolicies AS text[]))
                 WITH ORDINALITY AS t(partition, task, payload, headers, priority, run_at, delay_ms, tolerance_ms,
                                      max_attempts, dedup_key, dedup_policy, ord),
                 LATERAL (SELECT coalesce(CAST(t.run_at AS timestamptz),
                                          statement_timestamp() + t.delay_ms * interval '1 millisecond') AS schedule_time) s
            ORDER BY t.ord
            RETURNING id, job_id
            """;

    /**
     * The oldest outbox rows no other relay is working on, locked until the relay's transaction
     * ends (it deletes them in that transaction once their shards hold them).
     */
    static final String LOCK_PENDING = """
            SELECT id, job_id, partition, task, CAST(payload AS text) AS payload, CAST(headers AS text) AS headers,
                   priority, schedule_time, delay_tolerance_deadline, max_attempts, dedup_key, dedup_policy, created_at
            FROM ${schema}.job_outbox
            ORDER BY id
            LIMIT :limit
            FOR UPDATE SKIP LOCKED
            """;

    /** Deletes relayed outbox rows. */
    static final String DELETE = """
            DELETE FROM ${schema}.job_outbox WHERE id = ANY(CAST(:ids AS bigint[]))
            """;

    /** The oldest outbox row not yet deleted; relay marks below it are no longer needed. */
    static final String OLDEST_PENDING = """
            SELECT min(id) FROM ${schema}.job_outbox
            """;

    /**
     * Writes relayed jobs on their shard, fenced like an enqueue: only if the shard holds every
     * partition among them ACTIVE, or none. Rows relayed here before (job_relayed holds their
     * outbox id) are not written again. A job whose dedup key an active job holds is skipped and
     * reported, for the relay to apply the dedup policy; one the relay found held (:skips, a unique
     * key a finished job holds) is marked relayed and not written.
     */
    static final String RELAY = """
            WITH input AS (
                SELECT t.*
                FROM unnest(CAST(:outboxIds AS bigint[]), CAST(:jobIds AS bigint[]), CAST(:partitions AS integer[]),
                            CAST(:tasks AS text[]), CAST(:payloads AS text[]), CAST(:headers AS text[]),
                            CAST(:priorities AS integer[]), CAST(:scheduleTimes AS text[]), CAST(:tolerances AS text[]),
                            CAST(:maxAttempts AS integer[]), CAST(:dedupKeys AS text[]), CAST(:createdAts AS text[]),
                            CAST(:skips AS boolean[]))
                     WITH ORDINALITY AS t(outbox_id, job_id, partition, task, payload, headers, priority, schedule_time,
                                          tolerance_deadline, max_attempts, dedup_key, created_at, skip, ord)
            ), held AS (
                SELECT owned.partition FROM ${schema}.shard_partition AS owned
                WHERE owned.partition = ANY(ARRAY(SELECT DISTINCT partition FROM input)) AND owned.state = 'ACTIVE'
                ORDER BY owned.partition
                FOR KEY SHARE
            ), fresh AS (
                INSERT INTO ${schema}.job_relayed (outbox_id, partition)
                SELECT outbox_id, partition FROM input
                WHERE (SELECT count(*) FROM held) = (SELECT count(DISTINCT partition) FROM input)
                ON CONFLICT (outbox_id) DO NOTHING
                RETURNING outbox_id
            ), inserted AS (
                INSERT INTO ${schema}.job (id, task, payload, headers, priority, schedule_time, delay_tolerance_deadline,
                                           max_attempts, dedup_key, created_at, partition)
                SELECT job_id, task, CAST(payload AS jsonb), CAST(headers AS jsonb), priority,
                       CAST(schedule_time AS timestamptz), CAST(tolerance_deadline AS timestamptz), max_attempts,
                       dedup_key, CAST(created_at AS timestamptz), partition
                FROM input
                WHERE outbox_id IN (SELECT outbox_id FROM fresh) AND NOT skip
                ORDER BY task, dedup_key, ord
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            ), notified AS (
                SELECT pg_notify(:channelPrefix || task, '')
                FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= statement_timestamp()) due
            )
            SELECT input.outbox_id, input.partition IN (SELECT partition FROM held) AS held,
                   input.outbox_id IN (SELECT outbox_id FROM fresh) AS fresh,
                   input.job_id IN (SELECT id FROM inserted) AS inserted,
                   (SELECT count(*) FROM notified) AS notified
            FROM input
            ORDER BY input.ord
            """;

    /** Forgets relay marks whose outbox rows are gone (below the oldest pending one, or all). */
    static final String FORGET_RELAYED_BELOW = """
            DELETE FROM ${schema}.job_relayed WHERE outbox_id < :below
            """;
}
