package io.pgqueue.faults;

import java.util.concurrent.TimeUnit;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;

/**
 * Records an execution's start and end in {@code fault_execution} (the nodes and the scenarios
 * share one host, so one clock) and works for the payload's time in between. With
 * {@link Work#hangMillis()} set, its first attempt ignores the interrupt of its timeout and keeps
 * running that long, like a handler stuck in a call that cannot be interrupted.
 */
@Component
@QueueTask(name = "record", concurrency = 4)
public class RecordTask implements TaskHandler<RecordTask.Work> {

    /** The recorder's table, created by whoever starts the nodes. */
    static final String TABLE_DDL = """
            CREATE TABLE IF NOT EXISTS fault_execution (
                id         bigserial   PRIMARY KEY,
                job_id     bigint      NOT NULL,
                attempt    integer     NOT NULL,
                node       text        NOT NULL,
                started_at timestamptz NOT NULL,
                ended_at   timestamptz
            )""";

    private final JdbcTemplate jdbc;

    private final String node;

    RecordTask(JdbcTemplate jdbc, WorkerSettings settings) {
        this.jdbc = jdbc;
        this.node = settings.nodeId();
    }

    @Override
    public void handle(Work work, TaskContext context) throws InterruptedException {
        long startedAt = System.currentTimeMillis();
        Long execution = this.jdbc.queryForObject("""
                INSERT INTO fault_execution (job_id, attempt, node, started_at)
                VALUES (?, ?, ?, to_timestamp(? / 1000.0)) RETURNING id""", Long.class, context.jobId(),
                context.attempt(), this.node, startedAt);
        if (work.hangMillis() > 0 && context.attempt() == 1) {
            hang(work.hangMillis());
        }
        else if (work.millis() > 0) {
            Thread.sleep(work.millis());
        }
        recordEnd(execution, System.currentTimeMillis());
    }

    /** Writes the end as this host's clock saw it, however long the server takes to come back. */
    private void recordEnd(long execution, long endedAt) throws InterruptedException {
        while (true) {
            try {
                this.jdbc.update("UPDATE fault_execution SET ended_at = to_timestamp(? / 1000.0) WHERE id = ?", endedAt,
                        execution);
                return;
            }
            catch (RuntimeException ex) {
                Thread.sleep(100);
            }
        }
    }

    private static void hang(long millis) {
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        boolean interrupted = false;
        while (System.nanoTime() < until) {
            try {
                TimeUnit.NANOSECONDS.sleep(until - System.nanoTime());
            }
            catch (InterruptedException ex) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * What one job does.
     * @param millis how long the handler works
     * @param hangMillis when positive, how long the first attempt runs ignoring interrupts instead
     */
    public record Work(int millis, int hangMillis) {
    }
}
