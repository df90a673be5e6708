-- pgqueue: the job listing operators page through (QueueAdmin.jobs, the console), current
-- definition (repeatable migration: see R__claim.sql).
--
-- One page of one group of jobs, in keyset order, never OFFSET:
--   COMPLETED, FAILED, CANCELLED  job_finished, newest first: (finished_at, id) descending, after
--                                 (p_after_time, p_after_id); the time range bounds finished_at;
--   READY, SCHEDULED, RUNNING     job (READY due now, READY due later, STARTING or RUNNING) and
--   WAITING                       job_waiting, oldest first: id ascending, after p_after_id; the
--                                 time range bounds created_at.
-- The optional filters (task, time range, dedup key, text in the last error) make the statement
-- differ from call to call, so it is built here and planned with the call's values (EXECUTE):
-- one prepared statement with "p IS NULL OR column = p" filters would get a generic plan that can
-- use no index. The SET clauses leave the planner index scans only: on 10,000,000 finished jobs a
-- sequential scan or bitmap scan of the whole time range, then a sort, looked cheaper to it for a
-- rare error text (1.8 s) than walking job_finished_retention_idx backwards until the page is full
-- (6 ms). A FAILED or CANCELLED page of a task walks job_finished_failed_idx or
-- job_finished_cancelled_idx, a dedup key job_finished_dedup_idx (under 1 ms each on 10,000,000
-- finished jobs). Two pages read more, as there is no index for them: a COMPLETED page of a task
-- reads the completed jobs of every task newer than its last job (no index of completed jobs by
-- task: each would slow the drain's archive writes; 4 s for a task whose jobs all finished before
-- 9,700,000 others), and a text in the error reads every job of the group and time range that
-- holds no match (1 s for 200,000 failed jobs). The time range bounds both.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.list_jobs(p_group text, p_task text, p_from timestamptz,
                                                           p_to timestamptz, p_dedup_key text, p_error text,
                                                           p_after_time timestamptz, p_after_id bigint,
                                                           p_limit integer)
RETURNS TABLE (id bigint, task text, state text, priority smallint, attempt integer, max_attempts integer,
               created_at timestamptz, schedule_time timestamptz, started_at timestamptz,
               finished_at timestamptz, dedup_key text, error text, lease_owner text)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $list$
DECLARE
    v_from text;
    v_where text;
    v_time text;
    v_order text;
    v_columns text;
    v_finished boolean := p_group IN ('COMPLETED', 'FAILED', 'CANCELLED');
BEGIN
    -- The first line of the last error, at most 300 characters: a page holds no stack traces.
    IF v_finished THEN
        v_from := '${flyway:defaultSchema}.job_finished AS j';
        v_where := 'j.state = $1';
        v_time := 'j.finished_at';
        v_order := 'j.finished_at DESC, j.id DESC';
        v_columns := 'j.state, j.priority, j.attempt, j.max_attempts, j.created_at, j.schedule_time, j.started_at, '
                     'j.finished_at, j.dedup_key, left(split_part(j.last_error, E''\n'', 1), 300), j.lease_owner';
        IF p_after_id IS NOT NULL THEN
            v_where := v_where || ' AND j.finished_at <= $7 AND (j.finished_at < $7 OR j.id < $8)';
        END IF;
    ELSIF p_group = 'WAITING' THEN
        v_from := '${flyway:defaultSchema}.job_waiting AS j';
        v_where := 'true';
        v_time := 'j.created_at';
        v_order := 'j.id';
        v_columns := '''WAITING'', j.priority, 0, j.max_attempts, j.created_at, coalesce(j.run_at, j.created_at), '
                     'CAST(NULL AS timestamptz), CAST(NULL AS timestamptz), CAST(NULL AS text), CAST(NULL AS text), '
                     'CAST(NULL AS text)';
    ELSIF p_group IN ('READY', 'SCHEDULED', 'RUNNING') THEN
        v_from := '${flyway:defaultSchema}.job AS j';
        v_where := CASE p_group
                       WHEN 'READY' THEN 'j.state = ''READY'' AND j.schedule_time <= statement_timestamp()'
                       WHEN 'SCHEDULED' THEN 'j.state = ''READY'' AND j.schedule_time > statement_timestamp()'
                       ELSE 'j.state IN (''STARTING'', ''RUNNING'')' END;
        v_time := 'j.created_at';
        v_order := 'j.id';
        v_columns := 'j.state, j.priority, j.attempt, j.max_attempts, j.created_at, j.schedule_time, j.started_at, '
                     'CAST(NULL AS timestamptz), j.dedup_key, left(split_part(j.last_error, E''\n'', 1), 300), '
                     'j.lease_owner';
    ELSE
        RAISE EXCEPTION 'unknown job group %', p_group USING ERRCODE = '22023';
    END IF;
    IF p_after_id IS NOT NULL AND NOT v_finished THEN
        v_where := v_where || ' AND j.id > $8';
    END IF;
    IF p_task IS NOT NULL THEN
        v_where := v_where || ' AND j.task = $2';
    END IF;
    IF p_from IS NOT NULL THEN
        v_where := v_where || ' AND ' || v_time || ' >= $3';
    END IF;
    IF p_to IS NOT NULL THEN
        v_where := v_where || ' AND ' || v_time || ' < $4';
    END IF;
    IF p_dedup_key IS NOT NULL THEN
        v_where := v_where || CASE WHEN p_group = 'WAITING' THEN ' AND false' ELSE ' AND j.dedup_key = $5' END;
    END IF;
    IF p_error IS NOT NULL THEN
        v_where := v_where || CASE WHEN p_group = 'WAITING' THEN ' AND false'
                                   ELSE ' AND strpos(lower(j.last_error), $6) > 0' END;
    END IF;
    RETURN QUERY EXECUTE
        'SELECT j.id, j.task, ' || v_columns || ' FROM ' || v_from || ' WHERE ' || v_where
        || ' ORDER BY ' || v_order || ' LIMIT $9'
        USING p_group, p_task, p_from, p_to, p_dedup_key, lower(p_error), p_after_time, p_after_id, p_limit;
END
$list$;
