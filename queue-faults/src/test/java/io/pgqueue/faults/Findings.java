package io.pgqueue.faults;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.pgqueue.faults.FaultRun.Execution;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a scenario did to the jobs, from the recorder and the queue's tables.
 * <p>
 * Two executions of one job <em>overlap</em> when the later started before the earlier ended. An
 * overlap breaks the queue's promise when the later started while the earlier's lease certainly
 * still held: the earlier was running within its timeout on a node that renewed its leases, or
 * less than a lease minus a heartbeat interval had passed since its node last could renew it
 * (after the timeout of a handler that ignores it, whose lease is no longer renewed; after its
 * node was frozen or cut off from the server). Overlaps after that are the documented behaviour of
 * a lease: the job is rescued while the stale handler may still run.
 */
final class Findings {

    final String scenario;

    final int jobs;

    final int lost;

    final int reExecutions;

    final int overlaps;

    final int unexplainedOverlaps;

    /** Handlers started on a node that could no longer hold their lease (cut off for longer than one). */
    final int startsWithoutLease;

    final List<String> notes = new ArrayList<>();

    private Findings(String scenario, int jobs, int lost, int reExecutions, int overlaps, int unexplained,
            int startsWithoutLease) {
        this.startsWithoutLease = startsWithoutLease;
        this.scenario = scenario;
        this.jobs = jobs;
        this.lost = lost;
        this.reExecutions = reExecutions;
        this.overlaps = overlaps;
        this.unexplainedOverlaps = unexplained;
    }

    /**
     * Analyses a run.
     * @param cutOff per node, the time window (epoch millis, from and to) in which it could not renew
     * leases: killed (to the end), frozen or cut off from the server
     * @param killed nodes that were killed: their unfinished executions ended when they were cut off
     */
    static Findings of(String scenario, FaultRun run, Map<String, long[]> cutOff, List<String> killed) {
        Map<Long, String> states = run.finishedStates();
        List<Long> notCompleted = run.enqueued.keySet().stream().filter(id -> !"COMPLETED".equals(states.get(id)))
            .sorted().toList();
        int lost = notCompleted.size();
        List<Execution> executions = run.executions();
        Map<Long, List<Execution>> byJob = executions.stream().collect(Collectors.groupingBy(Execution::jobId));
        long leaseLeft = FaultRun.LEASE.toMillis() - FaultRun.HEARTBEAT.toMillis();
        int overlaps = 0;
        int unexplained = 0;
        int staleStarts = 0;
        for (List<Execution> runs : byJob.values()) {
            runs.sort(Comparator.comparingLong(Execution::started));
            for (int i = 0; i < runs.size(); i++) {
                Execution earlier = runs.get(i);
                long[] cut = cutOff.get(earlier.node());
                long end = earlier.ended() != null ? earlier.ended()
                        : killed.contains(earlier.node()) && cut != null ? cut[0] : Long.MAX_VALUE;
                // The earliest moment the earlier execution's lease may have ended unrenewed.
                long leaseHeld = Long.MAX_VALUE;
                if (end - earlier.started() > run.timeout.toMillis()) {
                    leaseHeld = earlier.started() + run.timeout.toMillis() + leaseLeft;
                }
                if (cut != null && earlier.started() < cut[1]) {
                    leaseHeld = Math.min(leaseHeld, Math.max(cut[0], earlier.started()) + leaseLeft);
                }
                for (int j = i + 1; j < runs.size(); j++) {
                    Execution later = runs.get(j);
                    if (later.started() >= end) {
                        continue;
                    }
                    overlaps++;
                    boolean stale = startedCutOff(later, cutOff, FaultRun.LEASE.toMillis());
                    if (stale) {
                        staleStarts++;
                    }
                    if (later.started() < leaseHeld && !stale) {
                        unexplained++;
                    }
                }
            }
        }
        // A node cut off since cut[0] renews nothing: a lease past cut[0] + lease is certainly gone.
        int withoutLease = (int) executions.stream().filter(execution -> {
            long[] cut = cutOff.get(execution.node());
            return cut != null && !killed.contains(execution.node())
                    && execution.started() > cut[0] + FaultRun.LEASE.toMillis() && execution.started() < cut[1];
        }).count();
        Findings findings = new Findings(scenario, run.enqueued.size(), lost, executions.size() - byJob.size(),
                overlaps, unexplained, withoutLease);
        if (staleStarts > 0) {
            findings.note("%d handlers started on a cut-off node beside a re-run", staleStarts);
        }
        if (lost > 0) {
            List<Long> first = notCompleted.subList(0, Math.min(5, lost));
            List<String> finished = run.describeFinished(first);
            findings.note("not completed: %s%s", finished.isEmpty() ? first + " (not finished)" : finished,
                    finished.size() < first.size() ? " (the others of " + first + " not finished)" : "");
        }
        return findings;
    }

    /**
     * The findings of a message-queue scenario, in the report's columns: messages for jobs, messages
     * received twice within a visibility timeout for overlaps within a lease, all second receives
     * for the overlaps and re-executions.
     * @param scenario the scenario
     * @param messages the messages sent
     * @param lost sent messages never received
     * @param twiceWithinVisibility messages received again within a visibility timeout of a receive
     * @param receivedAgain second (and later) receives of a message
     * @return the findings
     */
    static Findings ofMessages(String scenario, int messages, int lost, int twiceWithinVisibility, int receivedAgain) {
        return new Findings(scenario, messages, lost, receivedAgain, receivedAgain, twiceWithinVisibility, 0);
    }

    /** Whether an execution started while its node was cut off, so its lease may have ended unseen. */
    private static boolean startedCutOff(Execution execution, Map<String, long[]> cutOff, long leaseEnd) {
        long[] cut = cutOff.get(execution.node());
        return cut != null && execution.started() >= cut[0] && execution.started() <= cut[1] + leaseEnd;
    }

    /**
     * Asserts what every scenario promises: no job lost, no two executions of a job at once while
     * both could hold its lease, no handler started once its lease may have run out.
     */
    void assertNothingLostOrOverlapping() {
        assertThat(this.lost).as("jobs lost (%s)", String.join("; ", this.notes)).isZero();
        assertThat(this.unexplainedOverlaps).as("executions overlapping within a lease").isZero();
        assertThat(this.startsWithoutLease).as("handlers started without a lease").isZero();
    }

    Findings note(String format, Object... args) {
        this.notes.add(String.format(format, args));
        return this;
    }

    /** Appends this scenario's row to the report file and prints it. */
    void report() throws IOException {
        String row = String.format("| %s | %,d | %d | %d | %d | %d | %d | %s |", this.scenario, this.jobs, this.lost,
                this.unexplainedOverlaps, this.startsWithoutLease, this.overlaps, this.reExecutions,
                String.join("; ", this.notes));
        System.out.println("FAULT " + row);
        String file = System.getProperty("faults.report");
        if (file != null) {
            Path path = Path.of(file);
            try {
                // The scenario classes run in parallel forks: only the first to report writes the header.
                Files.writeString(path, """
                        | scenario | jobs | lost | overlaps within a lease | starts without a lease | overlaps (all) | re-executions | recovery and notes |
                        |---|---|---|---|---|---|---|---|
                        """, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            }
            catch (FileAlreadyExistsException ex) {
                // Another scenario's header is there.
            }
            Files.writeString(path, row + "\n", StandardOpenOption.APPEND);
        }
    }

    /** @return seconds between two epoch-millis instants, for notes */
    static String seconds(long from, long to) {
        return String.format("%.2f s", (to - from) / 1000.0);
    }

    /** @return a node cut off from {@code from} to {@code to} (epoch millis) */
    static Map<String, long[]> cut(String node, long from, long to) {
        Map<String, long[]> cut = new HashMap<>();
        cut.put(node, new long[] { from, to });
        return cut;
    }
}
