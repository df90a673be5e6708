-- pgqueue: the workers' fenced writes (start, heartbeat, outcome), current definitions (repeatable
-- migration: see R__claim.sql).
--
-- Functions, like the claim, so that their plans are made once per connection: as statements with
-- bound arrays they are planned on every call, a one-job outcome 0.36 ms planning against 0.17 ms
-- executing, a one-job start 0.15 ms against 0.14 ms (EXPLAIN SUMMARY, warm backend). The SET
-- clauses apply to each function's own statements:
--   plan_cache_mode  the generic plan from the first call on;
--   enable_seqscan, enable_bitmapscan, enable_hashjoin, enable_mergejoin, enable_sort
--                    every plan left drives primary-key probes, whatever the table held when the
--                    plan was made (a plan kept from a one-row table could otherwise scan the whole
--                    table, or hash it, once per write);
--   jit              off, as for the claim: a generic plan's cost can pass jit_above_cost.
--
-- No write joins the job table to the batch (UPDATE ... FROM, DELETE ... USING): with hash and
-- merge joins off, a plan kept from a connection's first call on a near-empty table walks the
-- whole primary key as the outer side of that join (60 ms and 40,000 rows fetched to complete 5
-- jobs on a 20,000-row table, auto_explain), growing with the backlog. Each write reaches its rows
-- through one primary-key scan with the batch's ids as array keys (job.id = ANY(p_ids); no other
-- index matches the conditions, so no plan can walk a whole index), and finds each row's lease
-- epoch and outcome in the input arrays by position: lease_position, a binary search of the ids,
-- which the callers pass strictly ascending (rows are locked in id order, so two batches cannot
-- deadlock).
--
-- The conditions name the lease, so a row another transaction changed while the write waited for
-- it is checked again in its newest version (READ COMMITTED) and left alone if the lease no longer
-- holds. States are written as state <> 'READY' (with the table's check constraint: STARTING or
-- RUNNING) so that no condition implies job_lease_idx's predicate. The workers' writes do not wait
-- for the WAL flush: one lost in a crash leaves the lease to expire, and the job runs again
-- (at-least-once holds).
--
-- Names are qualified with the queue's schema: a body is resolved with the caller's search_path.
-- Output columns are named like table columns; #variable_conflict use_column makes any such name in
-- a body mean the column.

-- The position of a job id in a batch's strictly ascending ids, or null when it is not there.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.lease_position(p_id bigint, p_ids bigint[]) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $position$
    SELECT CASE WHEN p_ids[width_bucket(p_id, p_ids)] = p_id THEN width_bucket(p_id, p_ids) END
$position$;

-- Fails unless the ids are strictly ascending, as lease_position needs them.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.require_ascending(p_ids bigint[]) RETURNS void
LANGUAGE plpgsql IMMUTABLE
AS $ascending$
BEGIN
    IF EXISTS (SELECT 1 FROM generate_subscripts(p_ids, 1) AS i WHERE i > 1 AND p_ids[i] <= p_ids[i - 1]) THEN
        RAISE EXCEPTION 'job ids must be strictly ascending, were %', p_ids USING ERRCODE = 'invalid_parameter_value';
    END IF;
END
$ascending$;

-- STARTING -> RUNNING for the leases still held, renewing them.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.mark_running(p_ids bigint[], p_epochs integer[], p_lease_millis bigint)
RETURNS TABLE (id bigint, task text, state text, cancel_requested boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $mark$
#variable_conflict use_column
BEGIN
    PERFORM ${flyway:defaultSchema}.require_ascending(p_ids);
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        UPDATE ${flyway:defaultSchema}.job AS job
        SET state = 'RUNNING', expected_status_change_time = now() + p_lease_millis * interval '1 millisecond'
        WHERE job.id = ANY(p_ids) AND job.state <> 'READY' AND job.state <> 'RUNNING'
          AND job.lease_epoch = p_epochs[${flyway:defaultSchema}.lease_position(job.id, p_ids)]
        RETURNING job.id, job.task, job.state, job.cancel_requested;
END
$mark$;

-- Renews the leases still held and stores reported progress (per lease, null keeps the stored
-- one); reports cancellation requests.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.renew_leases(p_ids bigint[], p_epochs integer[], p_progress text[],
                                                              p_lease_millis bigint)
RETURNS TABLE (id bigint, task text, state text, cancel_requested boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $renew$
#variable_conflict use_column
BEGIN
    PERFORM ${flyway:defaultSchema}.require_ascending(p_ids);
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        UPDATE ${flyway:defaultSchema}.job AS job
        SET expected_status_change_time = now() + p_lease_millis * interval '1 millisecond',
            progress = coalesce(p_progress[${flyway:defaultSchema}.lease_position(job.id, p_ids)], job.progress)
        WHERE job.id = ANY(p_ids) AND job.state <> 'READY'
          AND job.lease_epoch = p_epochs[${flyway:defaultSchema}.lease_position(job.id, p_ids)]
        RETURNING job.id, job.task, job.state, job.cancel_requested;
END
$renew$;

-- Completes attempts that report nothing else (no progress, no message): most batches. One DELETE
-- takes the rows whose lease still holds and that were not asked to re-run, with no lock taken
-- first (the DELETE locks them itself, and checks a row changed meanwhile in its newest version),
-- and archives them (finished_job, R__archive.sql) unless completed jobs are not kept. Leases still
-- held that it left (a re-run requested, or a row changed while it waited) go through
-- record_outcomes; lost leases are left out, as there. An attempt with an entry in p_history adds it
-- to its job's history as record_outcomes does.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.complete_jobs(p_ids bigint[], p_epochs integer[],
                                                               p_keep_completed boolean, p_history text[])
RETURNS TABLE (id bigint, task text, state text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $complete$
#variable_conflict use_column
DECLARE
    v_completed bigint;
    v_ids bigint[];
    v_epochs integer[];
    v_history text[];
    v_none text[];
BEGIN
    PERFORM ${flyway:defaultSchema}.require_ascending(p_ids);
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        WITH done AS (
            DELETE FROM ${flyway:defaultSchema}.job AS job
            WHERE job.id = ANY(p_ids) AND job.state <> 'READY' AND NOT job.rerun_requested
              AND job.lease_epoch = p_epochs[${flyway:defaultSchema}.lease_position(job.id, p_ids)]
            RETURNING job.*
        ), archived AS (
            INSERT INTO ${flyway:defaultSchema}.job_finished
            SELECT a.*
            FROM done AS d,
                 LATERAL (SELECT p_history[${flyway:defaultSchema}.lease_position(d.id, p_ids)] AS entry OFFSET 0) AS h,
                 LATERAL ${flyway:defaultSchema}.finished_job(d, 'COMPLETED', d.attempt, d.last_error, d.progress,
                         ${flyway:defaultSchema}.with_attempt(d.history, h.entry, 25)) AS a
            -- A tracked job's row says how it ended, for its dependents and workflow (R__workflows.sql).
            WHERE p_keep_completed OR d.tracked
        )
        SELECT d.id, d.task, 'COMPLETED' FROM done AS d;
    GET DIAGNOSTICS v_completed = ROW_COUNT;
    IF v_completed = cardinality(p_ids) THEN
        RETURN;
    END IF;
    SELECT array_agg(job.id ORDER BY job.id), array_agg(job.lease_epoch ORDER BY job.id),
           array_agg(p_history[${flyway:defaultSchema}.lease_position(job.id, p_ids)] ORDER BY job.id)
    INTO v_ids, v_epochs, v_history
    FROM ${flyway:defaultSchema}.job AS job
    WHERE job.id = ANY(p_ids) AND job.state <> 'READY'
      AND job.lease_epoch = p_epochs[${flyway:defaultSchema}.lease_position(job.id, p_ids)];
    IF v_ids IS NOT NULL THEN
        v_none := array_fill(NULL::text, ARRAY[cardinality(v_ids)]);
        RETURN QUERY
            SELECT r.id, r.task, r.state
            FROM ${flyway:defaultSchema}.record_outcomes(v_ids, v_epochs,
                    array_fill('COMPLETED'::text, ARRAY[cardinality(v_ids)]), array_fill(0::bigint, ARRAY[cardinality(v_ids)]),
                    v_none, v_none, p_keep_completed, v_history) AS r;
    END IF;
END
$complete$;

-- The completions without history entries: most batches, and the nodes of the release before.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.complete_jobs(p_ids bigint[], p_epochs integer[],
                                                               p_keep_completed boolean)
RETURNS TABLE (id bigint, task text, state text)
LANGUAGE sql
AS $complete$
    SELECT c.id, c.task, c.state
    FROM ${flyway:defaultSchema}.complete_jobs(p_ids, p_epochs, p_keep_completed, CAST(NULL AS text[])) AS c
$complete$;

-- The rows of a batch of leases that still hold, locked in input order, one primary-key probe per
-- lease: record_outcomes decides each job's next state on rows no one else can change meanwhile.
-- FOR UPDATE returns the newest row version: a lease whose epoch changed while the lock was awaited
-- drops out, and a re-run or cancel request committed meanwhile is seen. The state is checked after
-- the lock: inside the probe it would match job_lease_idx's predicate, and the planner would walk
-- that index.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.held_leases(p_ids bigint[], p_epochs integer[], p_states text[])
RETURNS TABLE (id bigint, ord bigint, task text, cancel_requested boolean, rerun_requested boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $held$
#variable_conflict use_column
BEGIN
    RETURN QUERY
        SELECT l.id, l.ord, j.task, j.cancel_requested, j.rerun_requested
        FROM unnest(p_ids, p_epochs) WITH ORDINALITY AS l(id, epoch, ord)
        CROSS JOIN LATERAL (
            SELECT job.task, job.state, job.cancel_requested, job.rerun_requested
            FROM ${flyway:defaultSchema}.job AS job
            WHERE job.id = l.id AND job.lease_epoch = l.epoch
            -- LIMIT keeps the planner from pushing the state check below into the probe.
            LIMIT 1
            FOR UPDATE
        ) j
        WHERE j.state = ANY(p_states);
END
$held$;

-- Writes the outcomes of many attempts, each fenced by its lease. The rows of the leases still
-- held are locked first (held_leases), so that each job's next state is decided on rows no one
-- else can change meanwhile; then one statement moves them, each row finding its decision by
-- position. The transitions: retry -> READY after the delay; released (shutdown) -> READY at once,
-- the attempt given back and its place in the queue kept (its schedule unchanged); rescued (lease
-- expired) -> READY at once, the attempt counted and its place kept, so it starts before the jobs
-- enqueued after it; snoozed (the handler asked to run later) -> READY after the delay, the attempt
-- given back (nor does the retry policy's backoff see it); completed or
-- failed with a re-run requested -> READY at once with a fresh attempt budget; anything but a
-- completion of a job whose cancellation was requested -> CANCELLED; anything else leaves the hot
-- table for job_finished (completed rows only when p_keep_completed). An attempt with an entry in
-- p_history (its JSON text; null for the jobs of tasks that keep no history) adds it to the job's
-- history in the same write, which keeps the newest 25 (QueueDefaults.MAX_HISTORY_ATTEMPTS).
-- Returns the state each job moved to.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.record_outcomes(p_ids bigint[], p_epochs integer[], p_kinds text[],
                                                                 p_delays bigint[], p_errors text[], p_progress text[],
                                                                 p_keep_completed boolean, p_history text[])
RETURNS TABLE (id bigint, task text, state text)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET enable_sort = off
SET jit = off
AS $record$
#variable_conflict use_column
DECLARE
    v_ids bigint[];
    v_ords integer[];
    v_next text[];
BEGIN
    PERFORM ${flyway:defaultSchema}.require_ascending(p_ids);
    PERFORM set_config('synchronous_commit', 'off', true);
    -- held_leases returns the leases still held in input order, so v_ids ascends too.
    SELECT array_agg(h.id), array_agg(h.ord),
           array_agg(CASE WHEN h.cancel_requested AND p_kinds[h.ord] <> 'COMPLETED' THEN 'CANCELLED'
                          WHEN p_kinds[h.ord] IN ('RETRY', 'RELEASED', 'RESCUED', 'SNOOZED') THEN 'READY'
                          WHEN h.rerun_requested AND p_kinds[h.ord] IN ('COMPLETED', 'FAILED') THEN 'RERUN'
                          ELSE p_kinds[h.ord] END)
    INTO v_ids, v_ords, v_next
    FROM ${flyway:defaultSchema}.held_leases(p_ids, p_epochs, ARRAY['STARTING', 'RUNNING']) AS h;
    IF v_ids IS NULL THEN
        RETURN;
    END IF;
    RETURN QUERY
        WITH requeued AS (
            UPDATE ${flyway:defaultSchema}.job AS job
            SET (state, lease_owner, expected_status_change_time, rerun_requested, attempt, schedule_time,
                 delay_tolerance_deadline, last_error, progress, history) = (
                SELECT 'READY', CAST(NULL AS text), CAST(NULL AS timestamptz), false,
                       CASE WHEN d.next = 'RERUN' THEN 0 WHEN d.kind IN ('RELEASED', 'SNOOZED') THEN job.attempt - 1
                            ELSE job.attempt END,
                       CASE WHEN d.kind IN ('RELEASED', 'RESCUED') THEN job.schedule_time ELSE d.due END,
                       CASE WHEN d.kind IN ('RELEASED', 'RESCUED') THEN job.delay_tolerance_deadline
                            ELSE d.due + (job.delay_tolerance_deadline - job.schedule_time) END,
                       coalesce(d.error, job.last_error), coalesce(d.progress, job.progress),
                       ${flyway:defaultSchema}.with_attempt(job.history, d.entry, 25)
                FROM (SELECT v_next[p.pos] AS next, p_kinds[v_ords[p.pos]] AS kind, p_errors[v_ords[p.pos]] AS error,
                             p_progress[v_ords[p.pos]] AS progress, p_history[v_ords[p.pos]] AS entry,
                             now() + p_delays[v_ords[p.pos]] * interval '1 millisecond' AS due
                      -- OFFSET 0 keeps the position a column, searched for once per row.
                      FROM (SELECT ${flyway:defaultSchema}.lease_position(job.id, v_ids) AS pos OFFSET 0) AS p) AS d)
            WHERE job.id = ANY(v_ids) AND v_next[${flyway:defaultSchema}.lease_position(job.id, v_ids)] IN ('READY', 'RERUN')
            RETURNING job.id, job.task, job.state
        ), finished AS (
            DELETE FROM ${flyway:defaultSchema}.job AS job
            WHERE job.id = ANY(v_ids)
              AND v_next[${flyway:defaultSchema}.lease_position(job.id, v_ids)] IN ('COMPLETED', 'FAILED', 'CANCELLED')
            RETURNING job.*
        ), archived AS (
            INSERT INTO ${flyway:defaultSchema}.job_finished
            SELECT a.*
            FROM finished AS f,
                 LATERAL (SELECT v_next[p.pos] AS next, p_kinds[v_ords[p.pos]] AS kind, p_errors[v_ords[p.pos]] AS error,
                                 p_progress[v_ords[p.pos]] AS progress, p_history[v_ords[p.pos]] AS entry
                          FROM (SELECT ${flyway:defaultSchema}.lease_position(f.id, v_ids) AS pos OFFSET 0) AS p) AS d,
                 LATERAL ${flyway:defaultSchema}.finished_job(f, d.next,
                         -- A released or snoozed job cancelled on its way back did not use up its attempt.
                         CASE WHEN d.kind IN ('RELEASED', 'SNOOZED') THEN f.attempt - 1 ELSE f.attempt END,
                         coalesce(d.error, f.last_error), coalesce(d.progress, f.progress),
                         ${flyway:defaultSchema}.with_attempt(f.history, d.entry, 25)) AS a
            WHERE d.next <> 'COMPLETED' OR p_keep_completed OR f.tracked
        )
        SELECT r.id, r.task, r.state FROM requeued AS r
        UNION ALL
        SELECT f.id, f.task, v_next[${flyway:defaultSchema}.lease_position(f.id, v_ids)] FROM finished AS f;
END
$record$;

-- The revision of the outcome writes this release's code relies on (it sends attempt histories).
-- QueueSchema.requireMigrated compares it, so that a node refuses to start on functions left over
-- from an older release by tooling that did not apply this file again.
COMMENT ON FUNCTION ${flyway:defaultSchema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean,
                                                          text[])
    IS 'pgqueue record_outcomes revision 5: attempts join their jobs'' histories';

-- The outcomes without history entries: the nodes of the release before, complete_jobs.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.record_outcomes(p_ids bigint[], p_epochs integer[], p_kinds text[],
                                                                 p_delays bigint[], p_errors text[], p_progress text[],
                                                                 p_keep_completed boolean)
RETURNS TABLE (id bigint, task text, state text)
LANGUAGE sql
AS $record$
    SELECT r.id, r.task, r.state
    FROM ${flyway:defaultSchema}.record_outcomes(p_ids, p_epochs, p_kinds, p_delays, p_errors, p_progress,
                                                 p_keep_completed, CAST(NULL AS text[])) AS r
$record$;

-- Its revision as the release before knew it, which nodes of that release check.
COMMENT ON FUNCTION ${flyway:defaultSchema}.record_outcomes(bigint[], integer[], text[], bigint[], text[], text[], boolean)
    IS 'pgqueue record_outcomes revision 4: snoozed attempts are given back';
