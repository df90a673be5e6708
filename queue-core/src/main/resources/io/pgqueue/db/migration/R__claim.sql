-- pgqueue: the claim, current definition. Versioned migrations (V*) change tables; the functions
-- live in these repeatable migrations (R__*), which Flyway runs after the versioned ones and again
-- whenever a file changes. CREATE OR REPLACE keeps a function's signature: changing its arguments
-- or result needs DROP FUNCTION first, here.
--
-- The claim is a PL/pgSQL function, not a statement, so that its plan is made once per connection:
-- as a statement with bound arrays, PostgreSQL plans it anew on every call (a generic plan assumes
-- 10 rows per unnest and always looks dearer than a custom one), 0.15-0.25 ms of planning per
-- claim, most of a one-job claim at low rates. A PL/pgSQL function keeps its plans for the life
-- of the connection; the SET clauses below apply to its own statements only:
--   plan_cache_mode  the generic plan from the first call on (no planning per call);
--   enable_seqscan, enable_bitmapscan, enable_sort  a plan made while the table was nearly
--                    empty (or before any statistics) would otherwise scan the whole table or sort
--                    every READY row of a task; with these off the only plan left walks
--                    job_claim_idx in claim order and probes job_pkey, whatever the table's size;
--   jit              the generic plan's cost counts an unknown LIMIT as a tenth of the table, which
--                    passes jit_above_cost on a large table: 7-11 ms of compilation per call.
-- Names are qualified with the queue's schema: the body is resolved with the caller's search_path.
-- The claimed ids are collected as id = ANY(ARRAY(...)), not id IN (SELECT ...): with a generic
-- plan the IN form scanned the whole table, 314 ms per claim at 1 M rows.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.claim_jobs(p_tasks text[], p_limits integer[], p_state text,
                                                            p_owner text, p_lease_millis bigint)
RETURNS TABLE (id bigint, lease_epoch integer, task text, payload text, headers text, priority smallint,
               attempt integer, max_attempts integer, schedule_time timestamptz,
               delay_tolerance_deadline timestamptz, created_at timestamptz, started_at timestamptz,
               expected_status_change_time timestamptz)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET jit = off
AS $claim$
BEGIN
    -- Losing this commit in a crash leaves the jobs claimable again (at-least-once holds): the
    -- worker need not wait for the WAL flush. Lasts until the end of the claim's transaction.
    PERFORM set_config('synchronous_commit', 'off', true);
    RETURN QUERY
        UPDATE ${flyway:defaultSchema}.job AS claimed
        SET state = p_state, lease_owner = p_owner, lease_epoch = claimed.lease_epoch + 1,
            attempt = claimed.attempt + 1, started_at = now(),
            expected_status_change_time = now() + p_lease_millis * interval '1 millisecond'
        WHERE claimed.id = ANY(ARRAY(
            SELECT due.id
            FROM unnest(p_tasks, p_limits) AS wanted(task, lim)
            CROSS JOIN LATERAL (
                SELECT ready.id FROM ${flyway:defaultSchema}.job AS ready
                WHERE ready.task = wanted.task AND ready.state = 'READY' AND ready.schedule_time <= now()
                  AND ready.attempt < ready.max_attempts
                ORDER BY ready.priority DESC, coalesce(ready.delay_tolerance_deadline, ready.schedule_time)
                LIMIT wanted.lim
                FOR UPDATE SKIP LOCKED
            ) due
        ))
        RETURNING claimed.id, claimed.lease_epoch, claimed.task, CAST(claimed.payload AS text),
                  CAST(claimed.headers AS text), claimed.priority, claimed.attempt, claimed.max_attempts,
                  claimed.schedule_time, claimed.delay_tolerance_deadline, claimed.created_at,
                  claimed.started_at, claimed.expected_status_change_time;
END
$claim$;
