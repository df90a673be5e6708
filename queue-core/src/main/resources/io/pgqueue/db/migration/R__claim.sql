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
-- A task with limits (p_limited: a JSON array of {"task", "want", and "concurrency" and/or
-- "permits", "millis", "burst"}) is claimed on its own first, under a transaction-scoped advisory
-- lock of the task held until this claim commits, so concurrent claims of it on any node see each
-- other's jobs: the claim counts the task's claimed jobs flagged "limited" (job_limited_idx) and
-- takes at most the concurrency left, and takes at most the whole permits of the task's token
-- bucket (task_rate, refilled at permits/millis up to burst, paid for what was claimed; such jobs'
-- started_at is the moment the permits were counted, so their claim times keep to the bucket). When a
-- limit, not the backlog, cut such a claim, a row without an id tells the caller: limit_wait_millis
-- is the time until the next permit, -1 for "until a slot frees", or -2 for "until a slot frees or
-- new jobs come" (a task with groups whose groups held jobs back). A task with groups ("groups":
-- "fair" or "sequence", "groupConcurrency") takes the ids claim_group_ids picks, another limited
-- task its due jobs in claim order. Then the tasks without limits are claimed together in one
-- statement, as before; a claim without limited tasks does nothing else.
-- The jobs a claim of a task with groups takes, at most p_want: the groups in rounds, in key order
-- from where the task's last claim stopped (task_group_cursor) around to it, one job per group and
-- round, so a group with a million jobs cannot starve one with ten. A group's jobs go in enqueue
-- (id) order. "fair" (p_sequence false): a group's next due READY job, unless p_group_limit of its
-- jobs are claimed already. "sequence": a group's first active job only, whatever its state — a
-- job waiting for its retry or running holds the group — and not while an earlier job of the group
-- that blocks on failure (header pgqueue.sequence = block) failed for good. held_back tells that
-- some group held its jobs back (at its limit, or its first job not claimable). Runs under the task's lock (claim_jobs), so the round
-- is the task's, across nodes. At most 256 groups are looked at per claim. When no group gives a
-- job, jobs without a group are claimed in the task's usual order.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.claim_group_ids(p_task text, p_want integer, p_sequence boolean,
                                                                 p_group_limit integer, OUT ids bigint[],
                                                                 OUT held_back boolean)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $groups$
DECLARE
    v_start text;
    v_pos text;
    v_group text;
    v_wrapped boolean;
    v_visits integer := 0;
    v_round integer;
    v_groups text[] := '{}';
    v_id bigint;
    v_due boolean;
BEGIN
    ids := '{}';
    held_back := false;
    SELECT cursor.group_key INTO v_start FROM ${flyway:defaultSchema}.task_group_cursor AS cursor WHERE cursor.task = p_task;
    v_start := coalesce(v_start, '');
    v_pos := v_start;
    <<rounds>>
    LOOP
        v_round := 0;
        v_wrapped := v_start = '';
        LOOP
            EXIT rounds WHEN cardinality(ids) >= p_want OR v_visits >= 256;
            v_group := NULL;
            SELECT j.headers ->> 'pgqueue.group' INTO v_group FROM ${flyway:defaultSchema}.job AS j
            WHERE j.task = p_task AND j.headers ? 'pgqueue.group' AND (j.headers ->> 'pgqueue.group') > v_pos
            ORDER BY j.headers ->> 'pgqueue.group'
            LIMIT 1;
            IF v_group IS NULL AND NOT v_wrapped THEN
                v_wrapped := true;
                v_pos := '';
                CONTINUE;
            END IF;
            EXIT WHEN v_group IS NULL OR (v_wrapped AND v_start <> '' AND v_group > v_start);
            v_pos := v_group;
            v_visits := v_visits + 1;
            v_id := NULL;
            IF p_sequence THEN
                SELECT j.id, j.state = 'READY' AND j.schedule_time <= now() AND j.attempt < j.max_attempts
                INTO v_id, v_due
                FROM ${flyway:defaultSchema}.job AS j
                WHERE j.task = p_task AND j.headers ? 'pgqueue.group' AND (j.headers ->> 'pgqueue.group') = v_group
                ORDER BY j.id
                LIMIT 1;
                IF v_id = ANY(ids) THEN
                    -- Taken by this claim in an earlier round: its group's next job waits for it.
                    held_back := true;
                    v_id := NULL;
                ELSIF NOT v_due OR EXISTS (
                        -- An earlier job's transaction may commit after a later job of the group
                        -- was claimed: one at a time still holds.
                        SELECT 1 FROM ${flyway:defaultSchema}.job AS held
                        WHERE held.task = p_task AND held.headers ? 'pgqueue.group'
                          AND (held.headers ->> 'pgqueue.group') = v_group AND held.state IN ('STARTING', 'RUNNING'))
                    OR EXISTS (
                        SELECT 1 FROM ${flyway:defaultSchema}.job_finished AS f
                        WHERE f.task = p_task AND (f.headers ->> 'pgqueue.group') = v_group AND f.state = 'FAILED'
                          AND f.headers ->> 'pgqueue.sequence' = 'block' AND f.id < v_id) THEN
                    -- Its first job runs, waits for its retry or failed: the group's other jobs wait.
                    held_back := true;
                    v_id := NULL;
                ELSE
                    SELECT j.id INTO v_id FROM ${flyway:defaultSchema}.job AS j
                    WHERE j.id = v_id AND j.state = 'READY'
                    FOR UPDATE SKIP LOCKED;
                END IF;
            ELSIF p_group_limit IS NOT NULL AND p_group_limit <= (
                    SELECT count(*) FROM ${flyway:defaultSchema}.job AS held
                    WHERE held.task = p_task AND held.headers ? 'pgqueue.group'
                      AND (held.headers ->> 'pgqueue.group') = v_group AND held.state IN ('STARTING', 'RUNNING'))
                    + coalesce(cardinality(array_positions(v_groups, v_group)), 0) THEN
                held_back := true;
            ELSE
                SELECT j.id INTO v_id FROM ${flyway:defaultSchema}.job AS j
                WHERE j.task = p_task AND j.headers ? 'pgqueue.group' AND (j.headers ->> 'pgqueue.group') = v_group
                  AND j.state = 'READY' AND j.schedule_time <= now() AND j.attempt < j.max_attempts
                  AND j.id <> ALL(ids)
                ORDER BY j.id
                LIMIT 1
                FOR UPDATE SKIP LOCKED;
            END IF;
            IF v_id IS NOT NULL THEN
                ids := ids || v_id;
                v_groups := v_groups || v_group;
                v_round := v_round + 1;
            END IF;
        END LOOP;
        EXIT WHEN v_round = 0;
        v_start := v_pos;
    END LOOP;
    IF cardinality(ids) = 0 AND NOT held_back AND v_visits < 256 THEN
        -- No group had a claimable job: jobs without a group (queued before the task had groups,
        -- or by a node without its group settings) are claimed in the task's usual order.
        ids := ARRAY(
            SELECT j.id FROM ${flyway:defaultSchema}.job AS j
            WHERE j.task = p_task AND j.state = 'READY' AND j.schedule_time <= now() AND j.attempt < j.max_attempts
              AND NOT (j.headers ? 'pgqueue.group')
            ORDER BY j.priority DESC, coalesce(j.delay_tolerance_deadline, j.schedule_time)
            LIMIT p_want
            FOR UPDATE SKIP LOCKED);
    END IF;
    IF v_visits > 0 THEN
        INSERT INTO ${flyway:defaultSchema}.task_group_cursor AS cursor (task, group_key) VALUES (p_task, v_pos)
        ON CONFLICT ON CONSTRAINT task_group_cursor_pkey DO UPDATE SET group_key = excluded.group_key;
    END IF;
END
$groups$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.claim_jobs(p_tasks text[], p_limits integer[], p_state text,
                                                            p_owner text, p_lease_millis bigint, p_limited jsonb)
RETURNS TABLE (id bigint, lease_epoch integer, task text, payload text, headers text, priority smallint,
               attempt integer, max_attempts integer, schedule_time timestamptz,
               delay_tolerance_deadline timestamptz, created_at timestamptz, started_at timestamptz,
               expected_status_change_time timestamptz, limit_wait_millis bigint)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_sort = off
SET jit = off
AS $claim$
DECLARE
    v_rule jsonb;
    v_task text;
    v_want integer;
    v_free integer;
    v_counted boolean;
    v_permits double precision;
    v_per_milli double precision;
    v_now timestamptz;
    v_ids bigint[];
    v_held_back boolean;
    v_claimed integer;
BEGIN
    -- The claim commits with the server's synchronous_commit, unlike the workers' other writes: a
    -- claim lost in a crash after its handler started would let the next claim hand out the same
    -- lease epoch, and the first holder's heartbeats and outcome would pass the fence of the second.
    IF p_limited IS NOT NULL THEN
        FOR v_rule IN SELECT rule FROM jsonb_array_elements(p_limited) AS rules(rule) LOOP
            v_task := v_rule ->> 'task';
            v_want := CAST(v_rule ->> 'want' AS integer);
            v_free := v_want;
            v_permits := NULL;
            v_now := NULL;
            v_counted := v_rule ? 'concurrency';
            v_held_back := false;
            PERFORM pg_advisory_xact_lock(hashtextextended('${flyway:defaultSchema}.claim:' || v_task, 0));
            IF v_counted THEN
                v_free := least(v_free, CAST(v_rule ->> 'concurrency' AS integer) - (
                    SELECT count(*) FROM ${flyway:defaultSchema}.job AS held
                    WHERE held.task = v_task AND held.limited AND held.state IN ('STARTING', 'RUNNING')));
            END IF;
            IF v_rule ? 'permits' THEN
                -- Taken after the lock: the previous claim of the task may have committed a moment ago.
                v_now := clock_timestamp();
                v_per_milli := CAST(v_rule ->> 'permits' AS double precision) / CAST(v_rule ->> 'millis' AS double precision);
                SELECT least(CAST(v_rule ->> 'burst' AS double precision),
                             bucket.permits + extract(epoch FROM v_now - bucket.refilled_at) * 1000 * v_per_milli)
                INTO v_permits
                FROM ${flyway:defaultSchema}.task_rate AS bucket WHERE bucket.task = v_task;
                IF NOT FOUND THEN
                    v_permits := CAST(v_rule ->> 'burst' AS double precision);
                END IF;
                v_permits := greatest(v_permits, 0);
                v_free := least(v_free, CAST(floor(v_permits) AS integer));
            END IF;
            v_free := greatest(v_free, 0);
            v_ids := '{}';
            IF v_free > 0 AND v_rule ? 'groups' THEN
                SELECT picked.ids, picked.held_back INTO v_ids, v_held_back
                FROM ${flyway:defaultSchema}.claim_group_ids(v_task, v_free, v_rule ->> 'groups' = 'sequence',
                                                             CAST(v_rule ->> 'groupConcurrency' AS integer)) AS picked;
            ELSIF v_free > 0 THEN
                v_ids := ARRAY(
                    SELECT ready.id FROM ${flyway:defaultSchema}.job AS ready
                    WHERE ready.task = v_task AND ready.state = 'READY' AND ready.schedule_time <= now()
                      AND ready.attempt < ready.max_attempts
                    ORDER BY ready.priority DESC, coalesce(ready.delay_tolerance_deadline, ready.schedule_time)
                    LIMIT v_free
                    FOR UPDATE SKIP LOCKED);
            END IF;
            v_claimed := 0;
            IF cardinality(v_ids) > 0 THEN
                RETURN QUERY
                    UPDATE ${flyway:defaultSchema}.job AS claimed
                    SET state = p_state, lease_owner = p_owner, lease_epoch = claimed.lease_epoch + 1,
                        attempt = claimed.attempt + 1, started_at = coalesce(v_now, now()), limited = v_counted,
                        expected_status_change_time = now() + p_lease_millis * interval '1 millisecond'
                    WHERE claimed.id = ANY(v_ids)
                    RETURNING claimed.id, claimed.lease_epoch, claimed.task, CAST(claimed.payload AS text),
                              CAST(claimed.headers AS text), claimed.priority, claimed.attempt, claimed.max_attempts,
                              claimed.schedule_time, claimed.delay_tolerance_deadline, claimed.created_at,
                              claimed.started_at, claimed.expected_status_change_time, CAST(NULL AS bigint);
                GET DIAGNOSTICS v_claimed = ROW_COUNT;
            END IF;
            IF v_permits IS NOT NULL THEN
                INSERT INTO ${flyway:defaultSchema}.task_rate AS bucket (task, permits, refilled_at)
                VALUES (v_task, v_permits - v_claimed, v_now)
                ON CONFLICT ON CONSTRAINT task_rate_pkey
                DO UPDATE SET permits = excluded.permits, refilled_at = excluded.refilled_at;
            END IF;
            IF (v_claimed = v_free AND v_claimed < v_want) OR v_held_back THEN
                -- A limit cut the claim: the rate if its permits ran out, else the concurrency, else
                -- the groups (a group at its limit, a sequence waiting on its first job).
                RETURN QUERY SELECT CAST(NULL AS bigint), CAST(NULL AS integer), v_task, CAST(NULL AS text),
                    CAST(NULL AS text), CAST(NULL AS smallint), CAST(NULL AS integer), CAST(NULL AS integer),
                    CAST(NULL AS timestamptz), CAST(NULL AS timestamptz), CAST(NULL AS timestamptz),
                    CAST(NULL AS timestamptz), CAST(NULL AS timestamptz),
                    CASE WHEN v_permits IS NOT NULL AND v_permits - v_claimed < 1
                         THEN CAST(ceil((1 - (v_permits - v_claimed)) / v_per_milli) AS bigint)
                         WHEN v_claimed = v_free AND v_claimed < v_want THEN -1
                         ELSE -2 END;
            END IF;
        END LOOP;
    END IF;
    IF cardinality(p_tasks) > 0 THEN
        RETURN QUERY
            UPDATE ${flyway:defaultSchema}.job AS claimed
            SET state = p_state, lease_owner = p_owner, lease_epoch = claimed.lease_epoch + 1,
                attempt = claimed.attempt + 1, started_at = now(), limited = false,
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
                      claimed.started_at, claimed.expected_status_change_time, CAST(NULL AS bigint);
    END IF;
END
$claim$;

-- The claim without limits, for nodes of the previous release during a rolling upgrade.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.claim_jobs(p_tasks text[], p_limits integer[], p_state text,
                                                            p_owner text, p_lease_millis bigint)
RETURNS TABLE (id bigint, lease_epoch integer, task text, payload text, headers text, priority smallint,
               attempt integer, max_attempts integer, schedule_time timestamptz,
               delay_tolerance_deadline timestamptz, created_at timestamptz, started_at timestamptz,
               expected_status_change_time timestamptz)
LANGUAGE sql
AS $claim$
    SELECT claimed.id, claimed.lease_epoch, claimed.task, claimed.payload, claimed.headers, claimed.priority,
           claimed.attempt, claimed.max_attempts, claimed.schedule_time, claimed.delay_tolerance_deadline,
           claimed.created_at, claimed.started_at, claimed.expected_status_change_time
    FROM ${flyway:defaultSchema}.claim_jobs(p_tasks, p_limits, p_state, p_owner, p_lease_millis, NULL) AS claimed
$claim$;
