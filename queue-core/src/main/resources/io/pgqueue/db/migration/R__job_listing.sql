-- pgqueue: the job listing operators page through and search (QueueAdmin.jobs, the console), current
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

-- The FROM and WHERE clauses of a search (search_jobs, count_jobs): the groups and filters above,
-- and, besides, the jobs among some ids (p_ids), the jobs with all of some tags (p_tags: the
-- comma-separated header pgqueue.tags holds each), and JSON matches (p_matches, an array of
-- {"in": "payload" | "headers" | "result", "path": [...], "value": "..."}): the value at the path,
-- as text, equals the value. A result is matched among COMPLETED jobs only, as only they have one.
-- The clauses refer to the arguments as $1 to $11 in this order: group, task, from, to, dedup key,
-- lower-case error text, ids, matches, tags, after time, after id. The matches are written into the
-- clause as literals (format's %L), so the planner sees them.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.job_search_clause(p_group text, p_task text, p_from timestamptz,
                                                                   p_to timestamptz, p_dedup_key text,
                                                                   p_error text, p_ids bigint[],
                                                                   p_matches jsonb, p_tags text[],
                                                                   p_after_id bigint)
RETURNS text
LANGUAGE plpgsql IMMUTABLE
AS $clause$
DECLARE
    v_from text;
    v_where text;
    v_time text;
    v_finished boolean := p_group IN ('COMPLETED', 'FAILED', 'CANCELLED');
    v_match jsonb;
    v_path text;
BEGIN
    IF v_finished THEN
        v_from := '${flyway:defaultSchema}.job_finished AS j';
        v_where := 'j.state = $1';
        v_time := 'j.finished_at';
        IF p_after_id IS NOT NULL THEN
            v_where := v_where || ' AND j.finished_at <= $10 AND (j.finished_at < $10 OR j.id < $11)';
        END IF;
    ELSIF p_group = 'WAITING' THEN
        v_from := '${flyway:defaultSchema}.job_waiting AS j';
        v_where := 'true';
        v_time := 'j.created_at';
    ELSIF p_group IN ('READY', 'SCHEDULED', 'RUNNING') THEN
        v_from := '${flyway:defaultSchema}.job AS j';
        v_where := CASE p_group
                       WHEN 'READY' THEN 'j.state = ''READY'' AND j.schedule_time <= statement_timestamp()'
                       WHEN 'SCHEDULED' THEN 'j.state = ''READY'' AND j.schedule_time > statement_timestamp()'
                       ELSE 'j.state IN (''STARTING'', ''RUNNING'')' END;
        v_time := 'j.created_at';
    ELSE
        RAISE EXCEPTION 'unknown job group %', p_group USING ERRCODE = '22023';
    END IF;
    IF p_after_id IS NOT NULL AND NOT v_finished THEN
        v_where := v_where || ' AND j.id > $11';
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
    IF p_ids IS NOT NULL THEN
        v_where := v_where || ' AND j.id = ANY($7)';
    END IF;
    IF p_tags IS NOT NULL AND cardinality(p_tags) > 0 THEN
        v_where := v_where || ' AND string_to_array(j.headers ->> ''pgqueue.tags'', '','') @> $9';
    END IF;
    FOR v_match IN SELECT * FROM jsonb_array_elements(coalesce(p_matches, '[]'))
    LOOP
        SELECT format('%L', CAST(array_agg(p) AS text)) INTO v_path
        FROM jsonb_array_elements_text(v_match -> 'path') AS p;
        IF v_path IS NULL THEN
            RAISE EXCEPTION 'a JSON match needs a path' USING ERRCODE = '22023';
        END IF;
        CASE v_match ->> 'in'
            WHEN 'payload' THEN
                v_where := v_where || format(' AND j.payload #>> CAST(%s AS text[]) = %L', v_path, v_match ->> 'value');
            WHEN 'headers' THEN
                v_where := v_where || format(' AND j.headers #>> CAST(%s AS text[]) = %L', v_path, v_match ->> 'value');
            WHEN 'result' THEN
                v_where := v_where || CASE WHEN p_group <> 'COMPLETED' THEN ' AND false' ELSE format(
                    ' AND EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.job_result AS r WHERE r.id = j.id'
                    ' AND (r.lease_epoch IS NULL OR r.lease_epoch = j.lease_epoch)'
                    ' AND r.result #>> CAST(%s AS text[]) = %L)', v_path, v_match ->> 'value') END;
            ELSE
                RAISE EXCEPTION 'a JSON match is in payload, headers or result, not %', v_match ->> 'in'
                    USING ERRCODE = '22023';
        END CASE;
    END LOOP;
    RETURN ' FROM ' || v_from || ' WHERE ' || v_where;
END
$clause$;

-- One page of a search, in the group's keyset order, with the job's tags: planned with the call's
-- values, index scans only.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.search_jobs(p_group text, p_task text, p_from timestamptz,
                                                             p_to timestamptz, p_dedup_key text, p_error text,
                                                             p_ids bigint[], p_matches jsonb, p_tags text[],
                                                             p_after_time timestamptz, p_after_id bigint,
                                                             p_limit integer)
RETURNS TABLE (id bigint, task text, state text, priority smallint, attempt integer, max_attempts integer,
               created_at timestamptz, schedule_time timestamptz, started_at timestamptz,
               finished_at timestamptz, dedup_key text, error text, lease_owner text, tags text)
LANGUAGE plpgsql STABLE
SET enable_seqscan = off
SET enable_bitmapscan = off
SET jit = off
AS $search$
DECLARE
    v_columns text;
    v_order text;
BEGIN
    IF p_group IN ('COMPLETED', 'FAILED', 'CANCELLED') THEN
        v_order := 'j.finished_at DESC, j.id DESC';
        v_columns := 'j.state, j.priority, j.attempt, j.max_attempts, j.created_at, j.schedule_time, j.started_at, '
                     'j.finished_at, j.dedup_key, left(split_part(j.last_error, E''\n'', 1), 300), j.lease_owner';
    ELSIF p_group = 'WAITING' THEN
        v_order := 'j.id';
        v_columns := '''WAITING'', j.priority, 0, j.max_attempts, j.created_at, coalesce(j.run_at, j.created_at), '
                     'CAST(NULL AS timestamptz), CAST(NULL AS timestamptz), CAST(NULL AS text), CAST(NULL AS text), '
                     'CAST(NULL AS text)';
    ELSE
        v_order := 'j.id';
        v_columns := 'j.state, j.priority, j.attempt, j.max_attempts, j.created_at, j.schedule_time, j.started_at, '
                     'CAST(NULL AS timestamptz), j.dedup_key, left(split_part(j.last_error, E''\n'', 1), 300), '
                     'j.lease_owner';
    END IF;
    RETURN QUERY EXECUTE
        'SELECT j.id, j.task, ' || v_columns || ', j.headers ->> ''pgqueue.tags'''
        || ${flyway:defaultSchema}.job_search_clause(p_group, p_task, p_from, p_to, p_dedup_key, p_error, p_ids,
                                                     p_matches, p_tags, p_after_id)
        || ' ORDER BY ' || v_order || ' LIMIT $12'
        USING p_group, p_task, p_from, p_to, p_dedup_key, lower(p_error), p_ids, p_matches, p_tags, p_after_time,
              p_after_id, p_limit;
END
$search$;

-- How many jobs a search matches: the count a bulk action states before it acts. It reads every
-- matching job (an index serves the filters it serves for a page).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.count_jobs(p_group text, p_task text, p_from timestamptz,
                                                            p_to timestamptz, p_dedup_key text, p_error text,
                                                            p_ids bigint[], p_matches jsonb, p_tags text[])
RETURNS bigint
LANGUAGE plpgsql STABLE
SET jit = off
AS $count$
DECLARE
    v_count bigint;
BEGIN
    EXECUTE 'SELECT count(*)'
        || ${flyway:defaultSchema}.job_search_clause(p_group, p_task, p_from, p_to, p_dedup_key, p_error, p_ids,
                                                     p_matches, p_tags, NULL)
        INTO v_count
        USING p_group, p_task, p_from, p_to, p_dedup_key, lower(p_error), p_ids, p_matches, p_tags,
              CAST(NULL AS timestamptz), CAST(NULL AS bigint);
    RETURN v_count;
END
$count$;

-- The listing of the release before search_jobs, which its nodes call: a search without ids,
-- values inside jobs or tags.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.list_jobs(p_group text, p_task text, p_from timestamptz,
                                                           p_to timestamptz, p_dedup_key text, p_error text,
                                                           p_after_time timestamptz, p_after_id bigint,
                                                           p_limit integer)
RETURNS TABLE (id bigint, task text, state text, priority smallint, attempt integer, max_attempts integer,
               created_at timestamptz, schedule_time timestamptz, started_at timestamptz,
               finished_at timestamptz, dedup_key text, error text, lease_owner text)
LANGUAGE sql STABLE
AS $list$
    SELECT s.id, s.task, s.state, s.priority, s.attempt, s.max_attempts, s.created_at, s.schedule_time, s.started_at,
           s.finished_at, s.dedup_key, s.error, s.lease_owner
    FROM ${flyway:defaultSchema}.search_jobs(p_group, p_task, p_from, p_to, p_dedup_key, p_error, NULL, '[]', '{}',
                                             p_after_time, p_after_id, p_limit) AS s
$list$;
