package io.pgqueue.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.pgqueue.faults.FaultRun.Execution;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.pgqueue.faults.FaultRun.FULL;
import static io.pgqueue.faults.FaultRun.now;
import static io.pgqueue.faults.FaultRun.sleep;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A rolling upgrade under load: a producer and two worker nodes of the previous release
 * ({@link NodeImage#previousRelease()}, on the previous release's schema) run; a node of this
 * release starts beside them and migrates the schema while they work; then each node of the
 * previous release, producer included, is stopped (SIGTERM) and replaced by one of this release.
 * Checked against the producers' record: every committed job ran, exactly once, and nothing else
 * exists; the previous release's nodes kept working on the migrated schema; and the doctor reports
 * the two releases side by side while they are, and not once the deploy is done.
 */
class UpgradeFaultScenariosIT {

    private static final String[] WORKER = {"--pgqueue.tasks.record.concurrency=4"};

    private static final String[] PRODUCER = {"--faults.role=producer", "--pgqueue.workers.enabled=false",
        "--faults.producer.transactions-per-second=" + (FULL ? 60 : 30)};

    @RegisterExtension
    static final OwnServer server = new OwnServer();

    @Test
    void aRollingUpgradeUnderLoadRunsEveryCommittedJobExactlyOnce() throws Exception {
        try (FaultRun run = new FaultRun(server.get(), "faults_upgrade")) {
            run.image = NodeImage.previousRelease();
            List<WorkerNode> starting = new ArrayList<>(run.launch(List.of("producer"), PRODUCER));
            starting.addAll(run.launch(List.of("node-a", "node-b"), WORKER));
            starting.forEach(WorkerNode::awaitStarted);
            int previousSchema = schemaVersion(run);
            sleep(FULL ? 10_000 : 3_000);

            // This release's first node migrates the schema while the previous release's nodes work.
            run.image = null;
            long migrationStarted = now();
            run.launch(List.of("node-c"), WORKER).get(0).awaitStarted();
            long migrated = now();
            int currentSchema = schemaVersion(run);
            Integer builtFor = run.jdbc.queryForObject("SELECT schema_version FROM pgqueue.node WHERE id = 'node-c'",
                    Integer.class);
            sleep(FULL ? 10_000 : 3_000);
            String sideBySide = nodeReleases(run);

            // Each node of the previous release is stopped and replaced by one of this release, one at a time.
            replace(run, "node-a", List.of("node-d"), WORKER);
            replace(run, "node-b", List.of(), WORKER);
            replace(run, "producer", List.of("producer-2"), PRODUCER);
            sleep(FULL ? 10_000 : 3_000);
            stop(run, "producer-2");
            LedgerCheck.awaitSettled(run);
            String afterwards = nodeReleases(run);

            EnqueueLedger ledger = EnqueueLedger.read(run.records());
            ShardLayout layout = ShardLayout.read(run);
            LedgerCheck checked = LedgerCheck.of("rolling upgrade from the previous release under load", run, ledger,
                    layout);
            List<Execution> executions = run.executions();
            Map<String, Long> byNode = executions.stream()
                .collect(Collectors.groupingBy(Execution::node, Collectors.counting()));
            long previousAfterMigration = executions.stream()
                .filter(execution -> execution.started() > migrated && execution.node().matches("node-[ab]")).count();
            Findings findings = checked.findings();
            findings.note("schema %d to %d, migrated by this release's first node in %d ms (start included) while "
                    + "the previous release's nodes worked; executions by node %s, %d of them by the previous "
                    + "release's nodes on the migrated schema; doctor while side by side: %s; afterwards: %s",
                    previousSchema, currentSchema, migrated - migrationStarted, byNode, previousAfterMigration,
                    sideBySide, afterwards);
            findings.report();

            checked.assertCommittedJobsRanOnceAndNothingElse(layout);
            assertThat(findings.reExecutions).as("jobs run more than once").isZero();
            assertThat(previousSchema).as("the previous release's schema").isLessThan(currentSchema);
            assertThat(currentSchema).as("the schema after the upgrade, the one this release's node was built for")
                .isEqualTo(builtFor);
            assertThat(previousAfterMigration).as("jobs the previous release's nodes ran on the migrated schema")
                .isPositive();
            assertThat(byNode).as("executions by node").containsKeys("node-a", "node-b", "node-c", "node-d");
            assertThat(ledger.committedTransactions).as("transactions committed").isPositive();
            assertThat(sideBySide).as("the doctor while the releases run side by side").startsWith("WARN");
            assertThat(afterwards).as("the doctor once the deploy is done").startsWith("OK");
        }
    }

    /** Stops a node gracefully and starts its replacements, waiting until they run. */
    private static void replace(FaultRun run, String node, List<String> replacements, String... settings)
            throws Exception {
        stop(run, node);
        if (!replacements.isEmpty()) {
            run.launch(replacements, settings).forEach(WorkerNode::awaitStarted);
        }
    }

    private static void stop(FaultRun run, String node) throws InterruptedException {
        run.node(node).terminate();
        assertThat(run.node(node).awaitExit(Duration.ofSeconds(30))).as("%s stopped within 30 s", node).isTrue();
    }

    private static int schemaVersion(FaultRun run) {
        return run.jdbc.queryForObject("SELECT max(CAST(version AS integer)) FROM pgqueue.pgqueue_schema_history "
                + "WHERE version IS NOT NULL AND success", Integer.class);
    }

    /** @return the doctor's node-releases check: its status, then its detail */
    private static String nodeReleases(FaultRun run) {
        return run.jdbc.queryForObject("SELECT status || ': ' || detail FROM pgqueue.doctor() "
                + "WHERE check_name = 'node releases'", String.class);
    }
}
