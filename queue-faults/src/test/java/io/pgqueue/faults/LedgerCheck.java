package io.pgqueue.faults;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.pgqueue.faults.FaultRun.Execution;
import org.springframework.jdbc.core.JdbcTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A run checked against its producers' record ({@link EnqueueLedger}): what the run committed
 * becomes the jobs {@link Findings} expects to have completed, and what no committed transaction
 * enqueued must not exist.
 * @param findings the run's findings, with the ledger's counts noted
 * @param unknown jobs found or run that no recorded transaction enqueued
 * @param rolledBack jobs found or run of transactions rolled back on purpose
 * @param torn transactions of unknown outcome found in part
 * @param startedAfresh jobs whose first attempt ran twice: written twice
 */
record LedgerCheck(Findings findings, Set<Long> unknown, Set<Long> rolledBack, List<List<Long>> torn,
        Set<Long> startedAfresh) {

    /** Waits until the producers' nodes are gone and every job has finished and left the outbox and every move. */
    static void awaitSettled(FaultRun run) {
        await("every job finished").atMost(Duration.ofMinutes(2)).pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(1)).until(() -> {
                long left = run.shards.get("main").queryForObject("""
                        SELECT (SELECT count(*) FROM pgqueue.job_outbox) + (SELECT count(*) FROM pgqueue.partition_move)""",
                        Long.class);
                for (JdbcTemplate shard : run.shards.values()) {
                    left += shard.queryForObject("""
                            SELECT (SELECT count(*) FROM pgqueue.job) + (SELECT count(*) FROM pgqueue.job_moving)""",
                            Long.class);
                }
                return left == 0;
            });
    }

    /** Checks a settled run's jobs, wherever they are, against its producers' record. */
    static LedgerCheck of(String scenario, FaultRun run, EnqueueLedger ledger, ShardLayout layout) {
        Set<Long> present = layout.places.keySet();
        List<Execution> executions = run.executions();
        Set<Long> inDoubt = new HashSet<>();
        int inDoubtCommitted = 0;
        List<List<Long>> torn = new ArrayList<>();
        for (List<Long> jobs : ledger.inDoubt) {
            inDoubt.addAll(jobs);
            long found = jobs.stream().filter(present::contains).count();
            if (found == jobs.size()) {
                inDoubtCommitted++;
                jobs.forEach(id -> run.enqueued.put(id, 0L));
            }
            else if (found > 0) {
                torn.add(jobs);
            }
        }
        run.enqueued.putAll(ledger.committed);
        Set<Long> seen = new HashSet<>(present);
        executions.forEach(execution -> seen.add(execution.jobId()));
        Set<Long> unknown = seen.stream().filter(id -> !ledger.committed.containsKey(id) && !inDoubt.contains(id))
            .collect(Collectors.toSet());
        Set<Long> rolledBack = seen.stream().filter(ledger.rolledBack::contains).collect(Collectors.toSet());
        // A job written twice runs its first attempt twice; a rescue after a lease runs the next attempt.
        Set<Long> startedAfresh = executions.stream().filter(execution -> execution.attempt() == 1)
            .collect(Collectors.groupingBy(Execution::jobId, Collectors.counting())).entrySet().stream()
            .filter(entry -> entry.getValue() > 1).map(Map.Entry::getKey).collect(Collectors.toSet());

        Findings findings = Findings.of(scenario, run, Map.of(), List.of());
        findings.note("%d transactions: %d committed, %d rolled back on purpose (none of their %d jobs found), %d cut "
                + "short by a kill or failed at commit (%d of them found entirely, none in part), %d failed before "
                + "writing", ledger.transactions, ledger.committedTransactions, ledger.rolledBackTransactions,
                ledger.rolledBack.size(), ledger.inDoubt.size(), inDoubtCommitted, ledger.failedEnqueues);
        return new LedgerCheck(findings, unknown, rolledBack, torn, startedAfresh);
    }

    /** Every committed job ran exactly once (again only after a lease), and nothing else exists. */
    void assertCommittedJobsRanOnceAndNothingElse(ShardLayout layout) {
        this.findings.assertNothingLostOrOverlapping();
        assertThat(this.unknown).as("jobs of no recorded transaction").isEmpty();
        assertThat(this.rolledBack).as("jobs of rolled-back transactions").isEmpty();
        assertThat(this.torn).as("transactions found in part").isEmpty();
        assertThat(this.startedAfresh).as("jobs whose first attempt ran twice").isEmpty();
        assertThat(layout.inMoreThanOnePlace()).as("jobs in more than one place").isEmpty();
        assertThat(layout.outbox).as("rows left in the outbox").isZero();
    }
}
