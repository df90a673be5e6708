package io.pgqueue.internal.store;

import java.sql.ResultSet;
import java.sql.Timestamp;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

import io.pgqueue.JobStep;
import io.pgqueue.QueueConfig;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.jdbc.core.namedparam.MapSqlParameterSource;
import org.springframework.jdbc.core.namedparam.NamedParameterJdbcTemplate;

/**
 * The steps durable handlers record for their jobs, on the job's shard. Its SQL is in
 * {@link StepStatements}.
 */
public final class StepStore {

    private static final RowMapper<JobStep> STEP = (rs, row) -> new JobStep(rs.getString("name"), rs.getInt("seq"),
            JobStep.Kind.valueOf(rs.getString("kind")), rs.getString("result"), rs.getString("result_type"),
            StoreSupport.instant(rs, "wake_at"), rs.getInt("attempt"), StoreSupport.instant(rs, "started_at"),
            StoreSupport.instant(rs, "finished_at"), signal(rs.getString("kind"), rs.getString("resolved")));

    private final NamedParameterJdbcTemplate jdbc;

    private final String step;

    private final String awaitSignal;

    private final String placeSignal;

    private final String timeOutSignal;

    private final String signal;

    private final String wakeSignalled;

    private final String load;

    private final String steps;

    private final String record;

    private final String dropEnded;

    StepStore(NamedParameterJdbcTemplate jdbc, QueueConfig config) {
        this.jdbc = jdbc;
        this.load = StoreSupport.sql(StepStatements.LOAD, config);
        this.steps = StoreSupport.sql(StepStatements.STEPS, config);
        this.record = StoreSupport.sql(StepStatements.RECORD, config);
        this.dropEnded = StoreSupport.sql(StepStatements.DROP_ENDED, config);
        this.step = StoreSupport.sql(StepStatements.STEP, config);
        this.awaitSignal = StoreSupport.sql(StepStatements.AWAIT_SIGNAL, config);
        this.placeSignal = StoreSupport.sql(StepStatements.PLACE_SIGNAL, config);
        this.timeOutSignal = StoreSupport.sql(StepStatements.TIME_OUT_SIGNAL, config);
        this.signal = StoreSupport.sql(StepStatements.SIGNAL, config);
        this.wakeSignalled = StoreSupport.sql(StepStatements.WAKE_SIGNALLED, config);
    }

    /**
     * A job's recorded steps and the database clock when they were read.
     *
     * @param steps the steps in their order
     * @param databaseNow the database clock
     */
    public record Recorded(List<JobStep> steps, Instant databaseNow) {
    }

    /**
     * Reads a job's recorded steps, with the database clock.
     * @param jobId the job
     * @return the steps and the clock
     */
    public Recorded load(long jobId) {
        List<JobStep> steps = new ArrayList<>();
        Instant[] now = new Instant[1];
        this.jdbc.query(this.load, new MapSqlParameterSource("id", jobId), (ResultSet rs) -> {
            now[0] = StoreSupport.instant(rs, "db_now");
            if (rs.getString("name") != null) {
                steps.add(STEP.mapRow(rs, steps.size()));
            }
        });
        return new Recorded(steps, now[0]);
    }

    /**
     * Reads a job's recorded steps.
     * @param jobId the job
     * @return the steps in their order; empty when it has none, or is not on this database
     */
    public List<JobStep> steps(long jobId) {
        return this.jdbc.query(this.steps, new MapSqlParameterSource("id", jobId), STEP);
    }

    /**
     * What a step's record wrote.
     *
     * @param wakeAt a sleep's end, or {@code null} for a step
     * @param databaseNow the database clock when it was written
     */
    public record Written(Instant wakeAt, Instant databaseNow) {
    }

    /**
     * Records a step that ran, under the attempt's lease.
     * @param lease the attempt's lease
     * @param name the step
     * @param seq its place
     * @param result its value as JSON, or {@code null}
     * @param resultType the value's class, or {@code null}
     * @param elapsed how long it ran
     * @return what was written, or {@code null} when the attempt no longer holds the job
     */
    public Written recordStep(Lease lease, String name, int seq, String result, String resultType, Duration elapsed) {
        return write(lease, name, seq, JobStep.Kind.STEP, result, resultType, null, null, elapsed);
    }

    /**
     * Records a durable sleep under the attempt's lease: its end is a moment, or the database clock
     * plus a delay.
     * @param lease the attempt's lease
     * @param name the sleep's step name
     * @param seq its place
     * @param until when it ends, or {@code null} to end after the delay
     * @param delay how long it lasts when no moment is given
     * @return what was written, its end included, or {@code null} when the attempt no longer holds the job
     */
    public Written recordSleep(Lease lease, String name, int seq, Instant until, Duration delay) {
        return write(lease, name, seq, JobStep.Kind.SLEEP, null, null, until, until == null ? delay.toMillis() : null,
                Duration.ZERO);
    }

    private Written write(Lease lease, String name, int seq, JobStep.Kind kind, String result, String resultType,
            Instant wakeAt, Long sleepMillis, Duration elapsed) {
        MapSqlParameterSource params = new MapSqlParameterSource("id", lease.jobId()).addValue("epoch", lease.epoch())
            .addValue("name", name)
            .addValue("seq", seq)
            .addValue("kind", kind.name())
            .addValue("result", result)
            .addValue("resultType", resultType)
            .addValue("wakeAt", wakeAt == null ? null : Timestamp.from(wakeAt))
            .addValue("sleepMillis", sleepMillis)
            .addValue("elapsedMicros", elapsed.toNanos() / 1000);
        List<Written> written = this.jdbc.query(this.record, params, (rs, row) -> new Written(
                StoreSupport.instant(rs, "wake_at"), StoreSupport.instant(rs, "db_now")));
        return written.isEmpty() ? null : written.get(0);
    }

    /**
     * Reads one of a job's steps.
     * @param jobId the job
     * @param name the step
     * @return the step, or empty
     */
    public Optional<JobStep> step(long jobId, String name) {
        return this.jdbc.query(this.step, new MapSqlParameterSource("id", jobId).addValue("name", name), STEP).stream()
            .findFirst();
    }

    /**
     * Records that the attempt waits for a signal until a moment (the database clock plus the
     * timeout), under its lease, unless the job has a step of that name already (a signal that
     * arrived first).
     * @param lease the attempt's lease
     * @param name the wait's step name
     * @param seq its place
     * @param timeout how long it waits
     * @return what was written, its end included, or {@code null} when nothing was: the step exists,
     * or the attempt no longer holds the job
     */
    public Written awaitSignal(Lease lease, String name, int seq, Duration timeout) {
        List<Written> written = this.jdbc.query(this.awaitSignal, fenced(lease, name).addValue("seq", seq)
            .addValue("timeoutMillis", timeout.toMillis()), (rs, row) -> new Written(StoreSupport.instant(rs, "wake_at"),
                    StoreSupport.instant(rs, "db_now")));
        return written.isEmpty() ? null : written.get(0);
    }

    /**
     * Gives a signal that arrived before its wait the wait's place, under the attempt's lease.
     * @param lease the attempt's lease
     * @param name the wait's step name
     * @param seq its place
     * @return whether it was placed (no: the attempt no longer holds the job)
     */
    public boolean placeSignal(Lease lease, String name, int seq) {
        return this.jdbc.update(this.placeSignal, fenced(lease, name).addValue("seq", seq)) == 1;
    }

    /**
     * Ends a signal wait without its signal, under the attempt's lease.
     * @param lease the attempt's lease
     * @param name the wait's step name
     * @return whether it ended (no: the signal came meanwhile, or the attempt no longer holds the job)
     */
    public boolean timeOutSignal(Lease lease, String name) {
        return this.jdbc.update(this.timeOutSignal, fenced(lease, name)) == 1;
    }

    private static MapSqlParameterSource fenced(Lease lease, String name) {
        return new MapSqlParameterSource("id", lease.jobId()).addValue("epoch", lease.epoch()).addValue("name", name);
    }

    /**
     * Delivers a signal to a job on this database (signal_job, V32).
     * @param jobId the job
     * @param name the signal
     * @param payload its payload as JSON
     * @return what happened, as signal_job names it
     */
    public String signal(long jobId, String name, String payload) {
        return this.jdbc.queryForObject(this.signal, new MapSqlParameterSource("id", jobId).addValue("name", name)
            .addValue("payload", payload), String.class);
    }

    /**
     * Makes due the sleeping jobs whose signal arrived while their attempt was ending.
     * @return how many jobs were made due
     */
    public int wakeSignalled() {
        return this.jdbc.query(this.wakeSignalled, (rs, row) -> rs.getInt(1)).stream().findFirst().orElse(0);
    }

    private static JobStep.SignalState signal(String kind, String resolved) {
        if (!JobStep.Kind.SIGNAL.name().equals(kind)) {
            return null;
        }
        return resolved == null ? JobStep.SignalState.WAITING : JobStep.SignalState.valueOf(resolved);
    }

    /**
     * Drops the steps of jobs whose outcome the same transaction wrote, where the job ended unkept or
     * was re-run.
     * @param ids the jobs with steps whose outcome was written
     * @param rerun those of them that start again
     */
    void dropEnded(Collection<Long> ids, Collection<Long> rerun) {
        if (ids.isEmpty()) {
            return;
        }
        this.jdbc.update(this.dropEnded, new MapSqlParameterSource("ids", SqlArrays.bigints(ids))
            .addValue("rerun", SqlArrays.bigints(rerun)));
    }
}
