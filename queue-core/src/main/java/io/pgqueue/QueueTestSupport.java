package io.pgqueue;

import java.time.Duration;
import java.util.Collection;
import java.util.List;

import io.pgqueue.internal.engine.Engine;
import io.pgqueue.internal.schedule.Scheduler;
import io.pgqueue.internal.store.QueueStores;
import io.pgqueue.internal.store.QueueTestStore;
import io.pgqueue.internal.worker.Drainer;
import io.pgqueue.schedule.Schedule;
import io.pgqueue.worker.WorkerTask;

/**
 * What a test kit does to an unsharded queue ({@link PgQueue#testSupport(Collection)}): runs due
 * jobs on the caller's thread through the workers' executor (timeouts, payload reading,
 * observations, events, progress and results as on a worker), lists a task's jobs, moves the
 * queue's time and empties it. The starter's test kit ({@code QueueTester}) is built on it. Not for
 * concurrent use; close it when done.
 */
public final class QueueTestSupport implements AutoCloseable {

    private final Drainer drainer;

    private final QueueTestStore store;

    private final Scheduler scheduler;

    private final PayloadEncryption encryption;

    QueueTestSupport(Engine engine, Collection<WorkerTask> tasks) {
        QueueStores stores = engine.stores();
        this.drainer = new Drainer(stores.jobs(), tasks, engine.settings().mapper(), engine.settings().telemetry(),
                engine.settings().interceptors(), engine.settings().encryption());
        this.drainer.spawnChildrenWith(engine.enqueuer()::enqueueChild);
        this.store = new QueueTestStore(stores.dataSource(), stores.config());
        this.scheduler = engine.scheduler();
        this.encryption = engine.settings().encryption();
    }

    /** @return the names of the tasks whose jobs it runs */
    public List<String> tasks() {
        return this.drainer.taskNames();
    }

    /**
     * Runs due jobs of the tasks on this thread until none is due, the due jobs they enqueue
     * included, each outcome written before the next job runs; jobs scheduled later (or retrying
     * after a backoff) stay.
     * @param tasks the tasks
     * @param maxJobs the most jobs to run
     * @return each job run, in order, with how its attempt ended and the state it is in then
     * @throws IllegalArgumentException if it runs no handler for one of the tasks
     * @throws IllegalStateException if jobs are still due after {@code maxJobs} (jobs that keep enqueuing jobs)
     */
    public List<DrainedJob> drain(Collection<String> tasks, int maxJobs) {
        tasks.forEach(this.drainer::task);
        return this.drainer.drain(tasks, maxJobs).stream()
            .map(ran -> new DrainedJob(ran.jobId(), ran.outcome(), ran.state()))
            .toList();
    }

    /**
     * Runs one READY job now, due or not (a scheduled job, one waiting for its retry).
     * @param jobId the job
     * @return the state it ended in: COMPLETED, READY (to be retried), FAILED or CANCELLED
     * @throws IllegalArgumentException if no such job is READY, or it runs no handler for its task
     */
    public JobState runJob(long jobId) {
        String task = this.store.readyTask(jobId).orElseThrow(() -> notReady(jobId));
        this.drainer.task(task);
        this.store.promote(jobId).orElseThrow(() -> notReady(jobId));
        return this.drainer.runNext(task, jobId).state();
    }

    private static IllegalArgumentException notReady(long jobId) {
        return new IllegalArgumentException("Job " + jobId + " is not in the queue as READY");
    }

    /**
     * Runs a task's handler on a payload directly, on this thread, without a job: the handler's
     * exceptions reach the caller; a result it records is not kept (there is no job).
     * @param task the task
     * @param payload the payload, converted to the handler's payload type as it would be read from the queue
     * @throws Exception what the handler threw
     */
    public void runHandler(String task, Object payload) throws Exception {
        this.drainer.runHandler(task, payload);
    }

    /**
     * @param task the task
     * @return its jobs that are waiting for others, due, scheduled or running, oldest first, their
     * payloads decrypted where they are encrypted
     */
    public List<JobSnapshot> activeJobs(String task) {
        return this.store.activeJobs(task).stream()
            .map(job -> job.withPayload(this.encryption.decrypt(job.task(), job.payload()))).toList();
    }

    /**
     * Makes READY jobs due earlier, as if the queue's time had moved on; jobs waiting for a time run
     * earlier too when every READY job is moved.
     * @param by how much earlier
     * @param jobIds the jobs, or {@code null} for every READY job
     */
    public void shift(Duration by, List<Long> jobIds) {
        this.store.shiftReady(by, jobIds);
        if (jobIds == null) {
            this.store.shiftWaiting(by);
        }
    }

    /** Deletes every job, workflow, schedule, task pause and rate bucket. */
    public void empty() {
        this.store.empty();
    }

    /**
     * Puts schedules in the database as a node that runs the tasks does when it starts: new ones
     * start at their next slot, and configured schedules of these tasks that are not among them are
     * deleted.
     * @param schedules the schedules configured with the tasks
     * @param tasks the tasks whose configured schedules they are
     */
    public void configureSchedules(Collection<Schedule> schedules, Collection<String> tasks) {
        this.scheduler.configure(schedules, tasks);
    }

    /** @return the name of the database the queue is on */
    public String databaseName() {
        return this.store.databaseName();
    }

    /** Stops the timer of the handlers' timeouts. */
    @Override
    public void close() {
        this.drainer.close();
    }

    /**
     * A job a drain ran.
     *
     * @param jobId the job
     * @param outcome how its attempt ended
     * @param state the state it is in afterwards: COMPLETED, READY (retried, snoozed or re-run), FAILED or CANCELLED
     */
    public record DrainedJob(long jobId, AttemptResult outcome, JobState state) {
    }
}
