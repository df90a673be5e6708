package io.pgqueue.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.stream.Collectors;

import io.pgqueue.QueueDefaults;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;

import static io.pgqueue.faults.FaultRun.FULL;
import static io.pgqueue.faults.FaultRun.SLACK;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static io.pgqueue.faults.Findings.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A sharded installation — the nodes' database as the main shard and two more, {@code b} and
 * {@code c}, on the {@link FaultServer} — whose two crash-sensitive mechanisms are killed -9 inside
 * their critical windows while a producer enqueues in transactions and two worker nodes run the
 * jobs: the outbox relay between a shard's commit and the outbox's, and a partition move between
 * its steps. The producer records which of its transactions committed ({@link FaultProducer}); each
 * scenario checks against that record, the recorder and every shard's tables that every committed
 * job ran exactly once (a re-run only after a lease, with the next attempt), nothing of a
 * rolled-back transaction exists, a transaction cut short by a kill exists entirely or not at all,
 * every job is in exactly one place, and the shards agree with the partition map. Figures go to the
 * report as in {@link FaultScenariosIT}.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ShardFaultScenariosIT {

    private static final List<String> SHARDS = List.of("b", "c");

    private static final List<String> WORKERS = List.of("node-a", "node-b");

    private static final String[] MOVER = {"--faults.role=mover", "--pgqueue.workers.enabled=false"};

    /**
     * The nodes' JIT stops at its first tier: the scenarios start nodes again and again on two
     * cores, and their loads are light.
     */
    private static final List<String> QUICK_START = List.of("-XX:TieredStopAtLevel=1");

    /** Rows a dead relay left are relayed by another node, which looks every relay interval; a second to do it. */
    private static final long RELAY_BOUND = QueueDefaults.OUTBOX_RELAY_INTERVAL.toMillis() + 1000;

    /** A stranded move is resumed at a node's next look, every resume interval; two seconds to finish it. */
    private static final long RESUME_BOUND = QueueDefaults.MOVE_RESUME_INTERVAL.toMillis() + 2000;

    /**
     * Whether the producer's relay is inside a batch: its transaction on the main shard is open with
     * the outbox rows locked (1), and a shard already committed its part of the batch (2).
     */
    private static final String RELAY_WINDOW = """
            SELECT coalesce(max(CASE WHEN EXISTS (
                       SELECT 1 FROM pg_stat_activity s
                       WHERE s.datname <> m.datname AND s.application_name = m.application_name
                         AND s.state = 'idle' AND s.query = 'COMMIT' AND s.state_change > m.xact_start)
                   THEN 2 ELSE 1 END), 0)
            FROM pg_stat_activity m
            WHERE m.datname = ? AND m.application_name = 'producer' AND m.state = 'idle in transaction'
              AND m.query LIKE '%job_outbox%SKIP LOCKED%'""";

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    @Order(1)
    void killNineOfTheOutboxRelayMidBatch() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_relay", SHARDS)) {
            run.jvmOptions = QUICK_START;
            String[] producer = producer(FULL ? 60 : 40, 0, 0);
            List<WorkerNode> starting = new ArrayList<>(run.launch(WORKERS, "--pgqueue.tasks.record.concurrency=4"));
            starting.addAll(run.launch(List.of("producer"), producer));
            starting.forEach(WorkerNode::awaitStarted);
            int kills = FULL ? 12 : 3;
            List<RelayKill> relayKills = new ArrayList<>();
            while (true) {
                sleep(ThreadLocalRandom.current().nextLong(FULL ? 1000 : 500, FULL ? 4000 : 1500));
                RelayKill kill = killRelayMidBatch(run);
                // At least one kill must strike between a shard's commit and the outbox's: up to twice as many.
                boolean struck = kill.writtenNotCleared > 0
                        || relayKills.stream().anyMatch(each -> each.writtenNotCleared > 0);
                boolean more = relayKills.size() + 1 < 2 * kills && (relayKills.size() + 1 < kills || !struck);
                if (more) {
                    run.launch(List.of("producer"), producer);
                }
                relayKills.add(kill.relayedIn(awaitRelayed(run, kill)));
                if (!more) {
                    break;
                }
                run.node("producer").awaitStarted();
            }
            LedgerCheck.awaitSettled(run);

            EnqueueLedger ledger = EnqueueLedger.read(run.records());
            ShardLayout layout = ShardLayout.read(run);
            LedgerCheck checked = LedgerCheck.of("kill -9 of the outbox relay mid-batch (3 shards)", run, ledger, layout);
            Findings findings = checked.findings();
            long struck = relayKills.stream().filter(kill -> kill.writtenNotCleared > 0).count();
            long slowest = relayKills.stream().mapToLong(kill -> kill.relayedIn).max().orElseThrow();
            findings.note("%d kills of the producer's node, each within %d ms of seeing its relay's transaction open "
                    + "with outbox rows locked; %d struck after a shard committed part of the batch and before the "
                    + "outbox was cleared (%d rows left written but not cleared, none written again); %d rows left in "
                    + "the outbox in all, relayed by the other nodes within %s of a kill (bound %s)", relayKills.size(),
                    relayKills.stream().mapToLong(kill -> kill.seenBefore).max().orElseThrow(), struck,
                    relayKills.stream().mapToInt(kill -> kill.writtenNotCleared).sum(),
                    relayKills.stream().mapToInt(kill -> kill.left).sum(), seconds(0, slowest), seconds(0, RELAY_BOUND));
            findings.report();

            checked.assertCommittedJobsRanOnceAndNothingElse(layout);
            assertThat(layout.offTheirShard()).as("jobs off the shard the map places their partition on").isEmpty();
            assertThat(struck).as("kills between a shard's commit and the outbox's").isPositive();
            assertThat(slowest).isLessThan(RELAY_BOUND + SLACK);
        }
    }

    @Test
    @Order(2)
    void killNineOfAPartitionMoverMidMove() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_move", SHARDS)) {
            run.jvmOptions = QUICK_START;
            run.startNodes(WORKERS, "--pgqueue.tasks.record.concurrency=4");
            // Few keys, half the jobs a few seconds ahead: partitions hold queued jobs for the mover to take along.
            List<WorkerNode> starting = new ArrayList<>(run.launch(List.of("producer"), producer(FULL ? 60 : 30, 48, 0.5)));
            starting.addAll(run.launch(List.of("mover"), MOVER));
            starting.forEach(WorkerNode::awaitStarted);
            int kills = FULL ? 12 : 3;
            List<MoveKill> moveKills = new ArrayList<>();
            while (true) {
                sleep(ThreadLocalRandom.current().nextLong(FULL ? 1000 : 300, FULL ? 4000 : 1200));
                MoveKill kill = killMoverMidMove(run);
                // At least one kill must leave a move journaled: up to twice as many.
                boolean struck = kill.step != null || moveKills.stream().anyMatch(each -> each.step != null);
                boolean more = moveKills.size() + 1 < 2 * kills && (moveKills.size() + 1 < kills || !struck);
                if (more) {
                    // It leaves moving partitions alone, and looks for stranded moves only a resume
                    // interval after it started: the surviving nodes finish the stranded move.
                    run.launch(List.of("mover"), MOVER);
                }
                moveKills.add(awaitResumed(run, kill));
                if (!more) {
                    break;
                }
                run.node("mover").awaitStarted();
            }
            // The producer stops too; the workers relay what it left in the outbox.
            run.node("producer").kill();
            LedgerCheck.awaitSettled(run);

            EnqueueLedger ledger = EnqueueLedger.read(run.records());
            ShardLayout layout = ShardLayout.read(run);
            LedgerCheck checked = LedgerCheck.of("kill -9 of a partition mover mid-move (3 shards)", run, ledger, layout);
            Findings findings = checked.findings();
            Moves moves = Moves.read(run.records());
            List<MoveKill> struck = moveKills.stream().filter(kill -> kill.step != null).toList();
            long slowest = struck.stream().mapToLong(kill -> kill.resumedIn).max().orElse(-1);
            findings.note("%d moves done, median %d ms, longest %d ms; %d kills, %d mid-move (%s), each resumed by a "
                    + "surviving node (%s) within %s of the kill (bound %s); the map and every shard agree, no "
                    + "partition MOVING, job_moving empty", moves.durations.size(), moves.percentile(0.5),
                    moves.percentile(1), moveKills.size(), struck.size(), struck.stream().map(kill -> kill.describe(moves))
                        .collect(Collectors.joining(", ")),
                    struck.stream().map(kill -> kill.resumedBy).distinct().collect(Collectors.joining(", ")),
                    seconds(0, slowest), seconds(0, RESUME_BOUND));
            findings.report();

            checked.assertCommittedJobsRanOnceAndNothingElse(layout);
            assertThat(struck).as("kills that left a move journaled").isNotEmpty();
            assertThat(struck).allSatisfy(kill -> assertThat(kill.resumedBy).as("node that resumed")
                .isIn("node-a", "node-b", "producer"));
            assertThat(slowest).isLessThan(RESUME_BOUND + SLACK);
            assertThat(layout.moving).as("partitions left MOVING").isEmpty();
            assertThat(layout.staged).as("jobs left in job_moving").isZero();
            assertThat(layout.journaledMoves).as("moves left journaled").isZero();
            assertThat(layout.mapDisagreements()).as("partitions the map and the shards disagree on").isEmpty();
        }
    }

    @Test
    @Order(3)
    void killNineOfAPartitionMoverMidMoveOfMessageQueues() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_messages", SHARDS)) {
            run.jvmOptions = QUICK_START;
            int seconds = FULL ? 40 : 20;
            List<WorkerNode> starting = new ArrayList<>(run.launch(List.of("sender"), "--faults.role=message-sender",
                    "--pgqueue.workers.enabled=false", "--faults.messages.per-second=" + (FULL ? 200 : 100),
                    "--faults.messages.seconds=" + seconds));
            starting.addAll(run.launch(List.of("receiver-a", "receiver-b"), "--faults.role=message-receiver",
                    "--pgqueue.workers.enabled=false", "--faults.messages.hold=100ms"));
            starting.addAll(run.launch(List.of("mover"), MOVER));
            starting.forEach(WorkerNode::awaitStarted);
            int kills = FULL ? 8 : 3;
            List<MoveKill> moveKills = new ArrayList<>();
            long sendsEnd = now() + seconds * 1000L;
            while (moveKills.size() < 2 * kills && now() < sendsEnd
                    && (moveKills.size() < kills || moveKills.stream().noneMatch(kill -> kill.staged > 0))) {
                sleep(ThreadLocalRandom.current().nextLong(300, FULL ? 3000 : 1200));
                MoveKill kill = killMoverMidMove(run);
                run.launch(List.of("mover"), MOVER);
                moveKills.add(awaitResumed(run, kill));
                run.node("mover").awaitStarted();
            }
            await("the sender's last send").atMost(Duration.ofSeconds(seconds + 60L))
                .until(() -> MessageLedger.read(run.records()).sendersDone);
            try {
                await("every message received and deleted").atMost(Duration.ofMinutes(2))
                    .pollInterval(Duration.ofMillis(100)).until(() -> messagesLeft(run).isEmpty());
            }
            catch (org.awaitility.core.ConditionTimeoutException ex) {
                StringBuilder warnings = new StringBuilder();
                for (WorkerNode node : run.nodes) {
                    List<String> lines = node.output().lines().filter(line -> !line.startsWith("\tat ")).toList();
                    lines.subList(Math.max(0, lines.size() - 8), lines.size())
                        .forEach(line -> warnings.append('\n').append(node.id).append(": ").append(line));
                }
                throw new AssertionError("Messages left after two minutes: " + messagesLeft(run).size() + " kinds "
                        + messagesLeft(run).stream().filter(left -> !left.contains("received 0 times")).toList()
                        + "; the nodes' last lines:"
                        + warnings, ex);
            }
            run.node("mover").kill();

            MessageLedger ledger = MessageLedger.read(run.records());
            long visibility = FaultMessageReceiver.VISIBILITY.toNanos() / 1000;
            List<String> lost = ledger.lost();
            List<MessageLedger.Receive> early = ledger.receivedWithinVisibility(visibility);
            List<MessageLedger.Receive> again = ledger.receivedAgain();
            Map<String, List<Integer>> disordered = ledger.fifoOutOfOrder("ledger.fifo");
            Findings findings = Findings.ofMessages("kill -9 of a partition mover mid-move of message queues (3 shards)",
                    ledger.sent.size(), lost.size(), early.size(), again.size());
            Moves moves = Moves.read(run.records());
            List<MoveKill> struck = moveKills.stream().filter(kill -> kill.step != null).toList();
            findings.note("%d messages sent (half to a FIFO queue of 8 groups, a third of the rest with a fair group) "
                    + "while 2 nodes received and deleted them; %d moves done, median %d ms; %d kills, %d mid-move "
                    + "(%s), each resumed by a surviving node; FIFO groups out of order: %d; delete entries refused: %d; "
                    + "every shard's message and message_moving tables empty at the end", ledger.sent.size(),
                    moves.durations.size(), moves.percentile(0.5), moveKills.size(), struck.size(),
                    struck.stream().map(kill -> kill.describe(moves)).collect(Collectors.joining(", ")),
                    disordered.size(), ledger.refused.size());
            findings.report();

            assertThat(lost).as("messages sent and never received").isEmpty();
            assertThat(ledger.unknown()).as("messages received that no send recorded").isEmpty();
            assertThat(early).as("messages received again within a visibility timeout").isEmpty();
            assertThat(again).as("messages received twice (no receiver died)").isEmpty();
            assertThat(disordered).as("FIFO groups received out of order").isEmpty();
            assertThat(ledger.refused).as("delete entries refused").isEmpty();
            assertThat(struck).as("kills that left a move journaled").isNotEmpty();
            assertThat(struck).allSatisfy(kill -> assertThat(kill.resumedBy).as("node that resumed")
                .isIn("sender", "receiver-a", "receiver-b"));
        }
    }

    /** @return per shard, the messages and staged rows on it, and the moves journaled; empty when there are none */
    private static List<String> messagesLeft(FaultRun run) {
        List<String> left = new ArrayList<>();
        left.addAll(run.shards.get("main").queryForList("SELECT 'move of ' || partition || ' ' || step FROM "
                + "pgqueue.partition_move", String.class));
        run.shards.forEach((name, shard) -> {
            left.addAll(shard.queryForList("""
                    SELECT ? || ': ' || count(*) || ' messages of queue ' || queue_id || ' in partition '
                           || coalesce(CAST(partition AS text), 'none') || ', in flight ' || count(*) FILTER (WHERE
                           visible_at > now() AND receipt IS NOT NULL) || ', received ' || max(receive_count) || ' times'
                    FROM pgqueue.message GROUP BY queue_id, partition""", String.class, name));
            left.addAll(shard.queryForList("SELECT ? || ': ' || count(*) || ' rows staged of partition ' || partition "
                    + "FROM pgqueue.message_moving GROUP BY partition", String.class, name));
        });
        return left;
    }

    /** A producer node's arguments: transactions per second, partition keys (0: one per job), share of jobs delayed. */
    private static String[] producer(int transactionsPerSecond, int keys, double delayedShare) {
        return new String[] {"--faults.role=producer", "--pgqueue.workers.enabled=false",
            "--faults.producer.transactions-per-second=" + transactionsPerSecond, "--faults.producer.keys=" + keys,
            "--faults.producer.delayed-share=" + delayedShare};
    }

    /**
     * Waits until the producer's relay is inside a batch — preferably after a shard committed its
     * part, else with its rows locked — kills the producer's node, and reads what it left.
     */
    private static RelayKill killRelayMidBatch(FaultRun run) throws Exception {
        JdbcTemplate main = run.shards.get("main");
        long lookedFrom = now();
        long seenAt;
        while (true) {
            int window = main.queryForObject(RELAY_WINDOW, Integer.class, run.database);
            if (window == 2 || (window == 1 && now() - lookedFrom > 10_000)) {
                seenAt = now();
                break;
            }
            assertThat(now() - lookedFrom).as("waiting for the relay to be inside a batch").isLessThan(30_000);
            LockSupport.parkNanos(200_000);
        }
        long killedAt = now();
        run.node("producer").kill();
        // Its transaction on the main shard ends with its connection: the rows it locked are free.
        awaitTrue("the killed node's connections to end", Duration.ofSeconds(10), () -> main.queryForObject(
                "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'producer' AND backend_start < "
                        + "to_timestamp(? / 1000.0)", Integer.class, killedAt) == 0);
        String left = "{" + main.queryForList("SELECT id FROM pgqueue.job_outbox", Long.class).stream()
            .map(String::valueOf).collect(Collectors.joining(",")) + "}";
        int writtenNotCleared = 0;
        for (String shard : SHARDS) {
            writtenNotCleared += run.shards.get(shard).queryForObject("""
                    SELECT count(*) FROM pgqueue.job_relayed
                    WHERE outbox_id = ANY(CAST(? AS bigint[])) AND relayed_at < to_timestamp(? / 1000.0)""",
                    Integer.class, left, killedAt);
        }
        int leftCount = left.equals("{}") ? 0 : left.split(",").length;
        return new RelayKill(killedAt, killedAt - seenAt, left, leftCount, writtenNotCleared, -1);
    }

    /** Waits until the rows a killed relay left have left the outbox; @return how long after the kill (ms) */
    private static long awaitRelayed(FaultRun run, RelayKill kill) {
        awaitTrue("the rows the killed relay left to be relayed", Duration.ofSeconds(60), () -> run.shards.get("main")
            .queryForObject("SELECT count(*) FROM pgqueue.job_outbox WHERE id = ANY(CAST(? AS bigint[]))",
                    Integer.class, kill.leftIds) == 0);
        return now() - kill.killedAt;
    }

    /**
     * @param seenBefore how long before the kill the relay was seen inside a batch (ms)
     * @param leftIds the outbox rows left when the killed node's connections had ended, as an array literal
     * @param left how many
     * @param writtenNotCleared of those, rows a shard held already (relay marks from before the kill)
     * @param relayedIn how long after the kill the rows left were relayed (ms), -1 until known
     */
    private record RelayKill(long killedAt, long seenBefore, String leftIds, int left, int writtenNotCleared,
            long relayedIn) {

        RelayKill relayedIn(long millis) {
            return new RelayKill(this.killedAt, this.seenBefore, this.leftIds, this.left, this.writtenNotCleared, millis);
        }
    }

    /**
     * Waits until the mover has a move journaled, kills its node a random moment later, and reads
     * where the move was.
     */
    private static MoveKill killMoverMidMove(FaultRun run) throws Exception {
        JdbcTemplate main = run.shards.get("main");
        awaitTrue("a move to start", Duration.ofSeconds(30),
                () -> main.queryForObject("SELECT count(*) FROM pgqueue.partition_move", Integer.class) > 0);
        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(0, 10_000_000));
        long killedAt = now();
        run.node("mover").kill();
        List<Map<String, Object>> journal = main.queryForList("SELECT partition, source, step FROM pgqueue.partition_move");
        if (journal.isEmpty()) {
            return new MoveKill(killedAt, -1, null, 0, 0, null);
        }
        Map<String, Object> move = journal.get(0);
        int partition = ((Number) move.get("partition")).intValue();
        long staged = run.shards.get((String) move.get("source")).queryForObject("""
                SELECT (SELECT count(*) FROM pgqueue.job_moving WHERE partition = ?)
                     + (SELECT count(*) FROM pgqueue.message_moving WHERE partition = ?)""", Long.class, partition,
                partition);
        return new MoveKill(killedAt, partition, (String) move.get("step"), staged, -1, null);
    }

    /** Waits until the move a kill cut short is finished; @return the kill with who finished it, and when */
    private static MoveKill awaitResumed(FaultRun run, MoveKill kill) throws IOException {
        if (kill.step == null) {
            return kill;
        }
        awaitTrue("the stranded move to be finished", Duration.ofSeconds(60), () -> run.shards.get("main")
            .queryForObject("SELECT count(*) FROM pgqueue.partition_move", Integer.class) == 0);
        long resumedIn = now() - kill.killedAt;
        String resumedBy = "nobody";
        for (WorkerNode node : run.nodes) {
            // Log lines start with their instant in UTC.
            boolean resumed = node.output().lines()
                .filter(line -> line.contains("resumes the move of partition " + kill.partition + " "))
                .anyMatch(line -> Instant.parse(line.substring(0, line.indexOf(' '))).toEpochMilli() >= kill.killedAt);
            if (resumed) {
                resumedBy = node.id;
            }
        }
        return new MoveKill(kill.killedAt, kill.partition, kill.step, kill.staged, resumedIn, resumedBy);
    }

    /**
     * @param partition the partition whose move the kill cut short, -1 if none was journaled any more
     * @param step its journaled step ({@code MARKED}, {@code SWITCHED}), {@code null} if none
     * @param staged its jobs and messages in the source's {@code job_moving} and {@code message_moving} at the kill
     * @param resumedIn how long after the kill the move was finished (ms), -1 until known
     * @param resumedBy the node that finished it, {@code null} until known
     */
    private record MoveKill(long killedAt, int partition, String step, long staged, long resumedIn, String resumedBy) {

        String describe(Moves moves) {
            Long started = moves.cutShort.entrySet().stream().filter(cut -> cut.getValue() == this.partition)
                .map(Map.Entry::getKey).filter(at -> at <= this.killedAt).max(Long::compare).orElse(null);
            return this.step + (this.staged > 0 ? " with " + this.staged + " rows staged" : "")
                    + (started == null ? "" : " " + (this.killedAt - started) + " ms into the move");
        }
    }

    /** The mover's record ({@link FaultMover}): how long the finished moves took, and which were cut short. */
    private static final class Moves {

        final List<Long> durations = new ArrayList<>();

        /** Start (epoch millis) → partition, of moves that neither finished nor were refused. */
        final Map<Long, Integer> cutShort = new HashMap<>();

        static Moves read(Path records) {
            Moves moves = new Moves();
            try (DirectoryStream<Path> files = Files.newDirectoryStream(records, "*.moves")) {
                for (Path file : files) {
                    long[] open = null;
                    for (String line : Files.readAllLines(file)) {
                        String[] words = line.split(" ");
                        if (words[0].equals("M")) {
                            open = new long[] {Long.parseLong(words[1]), Long.parseLong(words[4])};
                        }
                        else if (words[0].equals("D") && open != null) {
                            moves.durations.add(Long.parseLong(words[3]) - open[1]);
                            open = null;
                        }
                        else {
                            open = null;
                        }
                    }
                    if (open != null) {
                        moves.cutShort.put(open[1], (int) open[0]);
                    }
                }
            }
            catch (IOException ex) {
                throw new UncheckedIOException(ex);
            }
            moves.durations.sort(Long::compare);
            return moves;
        }

        long percentile(double share) {
            return this.durations.isEmpty() ? -1
                    : this.durations.get((int) Math.min(this.durations.size() - 1, this.durations.size() * share));
        }
    }

    private static void awaitTrue(String what, Duration timeout, Callable<Boolean> condition) {
        await(what).atMost(timeout).pollDelay(Duration.ZERO).pollInterval(Duration.ofMillis(1)).until(condition);
    }
}
