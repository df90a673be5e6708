-- pgqueue: the row a finished job leaves in job_finished, current definition (repeatable
-- migration: see R__claim.sql).
--
-- With cancelled_waiting_job below, the places that list job_finished's columns: the outcome functions (R__fenced_writes.sql)
-- and the cancel statement (JobStatements.CANCEL) archive the rows they delete from job as
--     INSERT INTO job_finished
--     SELECT a.* FROM deleted AS d, LATERAL finished_job(d, 'STATE', d.attempt, d.last_error, d.progress) AS a
-- A LANGUAGE sql function that returns SETOF, whose body is one SELECT and which is neither STRICT
-- nor VOLATILE nor carries SET clauses, is inlined into the statement that calls it in FROM: the
-- plan holds the column list written out, with no function call per row (QueueSchemaTests checks
-- that it is inlined). Adding a column to job_finished means adding it here too, in the same release.
--
-- p_job: the job as deleted from the active table (the row DELETE ... RETURNING job.* returns: the
-- job table's columns in their order, which PostgreSQL casts to the job row type); p_state: COMPLETED, FAILED or CANCELLED;
-- p_attempt, p_last_error, p_progress, p_history: the attempts it used, its last error, its progress
-- and its attempt history as they are archived, which its last attempt may have changed.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.finished_job(p_job ${flyway:defaultSchema}.job, p_state text,
                                                              p_attempt integer, p_last_error text, p_progress text,
                                                              p_history jsonb)
RETURNS SETOF ${flyway:defaultSchema}.job_finished
LANGUAGE sql STABLE
AS $finished$
    SELECT (p_job).id, (p_job).task, p_state, (p_job).priority, (p_job).payload, (p_job).headers,
           (p_job).schedule_time, (p_job).delay_tolerance_deadline, p_attempt, (p_job).max_attempts,
           (p_job).lease_owner, (p_job).dedup_key, p_last_error, (p_job).created_at, (p_job).started_at, now(),
           p_progress, (p_job).lease_epoch, (p_job).partition, p_history
$finished$;

COMMENT ON FUNCTION ${flyway:defaultSchema}.finished_job(${flyway:defaultSchema}.job, text, integer, text, text, jsonb)
    IS 'pgqueue finished_job revision 3: keeps the attempt history';

-- The same with the job's history as it is: the cancellation statement and the outcome functions
-- of earlier releases (JobStatements.CANCEL) call it. Inlined like the one it calls.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.finished_job(p_job ${flyway:defaultSchema}.job, p_state text,
                                                              p_attempt integer, p_last_error text, p_progress text)
RETURNS SETOF ${flyway:defaultSchema}.job_finished
LANGUAGE sql STABLE
AS $finished$
    SELECT * FROM ${flyway:defaultSchema}.finished_job(p_job, p_state, p_attempt, p_last_error, p_progress,
                                                      (p_job).history)
$finished$;

-- Its revision as the release before knew it, which nodes of that release check: what they rely on
-- (the archived row with its partition) holds; the history it carries along is this release's.
COMMENT ON FUNCTION ${flyway:defaultSchema}.finished_job(${flyway:defaultSchema}.job, text, integer, text, text)
    IS 'pgqueue finished_job revision 2: keeps the partition';

-- A job's attempt history with one attempt more (its JSON text), keeping the newest p_keep: a full
-- history drops its oldest attempt. No entry (a task that keeps no history) leaves it as it is. One expression without a subquery, so that PostgreSQL inlines
-- it into the outcome writes: with a history entry per job, an outcome write takes 5.5 µs per job
-- more than without (batches of 100 in psql), against 10 µs for a version that unnested and
-- aggregated the array.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.with_attempt(p_history jsonb, p_entry text, p_keep integer)
RETURNS jsonb
LANGUAGE sql IMMUTABLE
AS $attempt$
    SELECT CASE WHEN p_entry IS NULL THEN p_history
                WHEN p_history IS NULL THEN jsonb_build_array(CAST(p_entry AS jsonb))
                WHEN jsonb_array_length(p_history) < p_keep THEN p_history || jsonb_build_array(CAST(p_entry AS jsonb))
                ELSE (p_history - 0) || jsonb_build_array(CAST(p_entry AS jsonb)) END
$attempt$;

-- The row a job that waited for its dependencies leaves in job_finished when it is cancelled before
-- it ran (R__workflows.sql): CANCELLED, no attempt, the reason as its last error. Inlined like
-- finished_job; adding a column to job_finished means adding it here too.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.cancelled_waiting_job(p_job ${flyway:defaultSchema}.job_waiting,
                                                                       p_reason text)
RETURNS SETOF ${flyway:defaultSchema}.job_finished
LANGUAGE sql STABLE
AS $cancelled$
    SELECT (p_job).id, (p_job).task, 'CANCELLED', (p_job).priority, (p_job).payload, (p_job).headers, now(),
           CAST(NULL AS timestamptz), 0, (p_job).max_attempts, CAST(NULL AS text), CAST(NULL AS text), p_reason,
           (p_job).created_at, CAST(NULL AS timestamptz), now(), CAST(NULL AS text), 0, (p_job).partition,
           CAST(NULL AS jsonb)
$cancelled$;
