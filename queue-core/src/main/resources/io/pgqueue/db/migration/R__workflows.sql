-- pgqueue: dependencies between jobs, current definitions (repeatable migration: see R__claim.sql).
--
-- A job whose end matters to others carries job.tracked. When such a row leaves the job table (an
-- outcome write, a cancel), a row trigger notes its id in a transaction-local setting, and a
-- deferred trigger (on the transaction's row in job_end_pending, so it fires once per transaction)
-- applies every noted end when the transaction commits: each dependent counts off
-- the dependencies that ended, in one pass over all of them with rows locked in id order (workflows
-- first, then dependents), so two transactions that end dependencies of the same dependents wait
-- for each other instead of deadlocking, and the dependent whose last dependency ends is released
-- by exactly one of them: the decrement runs on the locked row, and a transaction that waited for
-- the lock sees the other's committed count. A workflow whose last job ended is marked so and
-- counted in workflow_total. The result a job recorded becomes readable by its dependents in the
-- same pass, when the job completed under the claim that recorded it. Tracked rows are always
-- archived (job_finished keeps how they ended); partition moves leave them on their shard, so their
-- dependents find them.
--
-- Names are qualified with the queue's schema: a body is resolved with the caller's search_path.

-- Applies the end of jobs (ids ascending) to their dependents and workflows, and of the dependents
-- this cancels, until nothing more changes. How a job ended is its row in job_finished; a tracked
-- row that left the queue without one counts as cancelled. p_only, when given, restricts the
-- dependents counted (an enqueue applying dependencies that had ended before it).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.end_jobs(p_ids bigint[], p_only bigint[] DEFAULT NULL)
RETURNS void
LANGUAGE plpgsql
-- Every statement below starts from the ids it is given and reaches rows through primary keys and
-- job_dependency's keys; with these off no plan can scan or hash a whole table instead (a hash join
-- of the edges read all of job_dependency per call: 7 ms per batch of 80 ends with 20,000 edges).
SET enable_seqscan = off
SET enable_bitmapscan = off
SET enable_hashjoin = off
SET enable_mergejoin = off
SET jit = off
AS $end$
DECLARE
    v_ids bigint[] := p_ids;
    v_states text[];
    v_epochs integer[];
    v_job_workflows bigint[];
    v_workflows bigint[];
    v_cancelled bigint[];
    v_edge_jobs bigint[];
    v_edge_deps bigint[];
    v_edge_states text[];
    v_ended_workflows text[] := '{}';
    v_notified integer;
    v_awaited text;
    v_children_ended boolean;
BEGIN
    WHILE cardinality(v_ids) > 0 LOOP
        SELECT array_agg(coalesce(f.state, 'CANCELLED') ORDER BY i.id), array_agg(f.lease_epoch ORDER BY i.id),
               array_agg(CASE WHEN f.headers ->> 'pgqueue.workflow' ~ '^[0-9]{1,18}$'
                              THEN CAST(f.headers ->> 'pgqueue.workflow' AS bigint) END ORDER BY i.id),
               bool_or(f.headers ? 'pgqueue.parent')
        INTO v_states, v_epochs, v_job_workflows, v_children_ended
        FROM unnest(v_ids) AS i(id) LEFT JOIN ${flyway:defaultSchema}.job_finished AS f ON f.id = i.id;

        -- Callers awaiting these jobs (V22) learn of their end at this transaction's commit.
        WITH gone AS (
            DELETE FROM ${flyway:defaultSchema}.job_awaiter AS a WHERE a.job_id = ANY(v_ids) RETURNING a.job_id
        )
        SELECT string_agg(CAST(job_id AS text), ',') INTO v_awaited FROM gone;
        IF v_awaited IS NOT NULL THEN
            PERFORM pg_notify('${flyway:defaultSchema}/ended', v_awaited);
        END IF;

        -- The result of a job that completed becomes readable by its dependents, if the claim that
        -- completed it recorded it (lease_epoch; null: recorded before version 20). Any other result
        -- of the ended jobs (of a job that failed or was cancelled, or of an earlier attempt that
        -- failed or lost its lease) stays unread.
        UPDATE ${flyway:defaultSchema}.job_result AS r
        SET completed = true
        WHERE r.id = ANY(v_ids) AND NOT r.completed
          AND EXISTS (SELECT 1 FROM unnest(v_ids, v_states, v_epochs) AS e(id, state, epoch)
                      WHERE e.id = r.id AND e.state = 'COMPLETED' AND (r.lease_epoch IS NULL OR r.lease_epoch = e.epoch));

        -- The parents of ended child jobs (TaskContext.spawn) get each end as the signal
        -- 'child:<id>', with the state and the result read just above: a parent asleep in its wait
        -- for the child is due at once (signal_job, V32). Children share their parent's database.
        IF v_children_ended THEN
            PERFORM ${flyway:defaultSchema}.signal_job(CAST(f.headers ->> 'pgqueue.parent' AS bigint), 'child:' || f.id,
                        jsonb_build_object('state', f.state, 'result',
                            (SELECT r.result FROM ${flyway:defaultSchema}.job_result AS r WHERE r.id = f.id AND r.completed)))
            FROM ${flyway:defaultSchema}.job_finished AS f
            WHERE f.id = ANY(v_ids) AND f.headers ->> 'pgqueue.parent' ~ '^[0-9]{1,18}$';
        END IF;

        -- The children of a cancelled parent are cancelled with it, unless spawned detached
        -- (TaskContext.spawnDetached): a READY one at once, a claimed one asked to stop. The
        -- children are tracked: each end is applied as any tracked job's, at this commit.
        IF 'CANCELLED' = ANY(v_states) THEN
            WITH children AS (
                SELECT CAST(s.result #>> '{}' AS bigint) AS id
                FROM unnest(v_ids, v_states) AS e(id, state)
                JOIN ${flyway:defaultSchema}.job_step AS s ON s.job_id = e.id
                WHERE e.state = 'CANCELLED' AND s.kind = 'STEP' AND s.name LIKE 'spawn:%'
            ), cancelled AS (
                DELETE FROM ${flyway:defaultSchema}.job AS j
                WHERE j.id IN (SELECT c.id FROM children AS c) AND j.state = 'READY'
                  AND NOT (j.headers ? 'pgqueue.parent.detached')
                RETURNING j.*
            ), archived AS (
                INSERT INTO ${flyway:defaultSchema}.job_finished
                SELECT a.*
                FROM cancelled AS c,
                     LATERAL ${flyway:defaultSchema}.finished_job(c, 'CANCELLED', c.attempt, c.last_error, c.progress) AS a
            )
            UPDATE ${flyway:defaultSchema}.job AS j SET cancel_requested = true
            WHERE j.id IN (SELECT c.id FROM children AS c) AND j.state IN ('STARTING', 'RUNNING') AND NOT j.cancel_requested
              AND NOT (j.headers ? 'pgqueue.parent.detached');
        END IF;

        -- Workflows first, in id order.
        v_workflows := ARRAY(SELECT DISTINCT w FROM unnest(v_job_workflows) AS w WHERE w IS NOT NULL ORDER BY 1);
        IF p_only IS NULL AND cardinality(v_workflows) > 0 THEN
            PERFORM 1 FROM ${flyway:defaultSchema}.workflow
            WHERE id = ANY(v_workflows) ORDER BY id FOR NO KEY UPDATE;
            UPDATE ${flyway:defaultSchema}.workflow AS w
            SET completed = w.completed + c.completed, failed = w.failed + c.failed,
                cancelled = w.cancelled + c.cancelled
            FROM (SELECT e.workflow, count(*) FILTER (WHERE e.state = 'COMPLETED') AS completed,
                         count(*) FILTER (WHERE e.state = 'FAILED') AS failed,
                         count(*) FILTER (WHERE e.state = 'CANCELLED') AS cancelled
                  FROM unnest(v_job_workflows, v_states) AS e(workflow, state)
                  WHERE e.workflow IS NOT NULL
                  GROUP BY e.workflow) AS c
            WHERE w.id = c.workflow AND w.state = 'RUNNING';
            WITH ended AS (
                UPDATE ${flyway:defaultSchema}.workflow AS w
                SET state = CASE WHEN w.failed > 0 THEN 'FAILED' WHEN w.cancelled > 0 THEN 'CANCELLED' ELSE 'COMPLETED' END,
                    finished_at = now()
                WHERE w.id = ANY(v_workflows) AND w.state = 'RUNNING' AND w.completed + w.failed + w.cancelled >= w.jobs
                RETURNING w.state
            )
            SELECT v_ended_workflows || coalesce(array_agg(e.state), '{}') INTO v_ended_workflows FROM ended AS e;
        END IF;

        -- Edges of ended dependents are of no more use.
        IF p_only IS NULL THEN
            DELETE FROM ${flyway:defaultSchema}.job_dependency WHERE job_id = ANY(v_ids);
        END IF;

        -- The edges from the ended jobs to their dependents, with how each dependency ended.
        SELECT coalesce(array_agg(d.job_id), '{}'), coalesce(array_agg(d.depends_on), '{}'),
               coalesce(array_agg(e.state), '{}')
        INTO v_edge_jobs, v_edge_deps, v_edge_states
        FROM unnest(v_ids, v_states) AS e(id, state)
        JOIN ${flyway:defaultSchema}.job_dependency AS d ON d.depends_on = e.id
        WHERE p_only IS NULL OR d.job_id = ANY(p_only);

        IF cardinality(v_edge_jobs) > 0 THEN
            -- The dependents still waiting, locked in id order.
            PERFORM 1 FROM ${flyway:defaultSchema}.job_waiting
            WHERE id = ANY(v_edge_jobs) ORDER BY id FOR UPDATE;

            -- Dependents that cancel when a dependency failed or was cancelled leave for job_finished.
            WITH hit AS (
                SELECT h.job_id, min(h.dependency) AS dependency, (array_agg(h.state ORDER BY h.dependency))[1] AS state
                FROM unnest(v_edge_jobs, v_edge_deps, v_edge_states) AS h(job_id, dependency, state)
                WHERE h.state <> 'COMPLETED'
                GROUP BY h.job_id
            ), cancelled AS (
                DELETE FROM ${flyway:defaultSchema}.job_waiting AS w
                USING hit
                WHERE w.id = hit.job_id AND w.on_failure = 'CANCEL'
                RETURNING w.*
            ), archived AS (
                INSERT INTO ${flyway:defaultSchema}.job_finished
                SELECT a.*
                FROM cancelled AS c
                JOIN hit ON hit.job_id = c.id,
                     LATERAL ${flyway:defaultSchema}.cancelled_waiting_job(c,
                             'dependency ' || hit.dependency || ' ended ' || hit.state) AS a
            )
            SELECT coalesce(array_agg(c.id ORDER BY c.id), '{}') INTO v_cancelled FROM cancelled AS c;

            -- The others count the ended dependencies off; those left with none are released as READY.
            UPDATE ${flyway:defaultSchema}.job_waiting AS w
            SET pending = w.pending - c.ended, failed = w.failed + c.failed
            FROM (SELECT h.job_id, count(*) AS ended, count(*) FILTER (WHERE h.state <> 'COMPLETED') AS failed
                  FROM unnest(v_edge_jobs, v_edge_states) AS h(job_id, state)
                  GROUP BY h.job_id) AS c
            WHERE w.id = c.job_id;

            WITH released AS (
                DELETE FROM ${flyway:defaultSchema}.job_waiting AS w
                WHERE w.id = ANY(v_edge_jobs) AND w.pending = 0
                RETURNING w.*
            ), inserted AS (
                INSERT INTO ${flyway:defaultSchema}.job (id, task, priority, payload, headers, schedule_time,
                        delay_tolerance_deadline, max_attempts, created_at, partition, tracked)
                SELECT r.id, r.task, r.priority, r.payload,
                       r.headers || jsonb_build_object('pgqueue.dependencies.succeeded', (r.dependencies - r.failed)::text,
                                                       'pgqueue.dependencies.failed', r.failed::text),
                       s.due, s.due + r.tolerance_ms * interval '1 millisecond', r.max_attempts, r.created_at, r.partition, true
                FROM released AS r,
                     LATERAL (SELECT CASE WHEN r.run_at IS NOT NULL THEN greatest(r.run_at, now())
                                      ELSE now() + r.delay_ms * interval '1 millisecond' END AS due) AS s
                RETURNING id, task, schedule_time
            )
            SELECT count(pg_notify('${flyway:defaultSchema}.' || t.task, '')) INTO v_notified
            FROM (SELECT DISTINCT task FROM inserted WHERE schedule_time <= now()) AS t;
        ELSE
            v_cancelled := '{}';
        END IF;

        -- The cancelled dependents end in turn.
        v_ids := v_cancelled;
        p_only := NULL;
    END LOOP;
    -- The ended workflows are counted once, the rows locked in state order.
    IF cardinality(v_ended_workflows) > 0 THEN
        PERFORM 1 FROM ${flyway:defaultSchema}.workflow_total
        WHERE state = ANY(v_ended_workflows) ORDER BY state FOR NO KEY UPDATE;
        UPDATE ${flyway:defaultSchema}.workflow_total AS t
        SET workflows = t.workflows + e.n
        FROM (SELECT state, count(*) AS n FROM unnest(v_ended_workflows) AS state GROUP BY state) AS e
        WHERE t.state = e.state;
    END IF;
END
$end$;

-- The revision of end_jobs this release's code relies on: QueueSchema.requireMigrated compares it.
COMMENT ON FUNCTION ${flyway:defaultSchema}.end_jobs(bigint[], bigint[])
    IS 'pgqueue end_jobs revision 4: parents are signalled their children''s ends and cancel them';

-- Notes the end of a tracked job for apply_job_ends, in a setting local to the transaction; the
-- transaction's first end also inserts its row in job_end_pending, whose deferred trigger applies
-- them all at commit.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.note_job_end() RETURNS trigger
LANGUAGE plpgsql
AS $note$
DECLARE
    v_list text := current_setting('pgqueue.ended_jobs', true);
BEGIN
    PERFORM set_config('pgqueue.ended_jobs', coalesce(v_list, '') || OLD.id || ',', true);
    -- After the list holds the id: with constraints made immediate, the insert applies it at once.
    IF v_list IS NULL OR v_list = '' THEN
        INSERT INTO ${flyway:defaultSchema}.job_end_pending (txid) VALUES (txid_current()) ON CONFLICT DO NOTHING;
    END IF;
    RETURN NULL;
END
$note$;

-- Applies the ends noted in this transaction, at its commit.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.apply_job_ends() RETURNS trigger
LANGUAGE plpgsql
AS $apply$
DECLARE
    v_list text := current_setting('pgqueue.ended_jobs', true);
BEGIN
    DELETE FROM ${flyway:defaultSchema}.job_end_pending WHERE txid = NEW.txid;
    IF v_list IS NULL OR v_list = '' THEN
        RETURN NULL;
    END IF;
    PERFORM set_config('pgqueue.ended_jobs', '', true);
    PERFORM ${flyway:defaultSchema}.end_jobs(ARRAY(
        SELECT DISTINCT CAST(x AS bigint) FROM unnest(string_to_array(rtrim(v_list, ','), ',')) AS x ORDER BY 1));
    RETURN NULL;
END
$apply$;

DROP TRIGGER IF EXISTS job_end_noted ON ${flyway:defaultSchema}.job;
CREATE TRIGGER job_end_noted AFTER DELETE ON ${flyway:defaultSchema}.job
    FOR EACH ROW WHEN (OLD.tracked) EXECUTE FUNCTION ${flyway:defaultSchema}.note_job_end();

DROP TRIGGER IF EXISTS job_end_applied ON ${flyway:defaultSchema}.job_end_pending;
CREATE CONSTRAINT TRIGGER job_end_applied AFTER INSERT ON ${flyway:defaultSchema}.job_end_pending
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ${flyway:defaultSchema}.apply_job_ends();

-- Writes jobs that wait for others (p_jobs: a JSON array of {"id", "task", "priority", "payload",
-- "headers", "runAt", "delayMs", "toleranceMs", "maxAttempts", "partition", "workflow",
-- "onFailure", "dependsOn": [ids]}). A dependency is a job of this batch written before the call,
-- or one already in the queue: active or waiting (locked, and marked tracked, so that its end,
-- committed after this transaction, is applied to these dependents), or finished (its end is
-- applied here). Returns the dependencies found nowhere, and then writes nothing.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.add_waiting_jobs(p_jobs jsonb)
RETURNS TABLE (missing bigint)
LANGUAGE plpgsql
SET jit = off
AS $add$
DECLARE
    v_new bigint[];
    v_deps bigint[];
    v_active bigint[];
    v_waiting bigint[];
    v_finished bigint[];
BEGIN
    SELECT array_agg(CAST(j ->> 'id' AS bigint)) INTO v_new FROM jsonb_array_elements(p_jobs) AS j;
    SELECT coalesce(array_agg(DISTINCT CAST(d AS bigint) ORDER BY CAST(d AS bigint)), '{}') INTO v_deps
    FROM jsonb_array_elements(p_jobs) AS j, jsonb_array_elements_text(j -> 'dependsOn') AS d
    WHERE CAST(d AS bigint) <> ALL(v_new);
    -- In the order jobs move (waiting, active, finished), so that one moving meanwhile is found in
    -- its next place. KEY SHARE holds off a release or a completion (which delete the row) until
    -- this transaction ends, not the lease renewals and progress writes of a running dependency.
    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO v_waiting FROM (
        SELECT w.id FROM ${flyway:defaultSchema}.job_waiting AS w WHERE w.id = ANY(v_deps) ORDER BY w.id FOR KEY SHARE) AS a;
    SELECT coalesce(array_agg(id ORDER BY id), '{}') INTO v_active FROM (
        SELECT job.id FROM ${flyway:defaultSchema}.job AS job
        WHERE job.id = ANY(v_deps) AND job.id <> ALL(v_waiting) ORDER BY job.id FOR KEY SHARE) AS a;
    SELECT coalesce(array_agg(f.id ORDER BY f.id), '{}') INTO v_finished
    FROM ${flyway:defaultSchema}.job_finished AS f
    WHERE f.id = ANY(v_deps) AND f.id <> ALL(v_active) AND f.id <> ALL(v_waiting);
    RETURN QUERY
        SELECT d FROM unnest(v_deps) AS d
        WHERE d <> ALL(v_active) AND d <> ALL(v_waiting) AND d <> ALL(v_finished);
    IF FOUND THEN
        RETURN;
    END IF;
    -- The caller marks dependencies tracked in a transaction of its own first (a running dependency's
    -- row is not held for the length of this one); this catches any it could not.
    UPDATE ${flyway:defaultSchema}.job SET tracked = true WHERE id = ANY(v_active) AND NOT tracked;
    INSERT INTO ${flyway:defaultSchema}.job_waiting (id, task, priority, payload, headers, run_at, delay_ms, tolerance_ms,
            max_attempts, partition, workflow, on_failure, dependencies, pending)
    SELECT CAST(j ->> 'id' AS bigint), j ->> 'task', CAST(j ->> 'priority' AS smallint), j -> 'payload', j -> 'headers',
           CAST(j ->> 'runAt' AS timestamptz), coalesce(CAST(j ->> 'delayMs' AS bigint), 0), CAST(j ->> 'toleranceMs' AS bigint),
           CAST(j ->> 'maxAttempts' AS integer), coalesce(CAST(j ->> 'partition' AS integer), 0),
           CAST(j ->> 'workflow' AS bigint), j ->> 'onFailure',
           d.n, d.n
    FROM jsonb_array_elements(p_jobs) AS j,
         LATERAL (SELECT count(DISTINCT x) AS n FROM jsonb_array_elements_text(j -> 'dependsOn') AS x) AS d;
    INSERT INTO ${flyway:defaultSchema}.job_dependency (depends_on, job_id)
    SELECT DISTINCT CAST(d AS bigint), CAST(j ->> 'id' AS bigint)
    FROM jsonb_array_elements(p_jobs) AS j, jsonb_array_elements_text(j -> 'dependsOn') AS d;
    IF cardinality(v_finished) > 0 THEN
        PERFORM ${flyway:defaultSchema}.end_jobs(v_finished, v_new);
    END IF;
END
$add$;

-- Cancels a job that waits for its dependencies: it moves to job_finished as CANCELLED and its own
-- dependents learn of it. Returns its task, or nothing when no such job waits.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.cancel_waiting_job(p_id bigint)
RETURNS TABLE (task text)
LANGUAGE plpgsql
AS $cancel$
#variable_conflict use_column
DECLARE
    v_task text;
BEGIN
    -- The workflow first, as end_jobs locks it, then the job.
    PERFORM 1 FROM ${flyway:defaultSchema}.workflow AS wf
    WHERE wf.id = (SELECT w.workflow FROM ${flyway:defaultSchema}.job_waiting AS w WHERE w.id = p_id)
    FOR NO KEY UPDATE;
    WITH cancelled AS (
        DELETE FROM ${flyway:defaultSchema}.job_waiting AS w WHERE w.id = p_id RETURNING w.*
    ), archived AS (
        INSERT INTO ${flyway:defaultSchema}.job_finished
        SELECT a.* FROM cancelled AS c, LATERAL ${flyway:defaultSchema}.cancelled_waiting_job(c, 'cancelled while waiting') AS a
    )
    SELECT c.task INTO v_task FROM cancelled AS c;
    IF v_task IS NULL THEN
        RETURN;
    END IF;
    PERFORM ${flyway:defaultSchema}.end_jobs(ARRAY[p_id]);
    RETURN QUERY SELECT v_task;
END
$cancel$;
