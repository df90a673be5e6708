-- pgqueue schema, version 32: signals to durable handlers.
--
-- A handler waits for a signal with TaskContext.awaitSignal: a step of kind SIGNAL named
-- 'signal:<name>', recorded at its place with the wait's end (wake_at) and no resolution; the job
-- snoozes until then. signal_job (QueueClient.signal, or SQL) resolves it as RECEIVED with the
-- signal's payload and makes the sleeping job due at once; a signal sent before the handler reaches
-- its wait is kept as a SIGNAL row without a place (seq -1) until it does. A wait whose end passed
-- without a signal is resolved TIMED_OUT by the handler. Signals live and move with their job's
-- steps.
ALTER TABLE job_step DROP CONSTRAINT job_step_kind;
ALTER TABLE job_step ADD CONSTRAINT job_step_kind CHECK (kind IN ('STEP', 'SLEEP', 'SIGNAL')) NOT VALID;
ALTER TABLE job_step DROP CONSTRAINT job_step_seq;
ALTER TABLE job_step ADD CONSTRAINT job_step_seq CHECK (seq >= -1) NOT VALID;

ALTER TABLE job_step ADD COLUMN resolved text CONSTRAINT job_step_resolved CHECK (resolved IN ('RECEIVED', 'TIMED_OUT'));

COMMENT ON COLUMN job_step.resolved IS 'A signal wait''s end: RECEIVED (result holds the payload), TIMED_OUT, or null while it waits';

-- Signals that arrived lately, for the sweep that wakes a job whose signal came while its attempt
-- was ending (TaskContext.awaitSignal).
CREATE INDEX job_step_signal_idx ON job_step (finished_at) WHERE kind = 'SIGNAL';

-- The jobs suspended now, for the pgqueue.jobs.suspended gauge: sleeps by their end (only those
-- ahead are read) and the signal waits still open.
CREATE INDEX job_step_sleep_idx ON job_step (wake_at) WHERE kind = 'SLEEP';

CREATE INDEX job_step_waiting_idx ON job_step (job_id) WHERE kind = 'SIGNAL' AND resolved IS NULL;

-- Delivers a signal to a job on this database. Returns WOKEN (the job waited for it and is due now),
-- DELIVERED (it waits for it in a running attempt, or waits for the dependencies it runs after),
-- STORED (kept until the handler waits for it), DUPLICATE (a signal of that name came before),
-- TOO_LATE (its wait timed out), FINISHED (the job ended) or NOT_FOUND.
CREATE FUNCTION signal_job(p_job_id bigint, p_name text, p_payload jsonb DEFAULT 'null')
RETURNS text
LANGUAGE plpgsql
AS $signal$
DECLARE
    v_job record;
    v_step record;
    v_step_name text := 'signal:' || p_name;
BEGIN
    IF p_name IS NULL OR length(p_name) < 1 OR length(p_name) > 190 THEN
        RAISE EXCEPTION 'A signal needs a name of 1 to 190 characters, not %', coalesce('''' || p_name || '''', 'null')
            USING ERRCODE = '22023';
    END IF;
    -- The job's row is share-locked: an outcome that changes it waits for this signal, or this
    -- signal for it and then sees the job as the outcome left it.
    SELECT j.id, j.task, j.state, j.attempt, j.lease_epoch INTO v_job
    FROM ${flyway:defaultSchema}.job AS j WHERE j.id = p_job_id FOR SHARE;
    IF NOT FOUND THEN
        IF EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.job_waiting AS w WHERE w.id = p_job_id) THEN
            INSERT INTO ${flyway:defaultSchema}.job_step (job_id, name, seq, kind, result, attempt, lease_epoch,
                                                          started_at, resolved)
            VALUES (p_job_id, v_step_name, -1, 'SIGNAL', coalesce(p_payload, 'null'), 0, 0, statement_timestamp(),
                    'RECEIVED')
            ON CONFLICT (job_id, name) DO NOTHING;
            RETURN CASE WHEN FOUND THEN 'STORED' ELSE 'DUPLICATE' END;
        END IF;
        IF EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.job_finished AS f WHERE f.id = p_job_id) THEN
            RETURN 'FINISHED';
        END IF;
        RETURN 'NOT_FOUND';
    END IF;
    SELECT s.seq, s.kind, s.resolved INTO v_step
    FROM ${flyway:defaultSchema}.job_step AS s WHERE s.job_id = p_job_id AND s.name = v_step_name
    FOR UPDATE;
    IF NOT FOUND THEN
        INSERT INTO ${flyway:defaultSchema}.job_step (job_id, name, seq, kind, result, attempt, lease_epoch, started_at,
                                                      resolved)
        VALUES (p_job_id, v_step_name, -1, 'SIGNAL', coalesce(p_payload, 'null'), v_job.attempt, v_job.lease_epoch,
                statement_timestamp(), 'RECEIVED');
        RETURN 'STORED';
    END IF;
    IF v_step.kind <> 'SIGNAL' OR v_step.resolved = 'RECEIVED' THEN
        RETURN 'DUPLICATE';
    END IF;
    IF v_step.resolved = 'TIMED_OUT' THEN
        RETURN 'TOO_LATE';
    END IF;
    UPDATE ${flyway:defaultSchema}.job_step AS s
    SET resolved = 'RECEIVED', result = coalesce(p_payload, 'null'), finished_at = statement_timestamp()
    WHERE s.job_id = p_job_id AND s.name = v_step_name;
    IF v_job.state = 'READY' THEN
        UPDATE ${flyway:defaultSchema}.job AS j
        SET schedule_time = statement_timestamp(),
            delay_tolerance_deadline = statement_timestamp() + (j.delay_tolerance_deadline - j.schedule_time)
        WHERE j.id = p_job_id AND j.schedule_time > statement_timestamp();
        PERFORM pg_notify('${flyway:defaultSchema}.' || v_job.task, '');
        RETURN 'WOKEN';
    END IF;
    RETURN 'DELIVERED';
END
$signal$;

COMMENT ON FUNCTION signal_job(bigint, text, jsonb) IS 'pgqueue signal_job revision 1: signals to durable handlers';
