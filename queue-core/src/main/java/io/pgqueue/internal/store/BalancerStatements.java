package io.pgqueue.internal.store;

/**
 * The SQL of the partition balancer (tables {@code partition_load}, {@code balancer_leader},
 * {@code balancer_decision}, column {@code shard.draining}; all on the main shard), one named
 * statement per operation. {@code ${schema}} stands for the validated queue schema.
 */
public final class BalancerStatements {

    private BalancerStatements() {
    }

    /**
     * Adds a node's job counts per partition to the current bucket (the time rounded down to a
     * whole bucket): one row per partition and bucket, whatever the number of nodes.
     */
    static final String ADD_LOAD = """
            INSERT INTO ${schema}.partition_load (bucket, partition, jobs)
            SELECT to_timestamp(floor(extract(epoch FROM statement_timestamp()) / :bucketSeconds) * :bucketSeconds),
                   unnest(CAST(:partitions AS integer[])), unnest(CAST(:jobs AS bigint[]))
            ON CONFLICT (bucket, partition) DO UPDATE SET jobs = partition_load.jobs + excluded.jobs
            """;

    /** The jobs each partition brought within the window (the primary key's bucket order serves it). */
    static final String LOADS = """
            SELECT partition, sum(jobs) AS jobs
            FROM ${schema}.partition_load
            WHERE bucket >= statement_timestamp() - CAST(:windowMillis AS bigint) * interval '1 millisecond'
            GROUP BY partition
            """;

    /** Forgets buckets older than the window. */
    static final String PRUNE_LOAD = """
            DELETE FROM ${schema}.partition_load
            WHERE bucket < statement_timestamp() - CAST(:windowMillis AS bigint) * interval '1 millisecond'
            """;

    /**
     * Takes or keeps the balancer's lease: a node gets it when nobody holds it or the holder's lease
     * ran out, and keeps it by renewing it in time. A row comes back only to the holder.
     */
    static final String LEAD = """
            INSERT INTO ${schema}.balancer_leader (node, until)
            VALUES (:node, statement_timestamp() + CAST(:leaseMillis AS bigint) * interval '1 millisecond')
            ON CONFLICT (singleton) DO UPDATE SET node = excluded.node, until = excluded.until
            WHERE balancer_leader.node = excluded.node OR balancer_leader.until < statement_timestamp()
            RETURNING node
            """;

    /** Gives the lease up (a node that stops). */
    static final String RESIGN = """
            DELETE FROM ${schema}.balancer_leader WHERE node = :node
            """;

    /** The lease's holder and how long it holds it. */
    static final String LEADER = """
            SELECT node, until FROM ${schema}.balancer_leader
            """;

    /** Records a decided move, before it is carried out. */
    static final String RECORD_DECISION = """
            INSERT INTO ${schema}.balancer_decision (node, reason, partition, source, target, weight, gini_before, gini_after)
            VALUES (:node, :reason, :partition, :source, :target, :weight, :giniBefore, :giniAfter)
            RETURNING id
            """;

    /** Records how a decided move ended. */
    static final String FINISH_DECISION = """
            UPDATE ${schema}.balancer_decision SET outcome = :outcome, error = :error, finished_at = statement_timestamp()
            WHERE id = :id
            """;

    /** The latest decisions (balancer_decision_recent_idx). */
    static final String RECENT_DECISIONS = """
            SELECT id, decided_at, node, reason, partition, source, target, weight, gini_before, gini_after, outcome,
                   error, finished_at
            FROM ${schema}.balancer_decision
            ORDER BY decided_at DESC, id DESC
            LIMIT :limit
            """;

    /** Moves decided within the friction window that did not fail: a new leader counts them. */
    static final String MOVES_SINCE = """
            SELECT partition, decided_at FROM ${schema}.balancer_decision
            WHERE decided_at >= statement_timestamp() - CAST(:windowMillis AS bigint) * interval '1 millisecond'
              AND outcome IS DISTINCT FROM 'FAILED'
            ORDER BY decided_at
            """;

    /** Forgets decisions older than the retention. */
    static final String PRUNE_DECISIONS = """
            DELETE FROM ${schema}.balancer_decision
            WHERE decided_at < statement_timestamp() - CAST(:retentionMillis AS bigint) * interval '1 millisecond'
            """;

    /** Starts or stops draining a shard; nothing if there is no such shard. */
    static final String SET_DRAINING = """
            UPDATE ${schema}.shard SET draining = :draining WHERE name = :name
            """;

    /** The shards being drained. */
    static final String DRAINING = """
            SELECT name FROM ${schema}.shard WHERE draining ORDER BY name
            """;
}
