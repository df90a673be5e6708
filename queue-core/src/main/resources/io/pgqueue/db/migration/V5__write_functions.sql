-- pgqueue schema, version 5: the workers' fenced writes (start, heartbeat, outcome) as functions,
-- like the claim (V4), so that their plans are made once per connection.
--
-- As statements with bound arrays they were planned anew on every call: a one-job outcome spent
-- 0.36 ms planning against 0.17 ms executing, a one-job start 0.15 ms against 0.14 ms (EXPLAIN
-- SUMMARY, warm backend). At moderate rates a batch holds one or two jobs, so most of the server's
-- time for these writes went to planning. The SET clauses apply to each function's own statements:
--   plan_cache_mode  the generic plan from the first call on;
--   enable_seqscan, enable_bitmapscan, enable_hashjoin, enable_mergejoin, enable_sort
--                    every plan left drives one primary-key probe per input row, whatever the
--                    table held when the plan was made (a plan kept from a one-row table could
--                    otherwise scan the whole table, or hash it, once per write);
--   jit              off, as for the claim: a generic plan's cost can pass jit_above_cost.
-- Names are qualified with the queue's schema: a body is resolved with the caller's search_path.
-- Output columns are named like table columns; #variable_conflict use_column makes any such name
-- in a body mean the column.

-- The rows of a batch of leases that still hold, locked in input order (the callers pass job id
-- order, so two batches cannot deadlock), one primary-key probe per lease. FOR UPDATE returns the
-- newest row version: a lease whose epoch changed while the lock was awaited drops out, and a
-- re-run or cancel request committed meanwhile is seen. The state is checked after the lock:
-- inside the probe it matched job_lease_idx's predicate, and the planner walked that index.
CREATE FUNCTION held_leases(p_ids bigint[], p_epochs integer[], p_states text[])
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

-- STARTING -> RUNNING for the leases still held, renewing them. The workers' own writes do not
-- wait for the WAL flush: a start lost in a crash leaves the lease to expire, and the job runs
-- again (at-least-once holds).
CREATE FUNCTION mark_running(p_ids bigint[], p_epochs integer[], p_lease_millis bigint)
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
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        WITH held AS MATERIALIZED (
            SELECT h.id FROM ${flyway:defaultSchema}.held_leases(p_ids, p_epochs, ARRAY['STARTING']) AS h
        )
        UPDATE ${flyway:defaultSchema}.job AS job
        SET state = 'RUNNING', expected_status_change_time = now() + p_lease_millis * interval '1 millisecond'
        FROM held
        WHERE job.id = held.id
        RETURNING job.id, job.task, job.state, job.cancel_requested;
END
$mark$;

-- Renews the leases still held and stores reported progress (per lease, null keeps the stored
-- one); reports cancellation requests. Not flushed before returning, as for the start.
CREATE FUNCTION renew_leases(p_ids bigint[], p_epochs integer[], p_progress text[], p_lease_millis bigint)
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
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        WITH held AS MATERIALIZED (
            SELECT h.id, h.ord
            FROM ${flyway:defaultSchema}.held_leases(p_ids, p_epochs, ARRAY['STARTING', 'RUNNING']) AS h
        )
        UPDATE ${flyway:defaultSchema}.job AS job
        SET expected_status_change_time = now() + p_lease_millis * interval '1 millisecond',
            progress = coalesce(p_progress[held.ord], job.progress)
        FROM held
        WHERE job.id = held.id
        RETURNING job.id, job.task, job.state, job.cancel_requested;
END
$renew$;

-- Writes the outcomes of many attempts, each fenced by its lease (held_leases locks the rows
-- first). Then: retry -> READY after the delay; released (shutdown) -> READY at once, the attempt
-- given back and its place in the queue kept (its schedule unchanged); completed/failed with a
-- re-run requested -> READY at once with a fresh attempt budget; a failure of a job whose
-- cancellation was requested -> CANCELLED; anything else leaves the hot table for job_finished
-- (completed rows only when p_keep_completed). Returns the state each job moved to. Not flushed
-- before returning: an outcome lost in a crash leaves the lease to expire, and the job runs again.
CREATE FUNCTION record_outcomes(p_ids bigint[], p_epochs integer[], p_kinds text[], p_delays bigint[],
                                p_errors text[], p_progress text[], p_keep_completed boolean)
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
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        WITH leased AS MATERIALIZED (
            SELECT * FROM ${flyway:defaultSchema}.held_leases(p_ids, p_epochs, ARRAY['STARTING', 'RUNNING'])
        ), held AS MATERIALIZED (
            -- Each lease's outcome by its position in the input: a join on the position would be a
            -- nested loop over the whole input per lease, the only join these functions may plan.
            SELECT leased.id, leased.task, input.delay_ms, input.error, input.progress, input.kind,
                   CASE WHEN leased.cancel_requested AND input.kind <> 'COMPLETED' THEN 'CANCELLED'
                        WHEN input.kind IN ('RETRY', 'RELEASED') THEN 'READY'
                        WHEN leased.rerun_requested AND input.kind IN ('COMPLETED', 'FAILED') THEN 'RERUN'
                        ELSE input.kind END AS next_state
            FROM leased, LATERAL (SELECT p_kinds[leased.ord] AS kind, p_delays[leased.ord] AS delay_ms,
                                         p_errors[leased.ord] AS error, p_progress[leased.ord] AS progress) input
        ), requeued AS (
            UPDATE ${flyway:defaultSchema}.job AS job
            SET state = 'READY', lease_owner = NULL, expected_status_change_time = NULL, rerun_requested = false,
                attempt = CASE WHEN held.next_state = 'RERUN' THEN 0
                               WHEN held.kind = 'RELEASED' THEN job.attempt - 1
                               ELSE job.attempt END,
                schedule_time = CASE WHEN held.kind = 'RELEASED' THEN job.schedule_time ELSE s.schedule_time END,
                delay_tolerance_deadline = CASE WHEN held.kind = 'RELEASED' THEN job.delay_tolerance_deadline
                    ELSE s.schedule_time + (job.delay_tolerance_deadline - job.schedule_time) END,
                last_error = coalesce(held.error, job.last_error),
                progress = coalesce(held.progress, job.progress)
            FROM held, LATERAL (SELECT now() + held.delay_ms * interval '1 millisecond' AS schedule_time) s
            WHERE job.id = held.id AND held.next_state IN ('READY', 'RERUN')
        ), finished AS (
            DELETE FROM ${flyway:defaultSchema}.job AS job USING held
            WHERE job.id = held.id AND held.next_state IN ('COMPLETED', 'FAILED', 'CANCELLED')
            RETURNING job.*, held.kind, held.next_state, held.error, held.progress AS reported_progress
        ), archived AS (
            INSERT INTO ${flyway:defaultSchema}.job_finished (id, task, state, priority, payload, headers,
                    schedule_time, delay_tolerance_deadline, attempt, max_attempts, lease_owner, dedup_key,
                    last_error, created_at, started_at, finished_at, progress, lease_epoch)
            SELECT f.id, f.task, f.next_state, f.priority, f.payload, f.headers, f.schedule_time,
                   f.delay_tolerance_deadline,
                   -- A released job cancelled on its way back did not use up its attempt.
                   CASE WHEN f.kind = 'RELEASED' THEN f.attempt - 1 ELSE f.attempt END, f.max_attempts,
                   f.lease_owner, f.dedup_key, coalesce(f.error, f.last_error), f.created_at, f.started_at, now(),
                   coalesce(f.reported_progress, f.progress), f.lease_epoch
            FROM finished AS f
            WHERE f.next_state <> 'COMPLETED' OR p_keep_completed
        )
        SELECT held.id, held.task, CASE WHEN held.next_state = 'RERUN' THEN 'READY' ELSE held.next_state END
        FROM held;
END
$record$;
