package io.pgqueue.internal.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.dao.DataAccessResourceFailureException;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Partitions and shards on one database: on every shard, its identity and the partitions it
 * holds; on the coordinating shard, the shard registry and the partition map. Internal API; its
 * SQL is in {@link PartitionStatements}.
 * <p>
 * One store for the partition tables because a move's steps (journal, fence, copy, flip) run
 * against the same rows and must take their locks in one order.
 */
public final class PartitionStore {

    /** Bits of a job id below the shard number: each shard numbers its jobs from {@code number << 48}. */
    public static final int ID_RANGE_BITS = 48;

    private final NamedParameterJdbcTemplate jdbc;

    private final TransactionTemplate transactions;

    private final String schema;

    /**
     * Creates a store.
     * @param dataSource the database
     * @param config the queue's settings
     */
    public PartitionStore(DataSource dataSource, QueueConfig config) {
        this.jdbc = StoreSupport.jdbc(dataSource, config);
        this.transactions = new TransactionTemplate(new DataSourceTransactionManager(dataSource));
        this.schema = config.schema();
    }

    private String sql(String statement) {
        return StoreSupport.sql(statement, this.schema);
    }

    /**
     * The database's installation row.
     * @param id the installation's id (on a shard: the coordinating shard's)
     * @param partitions the partition count
     * @param shardName the shard's name, {@code null} before it is registered
     * @param shardNumber the shard's number, {@code null} before it is registered
     */
    public record Installation(UUID id, int partitions, String shardName, Integer shardNumber) {
    }

    /**
     * One partition's place in the map.
     * @param partition the partition
     * @param shard the shard that holds it
     * @param moving whether it is moving
     * @param target the shard it moves to, {@code null} unless moving
     */
    public record MapEntry(int partition, String shard, boolean moving, String target) {
    }

    /**
     * The partition map as read at one moment.
     * @param version its version
     * @param entries one per partition, in partition order
     */
    public record MapRows(long version, List<MapEntry> entries) {
    }

    /** @return the database's installation row */
    public Installation installation() {
        return this.jdbc.queryForObject(sql(PartitionStatements.INSTALLATION), Map.of(),
                (rs, row) -> new Installation(rs.getObject("id", UUID.class), rs.getInt("partitions"),
                        rs.getString("shard_name"), (Integer) rs.getObject("shard_number")));
    }

    /**
     * Sets the database's partition count, if it differs and the database has never held a job nor
     * a partition map (a new installation, or a shard about to join one).
     * @param partitions the partition count
     * @return whether the database now records that count
     */
    public boolean adoptPartitionCount(int partitions) {
        this.jdbc.update(sql(PartitionStatements.ADOPT_PARTITION_COUNT), new MapSqlParameterSource("partitions", partitions));
        return installation().partitions() == partitions;
    }

    /**
     * Runs work in a transaction on this database that holds the topology lock: shard registrations
     * and the creation of the map are serialized across nodes.
     * @param <T> the result type
     * @param work the work
     * @return its result
     */
    public <T> T withTopologyLock(Supplier<T> work) {
        return this.transactions.execute(status -> {
            this.jdbc.getJdbcTemplate().query(sql(PartitionStatements.LOCK_TOPOLOGY), rs -> {
            });
            return work.get();
        });
    }

    /**
     * Registers shards that are not registered yet, numbering them in the given order after the
     * registered ones. Call it under {@link #withTopologyLock}.
     * @param names the shards' names
     * @return every registered shard's number, by name, in number order
     */
    public Map<String, Integer> registerShards(List<String> names) {
        for (String name : names) {
            this.jdbc.update(sql(PartitionStatements.REGISTER_SHARD), new MapSqlParameterSource("name", name));
        }
        Map<String, Integer> shards = new LinkedHashMap<>();
        this.jdbc.query(sql(PartitionStatements.SHARDS), Map.of(),
                rs -> {
                    shards.put(rs.getString("name"), rs.getInt("number"));
                });
        return shards;
    }

    /**
     * Makes this database a shard of an installation, unless it already is one of another
     * installation or under another name.
     * @param installation the installation's id
     * @param name the shard's name
     * @param number the shard's number
     * @return whether the database is now that shard
     */
    public boolean claimIdentity(UUID installation, String name, int number) {
        return this.jdbc.update(sql(PartitionStatements.CLAIM_SHARD_IDENTITY), new MapSqlParameterSource()
            .addValue("installation", installation.toString())
            .addValue("name", name)
            .addValue("number", number)) == 1;
    }

    /**
     * Moves the job and message id sequences into the shard's id range, unless they are there already.
     * @param number the shard's number
     */
    public void enterIdRange(int number) {
        MapSqlParameterSource start = new MapSqlParameterSource("start", ((long) number) << ID_RANGE_BITS);
        this.jdbc.query(sql(PartitionStatements.ENTER_ID_RANGE), start, rs -> {
        });
        this.jdbc.query(sql(PartitionStatements.ENTER_MESSAGE_ID_RANGE), start, rs -> {
        });
    }

    /** @return whether the database holds active jobs */
    public boolean hasActiveJobs() {
        return Boolean.TRUE.equals(this.jdbc.queryForObject(sql(PartitionStatements.HAS_ACTIVE_JOBS), Map.of(),
                Boolean.class));
    }

    /** @return the partitions the shard holds, with whether each is moving */
    public Map<Integer, Boolean> heldPartitions() {
        Map<Integer, Boolean> held = new LinkedHashMap<>();
        this.jdbc.query(sql(PartitionStatements.HELD_PARTITIONS), Map.of(), rs -> {
            held.put(rs.getInt("partition"), "MOVING".equals(rs.getString("state")));
        });
        return held;
    }

    /**
     * Lets the shard hold exactly these partitions ACTIVE, giving up any other. Only while no
     * partition map exists, when no job can have been written to a partition yet.
     * @param partitions the partitions
     */
    public void holdExactly(Collection<Integer> partitions) {
        this.transactions.executeWithoutResult(status -> {
            MapSqlParameterSource params = new MapSqlParameterSource("partitions", SqlArrays.ints(partitions));
            this.jdbc.update(sql(PartitionStatements.RELEASE_PARTITIONS_EXCEPT), params);
            this.jdbc.update(sql(PartitionStatements.HOLD_PARTITIONS), params);
        });
    }

    /** @return whether the schema has partitions (version 10 on) */
    public boolean partitioned() {
        return Boolean.TRUE.equals(this.jdbc.queryForObject(sql(PartitionStatements.MAP_TABLE_EXISTS), Map.of(),
                Boolean.class));
    }

    /** @return whether the partition map exists (false too in a schema older than version 10) */
    public boolean mapExists() {
        return partitioned() && Boolean.TRUE.equals(this.jdbc.queryForObject(sql(PartitionStatements.MAP_EXISTS), Map.of(),
                        Boolean.class));
    }

    /**
     * Creates the partition map and raises its version. Call it under {@link #withTopologyLock}.
     * @param shardOfPartition the shard of each partition, in partition order
     * @return the map's new version
     */
    public long createMap(List<String> shardOfPartition) {
        this.jdbc.update(sql(PartitionStatements.CREATE_MAP),
                new MapSqlParameterSource("shards", SqlArrays.texts(shardOfPartition)));
        return bumpMapVersion();
    }

    private long bumpMapVersion() {
        return this.jdbc.queryForObject(sql(PartitionStatements.BUMP_MAP_VERSION),
                new MapSqlParameterSource("channel", mapChannel()), (rs, row) -> rs.getLong("version"));
    }

    /** @return the version of the partition map */
    public long mapVersion() {
        return this.jdbc.queryForObject(sql(PartitionStatements.MAP_VERSION), Map.of(), Long.class);
    }

    /** @return the partition map, with its version */
    public MapRows map() {
        List<MapEntry> entries = new ArrayList<>();
        long[] version = {0};
        this.jdbc.query(sql(PartitionStatements.MAP), Map.of(), rs -> {
            version[0] = rs.getLong("version");
            entries.add(new MapEntry(rs.getInt("partition"), rs.getString("shard"), "MOVING".equals(rs.getString("state")),
                    rs.getString("target")));
        });
        return new MapRows(entries.isEmpty() ? mapVersion() : version[0], entries);
    }

    /** @return the channel on which every change of the partition map is announced */
    public String mapChannel() {
        return this.schema + ".partition_map";
    }

    /**
     * A move in progress, as journaled on the main shard.
     * @param partition the partition
     * @param source the shard it leaves
     * @param target the shard it goes to
     * @param switched whether the target holds it already (the map says so); else its jobs are leaving the source
     */
    public record Move(int partition, String source, String target, boolean switched) {
    }

    /**
     * A partition's active jobs on one shard.
     * @param ready READY ones
     * @param claimed STARTING or RUNNING ones
     */
    public record PartitionJobs(long ready, long claimed) {
    }

    /** @return the moves in progress (on the main shard) */
    public List<Move> moves() {
        return this.jdbc.query(sql(PartitionStatements.MOVES), Map.of(), (rs, row) -> new Move(rs.getInt("partition"),
                rs.getString("source"), rs.getString("target"), "SWITCHED".equals(rs.getString("step"))));
    }

    /**
     * Journals a move and marks the partition MOVING in the map, raising its version (on the main shard).
     * @return whether the partition was ACTIVE on the source, and so the move began
     */
    public boolean beginMove(int partition, String source, String target) {
        return Boolean.TRUE.equals(this.transactions.execute(status -> {
            MapSqlParameterSource params = new MapSqlParameterSource("partition", partition).addValue("source", source)
                .addValue("target", target);
            if (this.jdbc.update(sql(PartitionStatements.MARK_MAP_MOVING), params) != 1) {
                status.setRollbackOnly();
                return false;
            }
            this.jdbc.update(sql(PartitionStatements.BEGIN_MOVE), params);
            bumpMapVersion();
            return true;
        }));
    }

    /** Places a moving partition on its target in the map, journals the switch and raises the version (on the main shard). */
    public void switchMove(int partition, String target) {
        this.transactions.executeWithoutResult(status -> {
            MapSqlParameterSource params = new MapSqlParameterSource("partition", partition).addValue("target", target);
            this.jdbc.update(sql(PartitionStatements.SWITCH_MAP), params);
            this.jdbc.update(sql(PartitionStatements.MOVE_SWITCHED), params);
            bumpMapVersion();
        });
    }

    /** Ends a move's journal (on the main shard). */
    public void finishMove(int partition) {
        this.jdbc.update(sql(PartitionStatements.FINISH_MOVE), new MapSqlParameterSource("partition", partition));
    }

    /**
     * Takes the lock a node holds while it moves a partition, on a connection of its own that
     * keeps it until closed (or until the node dies).
     * @param partition the partition
     * @return the lock, or empty if another node moves the partition
     */
    public Optional<AutoCloseable> tryLockMove(int partition) {
        DataSource dataSource = this.jdbc.getJdbcTemplate().getDataSource();
        try {
            Connection connection = dataSource.getConnection();
            try (PreparedStatement statement = connection.prepareStatement(
                    sql(PartitionStatements.TRY_MOVE_LOCK).replace(":partition", "?"))) {
                statement.setInt(1, partition);
                try (ResultSet rs = statement.executeQuery()) {
                    if (rs.next() && rs.getBoolean(1)) {
                        // Closing the connection hands it back to the pool: unlock first.
                        return Optional.of(() -> {
                            try (connection; Statement unlock = connection.createStatement()) {
                                unlock.execute("SELECT pg_advisory_unlock_all()");
                            }
                        });
                    }
                }
            }
            connection.close();
            return Optional.empty();
        }
        catch (SQLException ex) {
            throw new DataAccessResourceFailureException("Could not take the move lock of partition "
                    + partition, ex);
        }
    }

    /**
     * Stops the shard writing jobs of a partition: waits for the enqueues in flight on it, then
     * marks it MOVING. Idempotent.
     */
    public void markMoving(int partition) {
        this.transactions.executeWithoutResult(status -> {
            MapSqlParameterSource params = new MapSqlParameterSource("partition", partition);
            this.jdbc.query(sql(PartitionStatements.LOCK_HELD_PARTITION), params, rs -> {
            });
            this.jdbc.update(sql(PartitionStatements.MARK_HELD_MOVING), params);
        });
    }

    /** Lets the shard hold a partition ACTIVE. */
    public void holdActive(int partition) {
        this.jdbc.update(sql(PartitionStatements.HOLD_ACTIVE), new MapSqlParameterSource("partition", partition));
    }

    /** Gives a partition up. */
    public void release(int partition) {
        this.jdbc.update(sql(PartitionStatements.RELEASE_PARTITION), new MapSqlParameterSource("partition", partition));
    }

    /**
     * Stages one batch of a partition's READY jobs for a move.
     * @return how many jobs it took
     */
    public int stageBatch(int partition, int limit) {
        return this.jdbc.update(sql(PartitionStatements.STAGE_BATCH),
                new MapSqlParameterSource("partition", partition).addValue("limit", limit));
    }

    /** @return the batches of a partition staged on this shard, oldest first */
    public List<Long> stagedBatches(int partition) {
        return this.jdbc.queryForList(sql(PartitionStatements.STAGED_BATCHES), new MapSqlParameterSource("partition",
                partition), Long.class);
    }

    /** @return a staged batch's job rows as a JSON array */
    public String stagedBatch(int partition, long batch) {
        return this.jdbc.queryForObject(sql(PartitionStatements.STAGED_BATCH),
                new MapSqlParameterSource("partition", partition).addValue("batch", batch), String.class);
    }

    /** Drops a batch its target has written. */
    public void dropBatch(int partition, long batch) {
        this.jdbc.update(sql(PartitionStatements.DROP_BATCH),
                new MapSqlParameterSource("partition", partition).addValue("batch", batch));
    }

    /**
     * Writes a staged batch on this shard (the target), once.
     * @param source the source shard's number
     * @param batch the batch
     * @param partition the partition
     * @param rows the batch's job rows as a JSON array
     * @param channelPrefix the prefix of the tasks' NOTIFY channels
     * @return the jobs written, or -1 if the batch was written before
     */
    public long applyBatch(int source, long batch, int partition, String rows, String channelPrefix) {
        return this.jdbc.queryForObject(sql(PartitionStatements.APPLY_BATCH), new MapSqlParameterSource("source", source)
            .addValue("batch", batch)
            .addValue("partition", partition)
            .addValue("rows", rows)
            .addValue("channelPrefix", channelPrefix),
                (rs, row) -> rs.getBoolean("applied") ? rs.getLong("inserted") : -1L);
    }

    /** @return a partition's active jobs on this shard */
    public PartitionJobs partitionJobs(int partition) {
        return this.jdbc.queryForObject(sql(PartitionStatements.PARTITION_JOBS), new MapSqlParameterSource("partition",
                partition), (rs, row) -> new PartitionJobs(rs.getLong("ready"), rs.getLong("claimed")));
    }

    /** @return the outbox rows of a partition relayed to this shard whose marks are kept */
    public List<Long> relayedMarks(int partition) {
        return this.jdbc.queryForList(sql(PartitionStatements.RELAYED_MARKS), new MapSqlParameterSource("partition",
                partition), Long.class);
    }

    /** Keeps relay marks of a partition's outbox rows here too. */
    public void copyRelayedMarks(int partition, List<Long> outboxIds) {
        if (!outboxIds.isEmpty()) {
            this.jdbc.update(sql(PartitionStatements.COPY_RELAYED_MARKS), new MapSqlParameterSource("partition", partition)
                .addValue("ids", SqlArrays.bigints(outboxIds)));
        }
    }

    /**
     * FAILED jobs read off a shard to be brought to another.
     * @param ids their ids, ascending
     * @param rows their rows, as a JSON array
     */
    public record FailedJobs(List<Long> ids, String rows) {
    }

    /**
     * Reads a partition's FAILED jobs after an id.
     * @param partition the partition
     * @param after the id to read after ({@code -1} for all)
     * @param limit how many at most
     * @return the jobs, oldest first
     */
    public FailedJobs failedJobs(int partition, long after, int limit) {
        return readFailed(PartitionStatements.FAILED_JOBS, new MapSqlParameterSource("partition", partition)
            .addValue("after", after)
            .addValue("limit", limit));
    }

    /**
     * Reads one FAILED job.
     * @param id the job
     * @return the job, or none if it is not here or not FAILED
     */
    public FailedJobs failedJob(long id) {
        return readFailed(PartitionStatements.FAILED_JOB, new MapSqlParameterSource("id", id));
    }

    private FailedJobs readFailed(String statement, MapSqlParameterSource params) {
        return this.jdbc.queryForObject(sql(statement), params, (rs, row) -> new FailedJobs(
                List.of((Long[]) rs.getArray("ids").getArray()), rs.getString("rows")));
    }

    /**
     * Writes finished jobs read off another shard, as they were there; a job written before is left.
     * @param jobs the jobs
     */
    public void writeFinished(FailedJobs jobs) {
        if (!jobs.ids().isEmpty()) {
            this.jdbc.update(sql(PartitionStatements.WRITE_FINISHED), new MapSqlParameterSource("rows", jobs.rows()));
        }
    }

    /**
     * Drops FAILED jobs another shard holds now.
     * @param ids the jobs
     */
    public void dropFailed(List<Long> ids) {
        if (!ids.isEmpty()) {
            this.jdbc.update(sql(PartitionStatements.DROP_FAILED), new MapSqlParameterSource("ids", SqlArrays.bigints(ids)));
        }
    }
}
