package io.pgqueue.faults;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Where a sharded run's jobs are, read from every shard at once after the run: each job's places
 * (a shard's job table, its finished jobs, or its {@code job_moving}), the partition map on the main
 * shard, the partitions each shard holds, and what the outbox and the move journal still hold.
 */
final class ShardLayout {

    /** Job id → the places it is in, as {@code <shard>.<table>}. */
    final Map<Long, List<String>> places = new HashMap<>();

    /** Job id → its partition, from wherever it is. */
    final Map<Long, Integer> partitions = new HashMap<>();

    /** Partition → shard, by the map. */
    final Map<Integer, String> map = new TreeMap<>();

    /** Partitions the map says are moving. */
    final List<Integer> moving = new ArrayList<>();

    /** Shard → partition → state ({@code ACTIVE}, {@code MOVING}) it holds. */
    final Map<String, Map<Integer, String>> held = new HashMap<>();

    final long outbox;

    final long journaledMoves;

    long staged;

    private ShardLayout(long outbox, long journaledMoves) {
        this.outbox = outbox;
        this.journaledMoves = journaledMoves;
    }

    static ShardLayout read(FaultRun run) {
        JdbcTemplate main = run.shards.get("main");
        ShardLayout layout = new ShardLayout(count(main, "pgqueue.job_outbox"), count(main, "pgqueue.partition_move"));
        main.query("SELECT partition, shard, state FROM pgqueue.partition_map", rs -> {
            layout.map.put(rs.getInt(1), rs.getString(2));
            if (!"ACTIVE".equals(rs.getString(3))) {
                layout.moving.add(rs.getInt(1));
            }
        });
        run.shards.forEach((name, shard) -> {
            Map<Integer, String> held = new HashMap<>();
            shard.query("SELECT partition, state FROM pgqueue.shard_partition", rs -> {
                held.put(rs.getInt(1), rs.getString(2));
            });
            layout.held.put(name, held);
            layout.staged += count(shard, "pgqueue.job_moving");
            shard.query("""
                    SELECT 'job', id, partition FROM pgqueue.job
                    UNION ALL SELECT 'job_finished', id, partition FROM pgqueue.job_finished
                    UNION ALL SELECT 'job_moving', CAST(job ->> 'id' AS bigint), partition FROM pgqueue.job_moving""",
                    rs -> {
                        long id = rs.getLong(2);
                        layout.places.computeIfAbsent(id, any -> new ArrayList<>()).add(name + "." + rs.getString(1));
                        layout.partitions.put(id, rs.getInt(3));
                    });
        });
        return layout;
    }

    private static long count(JdbcTemplate jdbc, String table) {
        return jdbc.queryForObject("SELECT count(*) FROM " + table, Long.class);
    }

    /** @return jobs found in more than one place, with their places */
    Map<Long, List<String>> inMoreThanOnePlace() {
        Map<Long, List<String>> twice = new TreeMap<>();
        this.places.forEach((id, where) -> {
            if (where.size() > 1) {
                twice.put(id, where);
            }
        });
        return twice;
    }

    /** @return jobs on a shard other than the one the map places their partition on, with their places */
    Map<Long, List<String>> offTheirShard() {
        Map<Long, List<String>> off = new TreeMap<>();
        this.places.forEach((id, where) -> {
            String shard = this.map.get(this.partitions.get(id));
            if (where.stream().anyMatch(place -> !place.startsWith(shard + "."))) {
                off.put(id, where);
            }
        });
        return off;
    }

    /**
     * @return partitions the map and the shards disagree on: the shard the map names does not hold
     * it ACTIVE, or another shard holds it too
     */
    List<String> mapDisagreements() {
        List<String> disagreements = new ArrayList<>();
        this.map.forEach((partition, shard) -> {
            this.held.forEach((name, held) -> {
                String state = held.get(partition);
                if (name.equals(shard) && !"ACTIVE".equals(state)) {
                    disagreements.add(partition + " on " + shard + " by the map, held there " + state);
                }
                else if (!name.equals(shard) && state != null) {
                    disagreements.add(partition + " on " + shard + " by the map, held by " + name + " " + state);
                }
            });
        });
        return disagreements;
    }
}
