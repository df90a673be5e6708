package io.pgqueue.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;

import javax.sql.DataSource;

import io.pgqueue.PgQueue;
import io.pgqueue.QueueAdmin;
import io.pgqueue.QueueAdminException;
import io.pgqueue.QueueDefaults;
import io.pgqueue.autoconfigure.QueueShards;
import io.pgqueue.shard.PartitionMoveResult;
import io.pgqueue.shard.ShardLayout;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * With {@code faults.role=mover}, moves partitions between the shards in a loop until the process
 * ends, as an operator does with {@link QueueAdmin#movePartition(int, String)}: each time one of
 * the partitions holding the most queued (READY) jobs and message-queue messages and not moving,
 * to another shard picked at random.
 * <p>
 * Each move is recorded in {@code <node>-<pid>.moves} in {@code faults.record-dir}:
 * {@code M <partition> <source> <target> <epoch millis>} before it starts,
 * {@code D <partition> <jobs moved> <epoch millis>} once it returned, and
 * {@code X <partition> <epoch millis> <reason>} when it was refused (another node moves the
 * partition, or finishes a move of it) or failed. A move with an {@code M} line and no other was
 * cut short.
 */
@Component
@ConditionalOnProperty(name = "faults.role", havingValue = "mover")
class FaultMover implements ApplicationRunner {

    /** Queued jobs and messages per partition, for the shard the move would leave. */
    private static final String QUEUED_PER_PARTITION = """
            SELECT partition, count(*) AS queued FROM (
                SELECT partition FROM %1$s.job WHERE state = 'READY'
                UNION ALL
                SELECT partition FROM %1$s.message WHERE partition IS NOT NULL) AS queued
            GROUP BY partition ORDER BY queued DESC LIMIT 4""";

    private final PgQueue queue;

    private final QueueAdmin admin;

    private final QueueShards shards;

    private final RecordFile file;

    @Value("${faults.mover.pause:100ms}")
    private Duration pause;

    FaultMover(PgQueue queue, QueueAdmin admin, QueueShards shards, @Value("${pgqueue.node-id}") String node,
            @Value("${faults.record-dir}") Path directory) {
        this.queue = queue;
        this.shards = shards;
        this.admin = admin;
        this.file = new RecordFile(directory.resolve(node + "-" + ProcessHandle.current().pid() + ".moves"));
    }

    @Override
    public void run(ApplicationArguments args) throws InterruptedException {
        while (!Thread.currentThread().isInterrupted()) {
            moveOne();
            Thread.sleep(this.pause.toMillis());
        }
    }

    private void moveOne() {
        Map<String, DataSource> databases = new LinkedHashMap<>();
        databases.put(QueueDefaults.MAIN_SHARD, this.queue.dataSource());
        databases.putAll(this.shards.dataSources());
        // Per candidate: its partition, its queued jobs and the shard they are on.
        List<Candidate> candidates = new ArrayList<>();
        databases.forEach((shard, dataSource) -> new JdbcTemplate(dataSource)
            .query(QUEUED_PER_PARTITION.formatted(this.queue.config().schema()),
                    rs -> {
                        candidates.add(new Candidate(rs.getInt("partition"), rs.getLong("queued"), shard));
                    }));
        // A moving partition is another node's move, or one whose node died: any node finishes that.
        ShardLayout layout = this.admin.shards();
        Set<Integer> moving = layout.moving().stream().map(ShardLayout.Move::partition).collect(Collectors.toSet());
        candidates.removeIf(candidate -> moving.contains(candidate.partition()));
        if (candidates.isEmpty()) {
            return;
        }
        candidates.sort(Comparator.comparingLong(Candidate::queued).reversed());
        ThreadLocalRandom random = ThreadLocalRandom.current();
        Candidate picked = candidates.get(random.nextInt(Math.min(4, candidates.size())));
        int partition = picked.partition();
        String source = picked.shard();
        List<String> targets = layout.names().stream().filter(name -> !name.equals(source)).toList();
        String target = targets.get(random.nextInt(targets.size()));
        this.file.append("M " + partition + " " + source + " " + target + " " + System.currentTimeMillis());
        try {
            PartitionMoveResult result = this.admin.movePartition(partition, target);
            this.file.append("D " + partition + " " + result.jobsMoved() + " " + System.currentTimeMillis());
        }
        catch (QueueAdminException ex) {
            this.file.append("X " + partition + " " + System.currentTimeMillis() + " " + ex.getMessage());
        }
        catch (RuntimeException ex) {
            // A shard out of reach or a partition that did not settle in time: the next round tries another.
            this.file.append("X " + partition + " " + System.currentTimeMillis() + " " + ex);
        }
    }

    /** A partition with queued jobs on a shard. */
    private record Candidate(int partition, long queued, String shard) {
    }
}
