package io.pgqueue.internal.store;

/**
 * The SQL of partitions and shards (tables {@code installation}, {@code shard_partition},
 * {@code shard}, {@code partition_map}, {@code partition_map_version}), one named statement per
 * operation. {@code ${schema}} stands for the validated queue schema.
 */
public final class PartitionStatements {

    private PartitionStatements() {
    }

    /** The database's installation row: its partition count and, on a registered shard, its place. */
    static final String INSTALLATION = """
            SELECT id, partitions, shard_name, shard_number FROM ${schema}.installation
            """;

    /**
     * Serializes the changes of the shard registry and the partition map across nodes for the rest
     * of the transaction: two nodes starting at once must not number shards or create the map twice.
     */
    static final String LOCK_TOPOLOGY = """
            SELECT pg_advisory_xact_lock(hashtext('${schema}.topology'))
            """;

    /** The registered shards. */
    static final String SHARDS = """
            SELECT name, number FROM ${schema}.shard ORDER BY number
            """;

    /** Registers a shard with the next free number (0 for the first: the coordinating shard). */
    static final String REGISTER_SHARD = """
            INSERT INTO ${schema}.shard (name, number)
            SELECT :name, coalesce(max(number) + 1, 0) FROM ${schema}.shard
            ON CONFLICT (name) DO NOTHING
            """;

    /**
     * Makes a database a shard of an installation, once: a database registered for another
     * installation or under another name keeps its place, and the statement changes nothing.
     */
    static final String CLAIM_SHARD_IDENTITY = """
            UPDATE ${schema}.installation
            SET id = CAST(:installation AS uuid), shard_name = :name, shard_number = :number
            WHERE shard_name IS NULL OR (shard_name = :name AND id = CAST(:installation AS uuid) AND shard_number = :number)
            """;

    /**
     * Moves the job id sequence into the shard's range (number << 48 onwards) unless it is there
     * already: ids stay unique across shards, so a job keeps its id wherever its partition goes.
     */
    static final String ENTER_ID_RANGE = """
            SELECT setval('${schema}.job_id_seq', :start, false)
            FROM ${schema}.job_id_seq
            WHERE last_value < :start
            """;

    /**
     * {@link #ENTER_ID_RANGE} for message ids: a message keeps its id when its partition moves, so
     * ids are unique across shards.
     */
    static final String ENTER_MESSAGE_ID_RANGE = """
            SELECT setval('${schema}.message_id_seq', :start, false)
            FROM ${schema}.message_id_seq
            WHERE last_value < :start
            """;

    /**
     * Sets the partition count of a database that has never held a job nor a partition map: the
     * count is chosen when an installation is created, never changed once a job has a partition.
     */
    static final String ADOPT_PARTITION_COUNT = """
            UPDATE ${schema}.installation SET partitions = :partitions
            WHERE partitions <> :partitions
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_finished)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.job_outbox)
              AND NOT EXISTS (SELECT 1 FROM ${schema}.partition_map)
            """;

    /** Whether the database holds active jobs. */
    static final String HAS_ACTIVE_JOBS = """
            SELECT EXISTS (SELECT 1 FROM ${schema}.job)
            """;

    /** The partitions the shard holds, with their state. */
    static final String HELD_PARTITIONS = """
            SELECT partition, state FROM ${schema}.shard_partition ORDER BY partition
            """;

    /** Lets the shard hold partitions ACTIVE. */
    static final String HOLD_PARTITIONS = """
            INSERT INTO ${schema}.shard_partition (partition)
            SELECT unnest(CAST(:partitions AS integer[]))
            ON CONFLICT (partition) DO NOTHING
            """;

    /** Gives up every partition but those listed (only while no partition map exists). */
    static final String RELEASE_PARTITIONS_EXCEPT = """
            DELETE FROM ${schema}.shard_partition WHERE partition <> ALL(CAST(:partitions AS integer[]))
            """;

    /** The partition map's version; raised by every change of the map. */
    static final String MAP_VERSION = """
            SELECT version FROM ${schema}.partition_map_version
            """;

    /** The partition map, with its version read in the same snapshot. */
    static final String MAP = """
            SELECT m.partition, m.shard, m.state, m.target, v.version
            FROM ${schema}.partition_map AS m, ${schema}.partition_map_version AS v
            ORDER BY m.partition
            """;

    /** Whether the schema has a partition map table (version 10 on). */
    static final String MAP_TABLE_EXISTS = """
            SELECT to_regclass('${schema}.partition_map') IS NOT NULL
            """;

    /** Whether the partition map exists. */
    static final String MAP_EXISTS = """
            SELECT EXISTS (SELECT 1 FROM ${schema}.partition_map)
            """;

    /** Creates the partition map: partition i on shard {@code shards[i]}. */
    static final String CREATE_MAP = """
            INSERT INTO ${schema}.partition_map (partition, shard)
            SELECT p.ord - 1, p.shard FROM unnest(CAST(:shards AS text[])) WITH ORDINALITY AS p(shard, ord)
            """;

    /** Raises the map's version and tells every node, on commit. */
    static final String BUMP_MAP_VERSION = """
            WITH bumped AS (
                UPDATE ${schema}.partition_map_version SET version = version + 1 RETURNING version
            )
            SELECT version, pg_notify(:channel, CAST(version AS text)) FROM bumped
            """;

    /** The moves in progress (on the main shard). */
    static final String MOVES = """
            SELECT partition, source, target, step FROM ${schema}.partition_move ORDER BY partition
            """;

    /** Journals a move (on the main shard). */
    static final String BEGIN_MOVE = """
            INSERT INTO ${schema}.partition_move (partition, source, target, step)
            VALUES (:partition, :source, :target, 'MARKED')
            """;

    /** Marks a partition MOVING in the map (on the main shard); nothing if it is not ACTIVE on the source. */
    static final String MARK_MAP_MOVING = """
            UPDATE ${schema}.partition_map SET state = 'MOVING', target = :target, changed_at = now()
            WHERE partition = :partition AND shard = :source AND state = 'ACTIVE'
            """;

    /** Places a moving partition on its target in the map, ACTIVE (on the main shard). */
    static final String SWITCH_MAP = """
            UPDATE ${schema}.partition_map SET shard = target, state = 'ACTIVE', target = NULL, changed_at = now()
            WHERE partition = :partition AND state = 'MOVING' AND target = :target
            """;

    /** Records that a move switched (on the main shard). */
    static final String MOVE_SWITCHED = """
            UPDATE ${schema}.partition_move SET step = 'SWITCHED', updated_at = now() WHERE partition = :partition
            """;

    /** Ends a move's journal (on the main shard). */
    static final String FINISH_MOVE = """
            DELETE FROM ${schema}.partition_move WHERE partition = :partition
            """;

    /**
     * Takes, on the session, the lock a node holds while it moves a partition, if no other node
     * holds it; a node that dies releases it with its connection.
     */
    static final String TRY_MOVE_LOCK = """
            SELECT pg_try_advisory_lock(hashtext('${schema}.partition_move'), :partition)
            """;

    /**
     * Locks a partition's row on the source shard against every enqueue (FOR UPDATE conflicts with
     * their KEY SHARE, so this waits for the enqueues in flight to commit), then marks it MOVING:
     * from then on the shard writes no job of the partition.
     */
    static final String LOCK_HELD_PARTITION = """
            SELECT partition FROM ${schema}.shard_partition WHERE partition = :partition FOR UPDATE
            """;

    static final String MARK_HELD_MOVING = """
            UPDATE ${schema}.shard_partition SET state = 'MOVING', since = now() WHERE partition = :partition
            """;

    /** Lets a shard hold a partition ACTIVE (the target of a move, at the switch). */
    static final String HOLD_ACTIVE = """
            INSERT INTO ${schema}.shard_partition (partition) VALUES (:partition)
            ON CONFLICT (partition) DO UPDATE SET state = 'ACTIVE', since = now()
            """;

    /** Gives a partition up (the source of a move, after the switch). */
    static final String RELEASE_PARTITION = """
            DELETE FROM ${schema}.shard_partition WHERE partition = :partition
            """;

    /**
     * Takes a batch of a partition's READY jobs out of the job table into job_moving, as one batch,
     * in one statement: from then on no worker sees them. A job's durable steps go with it, under the
     * key {@code pgqueue.steps} of its row. Jobs a claim holds locked are skipped
     * (they are being claimed), and so are jobs of workflows and jobs others depend on (tracked):
     * their dependents wait on this shard, so they finish here. The partition has no index of its own: the statement reads the
     * table once per batch, which a batch size of thousands keeps to a few reads per move.
     */
    static final String STAGE_BATCH = """
            WITH picked AS (
                SELECT id FROM ${schema}.job
                WHERE partition = :partition AND state = 'READY' AND NOT tracked
                ORDER BY id
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ), moved AS (
                DELETE FROM ${schema}.job AS job
                WHERE job.id IN (SELECT id FROM picked) AND job.state = 'READY' AND NOT job.tracked
                RETURNING job.*
            ), steps AS (
                DELETE FROM ${schema}.job_step AS s WHERE s.job_id IN (SELECT id FROM moved)
                RETURNING s.*
            ), job_steps AS (
                SELECT s.job_id, jsonb_build_object('pgqueue.steps', jsonb_agg(to_jsonb(s))) AS steps
                FROM steps AS s GROUP BY s.job_id
            ), batch AS (
                SELECT nextval('${schema}.job_moving_batch_seq') AS batch
            )
            INSERT INTO ${schema}.job_moving (batch, partition, job)
            SELECT batch.batch, :partition, to_jsonb(moved) || coalesce(job_steps.steps, '{}')
            FROM moved CROSS JOIN batch LEFT JOIN job_steps ON job_steps.job_id = moved.id
            """;

    /** The batches of a partition staged on this shard, oldest first. */
    static final String STAGED_BATCHES = """
            SELECT DISTINCT batch FROM ${schema}.job_moving WHERE partition = :partition ORDER BY batch
            """;

    /** One staged batch, as a JSON array of job rows. */
    static final String STAGED_BATCH = """
            SELECT CAST(coalesce(jsonb_agg(job), '[]') AS text) FROM ${schema}.job_moving
            WHERE partition = :partition AND batch = :batch
            """;

    /** Drops a batch the target has written. */
    static final String DROP_BATCH = """
            DELETE FROM ${schema}.job_moving WHERE partition = :partition AND batch = :batch
            """;

    /**
     * Writes a staged batch on the target, once: its mark in move_applied and its jobs (with their
     * durable steps) in one transaction, every column as it was on the source (id, attempts,
     * schedule, lease epoch). A job whose dedup key an active job here holds already is left out.
     * Due tasks are notified.
     */
    static final String APPLY_BATCH = """
            WITH applied AS (
                INSERT INTO ${schema}.move_applied (source, batch, partition) VALUES (:source, :batch, :partition)
                ON CONFLICT (source, batch) DO NOTHING
                RETURNING batch
            ), inserted AS (
                INSERT INTO ${schema}.job
                SELECT r.* FROM jsonb_populate_recordset(NULL::${schema}.job, CAST(:rows AS jsonb)) AS r
                WHERE EXISTS (SELECT 1 FROM applied)
                ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
                RETURNING id, task, schedule_time
            ), steps AS (
            %s
            ), notified AS (
                SELECT pg_notify(:channelPrefix || task, '')
                FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= statement_timestamp()) due
            )
            SELECT EXISTS (SELECT 1 FROM applied) AS applied, (SELECT count(*) FROM inserted) AS inserted,
                   (SELECT count(*) FROM notified) AS notified
            """.formatted(carriedSteps("inserted"));

    /**
     * A partition's active jobs on this shard: READY ones that can move (not tracked), and claimed
     * ones (STARTING or RUNNING).
     */
    static final String PARTITION_JOBS = """
            SELECT count(*) FILTER (WHERE state = 'READY' AND NOT tracked) AS ready,
                   count(*) FILTER (WHERE state <> 'READY') AS claimed
            FROM ${schema}.job WHERE partition = :partition
            """;

    /** The outbox rows of a partition relayed to this shard whose marks are still kept. */
    static final String RELAYED_MARKS = """
            SELECT outbox_id FROM ${schema}.job_relayed WHERE partition = :partition
            """;

    /** Copies relay marks to the shard a partition moves to, so no outbox row is relayed twice. */
    static final String COPY_RELAYED_MARKS = """
            INSERT INTO ${schema}.job_relayed (outbox_id, partition)
            SELECT unnest(CAST(:ids AS bigint[])), :partition
            ON CONFLICT (outbox_id) DO NOTHING
            """;

    /** A finished job's durable steps, under the key {@code pgqueue.steps} of its row ({@code f}). */
    private static final String FINISHED_STEPS = """
            coalesce((SELECT jsonb_build_object('pgqueue.steps', jsonb_agg(to_jsonb(s)))
                      FROM ${schema}.job_step AS s WHERE s.job_id = f.id), '{}')""";

    /**
     * A partition's FAILED jobs on this shard after an id, oldest first, as JSON rows (with their
     * durable steps) and ids.
     */
    static final String FAILED_JOBS = """
            SELECT CAST(coalesce(jsonb_agg(to_jsonb(f) || %s ORDER BY f.id), '[]') AS text) AS rows,
                   coalesce(array_agg(f.id ORDER BY f.id), '{}') AS ids
            FROM (SELECT * FROM ${schema}.job_finished
                  WHERE partition = :partition AND state = 'FAILED' AND id > :after
                  ORDER BY id
                  LIMIT :limit) AS f
            """.formatted(FINISHED_STEPS);

    /** One FAILED job on this shard, as a JSON row and its id. */
    static final String FAILED_JOB = """
            SELECT CAST(coalesce(jsonb_agg(to_jsonb(f) || %s), '[]') AS text) AS rows, coalesce(array_agg(f.id), '{}') AS ids
            FROM ${schema}.job_finished AS f
            WHERE f.id = :id AND f.state = 'FAILED'
            """.formatted(FINISHED_STEPS);

    /**
     * Writes finished jobs brought from another shard, every column as it was there, with their
     * durable steps; once.
     */
    static final String WRITE_FINISHED = """
            WITH written AS (
                INSERT INTO ${schema}.job_finished
                SELECT r.* FROM jsonb_populate_recordset(NULL::${schema}.job_finished, CAST(:rows AS jsonb)) AS r
                ON CONFLICT (id) DO NOTHING
                RETURNING id
            )
            %s
            """.formatted(carriedSteps("written"));

    /**
     * Writes the durable steps carried under the key {@code pgqueue.steps} of the job rows in
     * {@code :rows}, of the jobs a CTE of the statement wrote.
     * @param written the CTE that returns the ids of the jobs written
     */
    private static String carriedSteps(String written) {
        return """
                INSERT INTO ${schema}.job_step
                SELECT s.*
                FROM jsonb_array_elements(CAST(:rows AS jsonb)) AS r(job),
                     jsonb_populate_recordset(NULL::${schema}.job_step, r.job -> 'pgqueue.steps') AS s
                WHERE jsonb_typeof(r.job -> 'pgqueue.steps') = 'array' AND s.job_id IN (SELECT id FROM %s)
                ON CONFLICT (job_id, name) DO NOTHING""".formatted(written);
    }

    /** Drops FAILED jobs that another shard holds now. */
    static final String DROP_FAILED = """
            DELETE FROM ${schema}.job_finished WHERE id = ANY(CAST(:ids AS bigint[])) AND state = 'FAILED'
            """;
}
