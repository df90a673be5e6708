-- pgqueue schema, version 31: the checkpoints of durable handlers.
--
-- A handler's step (TaskContext.step) and durable sleep (TaskContext.sleep) write one row here when
-- they complete, on the shard of the job, under the job's lease: only while the job is claimed under
-- the epoch of the attempt that ran them. When the job runs again, a step with a row returns its
-- recorded result instead of running. The rows live while their job does: a job that ends leaves
-- them to its row in job_finished (dropped with it) or, when that is not kept, they go with the
-- outcome that ended it; a job re-run by a deduplicated enqueue starts without them.
CREATE TABLE job_step (
    job_id      bigint      NOT NULL,
    name        text        NOT NULL,
    -- The step's place among the job's steps, from 0: a run that reaches another name at a recorded
    -- place has different steps than the run that recorded them.
    seq         integer     NOT NULL,
    kind        text        NOT NULL DEFAULT 'STEP',
    -- The step's value as JSON (null for a step that returns none) and its Java class.
    result      jsonb,
    result_type text,
    -- A durable sleep's end.
    wake_at     timestamptz,
    attempt     integer     NOT NULL,
    lease_epoch integer     NOT NULL,
    started_at  timestamptz NOT NULL,
    finished_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT job_step_pkey PRIMARY KEY (job_id, name),
    CONSTRAINT job_step_name CHECK (length(name) BETWEEN 1 AND 200),
    CONSTRAINT job_step_seq CHECK (seq >= 0),
    CONSTRAINT job_step_kind CHECK (kind IN ('STEP', 'SLEEP'))
);

-- The steps of finished jobs go with them, whichever statement deletes them (retention, bulk deletes,
-- a failed job brought to another shard); a failed job re-run by an operator keeps its steps, as its
-- row is back in the job table by the end of the statement that takes it out of job_finished.
CREATE FUNCTION drop_finished_steps() RETURNS trigger
LANGUAGE plpgsql
AS $drop$
BEGIN
    DELETE FROM ${flyway:defaultSchema}.job_step AS s
    USING gone AS g
    WHERE s.job_id = g.id
      AND NOT EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.job AS j WHERE j.id = g.id);
    RETURN NULL;
END
$drop$;

CREATE TRIGGER job_finished_drops_steps AFTER DELETE ON job_finished
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION drop_finished_steps();
