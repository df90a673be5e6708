package io.pgqueue.store;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;

import javax.sql.DataSource;

import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Partitions and shards on one database: on every shard, its identity and the partitions it
 * holds; on the coordinating shard, the shard registry and the partition map. Internal API; its
 * SQL is in {@link PartitionStatements}.
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
     * Moves the job id sequence into the shard's id range, unless it is there already.
     * @param number the shard's number
     */
    public void enterIdRange(int number) {
        this.jdbc.query(sql(PartitionStatements.ENTER_ID_RANGE),
                new MapSqlParameterSource("start", ((long) number) << ID_RANGE_BITS), rs -> {
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

    /** @return whether the partition map exists (false too in a schema older than version 10) */
    public boolean mapExists() {
        return Boolean.TRUE.equals(this.jdbc.queryForObject(sql(PartitionStatements.MAP_TABLE_EXISTS), Map.of(),
                Boolean.class))
                && Boolean.TRUE.equals(this.jdbc.queryForObject(sql(PartitionStatements.MAP_EXISTS), Map.of(),
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
}
