package io.pgqueue.store;

/**
 * The SQL of partitions and shards (tables {@code installation}, {@code shard_partition},
 * {@code shard}, {@code partition_map}, {@code partition_map_version}), one named statement per
 * operation. {@code ${schema}} stands for the validated queue schema.
 */
final class PartitionStatements {

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
}
