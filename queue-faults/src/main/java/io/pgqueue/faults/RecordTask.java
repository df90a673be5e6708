package io.pgqueue.faults;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.worker.WorkerSettings;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Records every execution's start and end in a file of its node's own, {@code <node>.executions}
 * in {@code faults.record-dir} — not in the database, so that what runs while the server is away
 * or out of reach is recorded too — and works for the payload's time in between. The nodes and the
 * scenarios share one host, so one clock. With {@link Work#hangMillis()} set, a job's first
 * attempt ignores the interrupt of its timeout and keeps running that long, like a handler stuck
 * in a call that cannot be interrupted.
 * <p>
 * Lines: {@code S <execution> <job> <attempt> <epoch millis>} at the start and
 * {@code E <execution> <epoch millis>} at the end; a killed node's last executions have no end.
 * The file is opened at the first execution: a node that runs no workers (a producer, a mover)
 * declares the task without a file.
 */
@Component
@QueueTask(name = "record", concurrency = 4)
public class RecordTask implements TaskHandler<RecordTask.Work> {

    private final ObjectProvider<WorkerSettings> settings;

    private final Path directory;

    private final AtomicLong executions = new AtomicLong();

    private RecordFile file;

    RecordTask(ObjectProvider<WorkerSettings> settings, @Value("${faults.record-dir}") Path directory) {
        this.settings = settings;
        this.directory = directory;
    }

    @Override
    public void handle(Work work, TaskContext context) throws InterruptedException {
        long execution = this.executions.incrementAndGet();
        append("S " + execution + " " + context.jobId() + " " + context.attempt() + " " + System.currentTimeMillis());
        if (work.hangMillis() > 0 && context.attempt() == 1) {
            hang(work.hangMillis());
        }
        else if (work.millis() > 0) {
            Thread.sleep(work.millis());
        }
        append("E " + execution + " " + System.currentTimeMillis());
    }

    private synchronized void append(String line) {
        if (this.file == null) {
            this.file = new RecordFile(this.directory.resolve(this.settings.getObject().nodeId() + ".executions"));
        }
        this.file.append(line);
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
