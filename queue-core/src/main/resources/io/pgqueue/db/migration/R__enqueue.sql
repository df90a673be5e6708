-- pgqueue: enqueue from SQL, current definition (repeatable migration: see R__claim.sql).
--
-- enqueue_job enqueues one job with the semantics of QueueClient.enqueue, in the caller's
-- transaction: from a trigger, psql or any language's driver. The task must be declared by a node
-- (task_definition, V27), whose settings give the defaults; the arguments left NULL take them.
-- Bad input raises SQLSTATE 22023 (invalid_parameter_value) with a message that names the
-- argument, and writes nothing. A due job wakes the waiting workers with the NOTIFY a Java enqueue
-- sends (delivered on commit).
--
-- The job's partition is the one a Java enqueue picks: its group for a grouped task, else its
-- dedup key, else partition_key, hashed by partition_of (V10); a job without any goes to a random
-- partition. Unsharded, the job is written to the job table here, its dedup key resolved by the
-- policy (KEEP_EXISTING, REPLACE_IF_READY, RERUN, UNIQUE:<ms>:<states>; a merge needs the task's
-- Java merge function and is refused). On the main database of a sharded installation the job
-- goes to the outbox (V11) in the caller's transaction and a node's relay writes it to its shard
-- after the commit, resolving its dedup key there: the outcome is RELAYED. On any other shard the
-- call is refused.
--
-- Returns the job's id and what happened: CREATED, KEPT_EXISTING, REPLACED, RERUN_SCHEDULED
-- (the ids and outcomes of EnqueueResult) or RELAYED.

-- The newest job of a task and key that ended in one of the states and was enqueued within the
-- period: what holds a key under a UNIQUE policy (the statement JobStore.finishedHolder runs).
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.finished_holder(p_task text, p_key text, p_states text[],
        p_period_ms bigint)
    RETURNS bigint
    LANGUAGE sql STABLE
AS $holder$
    SELECT f.id FROM ${flyway:defaultSchema}.job_finished AS f
    WHERE f.dedup_key = p_key AND f.task = p_task AND f.state = ANY(p_states)
      AND f.created_at > statement_timestamp() - p_period_ms * interval '1 millisecond'
    ORDER BY f.created_at DESC
    LIMIT 1
$holder$;

CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.enqueue_job(
        task            text,
        payload         jsonb       DEFAULT '{}',
        priority        integer     DEFAULT NULL,
        run_at          timestamptz DEFAULT NULL,
        delay           interval    DEFAULT NULL,
        delay_tolerance interval    DEFAULT NULL,
        dedup_key       text        DEFAULT NULL,
        dedup_policy    text        DEFAULT NULL,
        max_attempts    integer     DEFAULT NULL,
        group_key       text        DEFAULT NULL,
        partition_key   text        DEFAULT NULL,
        headers         jsonb       DEFAULT '{}',
        tags            text[]      DEFAULT NULL)
    RETURNS TABLE (job_id bigint, outcome text)
    LANGUAGE plpgsql
AS $enqueue$
#variable_conflict use_column
DECLARE
    def            ${flyway:defaultSchema}.task_definition;
    v_priority     integer;
    v_attempts     integer;
    v_tolerance_ms bigint;
    v_policy       text;
    v_states       text[];
    v_period_ms    bigint;
    v_headers      jsonb;
    v_tags         text[];
    v_tag          text;
    v_key          text;
    v_partition    integer;
    v_partitions   integer;
    v_schedule     timestamptz;
    v_id           bigint;
    v_holder       record;
    v_holder_id    bigint;
    v_sharded      boolean;
    v_shard_name   text;
BEGIN
    IF task IS NULL THEN
        RAISE EXCEPTION 'enqueue_job: task must not be null' USING ERRCODE = '22023';
    END IF;
    SELECT i.partitions, i.shard_name INTO v_partitions, v_shard_name FROM ${flyway:defaultSchema}.installation AS i;
    v_sharded := EXISTS (SELECT 1 FROM ${flyway:defaultSchema}.shard);
    IF v_shard_name IS NOT NULL AND NOT v_sharded THEN
        RAISE EXCEPTION 'enqueue_job: this database is the shard ''%'' of a sharded installation', v_shard_name
            USING ERRCODE = '22023', HINT = 'Call enqueue_job on the main database, which routes the job to its shard';
    END IF;
    SELECT * INTO def FROM ${flyway:defaultSchema}.task_definition AS d WHERE d.task = enqueue_job.task;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'enqueue_job: unknown task ''%''', task USING ERRCODE = '22023',
            HINT = 'A task is known once a node that declares it (a @QueueTask handler or pgqueue.tasks.' || task
                   || ') has opened the queue; see ' || '${flyway:defaultSchema}.task_definition';
    END IF;
    IF def.encrypted THEN
        RAISE EXCEPTION 'enqueue_job: task ''%'' encrypts its payloads, and the keys are the application''s', task
            USING ERRCODE = '22023', HINT = 'Enqueue it through QueueClient, which encrypts the payload';
    END IF;
    IF payload IS NULL OR jsonb_typeof(payload) = 'null' THEN
        RAISE EXCEPTION 'enqueue_job: the payload of a ''%'' job must not be null: its handler would get null', task
            USING ERRCODE = '22023';
    END IF;
    IF octet_length(payload::text) > def.max_payload_bytes THEN
        RAISE EXCEPTION 'enqueue_job: the payload of a ''%'' job is % bytes as JSON, over the limit of % bytes', task,
            octet_length(payload::text), def.max_payload_bytes USING ERRCODE = '22023';
    END IF;
    v_priority := coalesce(priority, def.priority);
    IF v_priority NOT BETWEEN -1000 AND 1000 THEN
        RAISE EXCEPTION 'enqueue_job: priority of a ''%'' job must be between -1000 and 1000, was %', task, v_priority
            USING ERRCODE = '22023';
    END IF;
    IF run_at IS NOT NULL AND delay IS NOT NULL THEN
        RAISE EXCEPTION 'enqueue_job: a ''%'' job has both run_at and delay; give one', task USING ERRCODE = '22023';
    END IF;
    IF delay < interval '0' THEN
        RAISE EXCEPTION 'enqueue_job: delay of a ''%'' job must not be negative, was %', task, delay USING ERRCODE = '22023';
    END IF;
    IF delay_tolerance < interval '0' THEN
        RAISE EXCEPTION 'enqueue_job: delay_tolerance of a ''%'' job must not be negative, was %', task, delay_tolerance
            USING ERRCODE = '22023';
    END IF;
    v_tolerance_ms := CASE WHEN delay_tolerance IS NOT NULL THEN (extract(epoch FROM delay_tolerance) * 1000)::bigint
                           ELSE def.delay_tolerance_ms END;
    v_attempts := coalesce(max_attempts, def.max_attempts);
    IF v_attempts < 1 THEN
        RAISE EXCEPTION 'enqueue_job: max_attempts of a ''%'' job must be at least 1, was %', task, v_attempts
            USING ERRCODE = '22023';
    END IF;
    IF dedup_key IS NULL AND def.derives_dedup_key THEN
        RAISE EXCEPTION 'enqueue_job: task ''%'' derives its dedup key from the payload in Java; give dedup_key', task
            USING ERRCODE = '22023';
    END IF;
    IF dedup_key IS NOT NULL AND (btrim(dedup_key) = '' OR length(dedup_key) > 512) THEN
        RAISE EXCEPTION 'enqueue_job: dedup key of a ''%'' job must be non-blank and at most 512 characters', task
            USING ERRCODE = '22023';
    END IF;
    -- The policy matters to a job with a dedup key only; one given is checked anyway.
    v_policy := coalesce(dedup_policy, CASE WHEN dedup_key IS NULL THEN 'KEEP_EXISTING' ELSE def.dedup_policy END);
    IF v_policy LIKE 'UNIQUE:%' THEN
        BEGIN
            v_period_ms := split_part(v_policy, ':', 2)::bigint;
            v_states := string_to_array(split_part(v_policy, ':', 3), ',');
        EXCEPTION WHEN others THEN
            v_period_ms := NULL;
        END;
        IF v_period_ms IS NULL OR v_period_ms <= 0 OR cardinality(v_states) = 0
                OR NOT v_states <@ ARRAY['COMPLETED', 'FAILED', 'CANCELLED'] THEN
            RAISE EXCEPTION 'enqueue_job: dedup_policy ''%'' is not UNIQUE:<period ms>:<states>, e.g. UNIQUE:600000:COMPLETED,FAILED',
                v_policy USING ERRCODE = '22023';
        END IF;
    ELSIF v_policy = 'MERGE_IF_READY' THEN
        RAISE EXCEPTION 'enqueue_job: task ''%'' merges duplicates with a Java function, which SQL cannot run', task
            USING ERRCODE = '22023', HINT = 'Give another dedup_policy (KEEP_EXISTING, REPLACE_IF_READY, RERUN), '
                || 'or enqueue it through QueueClient';
    ELSIF v_policy NOT IN ('KEEP_EXISTING', 'REPLACE_IF_READY', 'RERUN') THEN
        RAISE EXCEPTION 'enqueue_job: unknown dedup_policy ''%''', v_policy USING ERRCODE = '22023',
            HINT = 'Use KEEP_EXISTING, REPLACE_IF_READY, RERUN or UNIQUE:<period ms>:<states>';
    END IF;
    -- Headers: an object of strings, none of the queue's own but the trace context's.
    v_headers := coalesce(headers, '{}');
    IF jsonb_typeof(v_headers) <> 'object' OR EXISTS (
            SELECT 1 FROM jsonb_each(v_headers) AS h WHERE jsonb_typeof(h.value) <> 'string') THEN
        RAISE EXCEPTION 'enqueue_job: headers must be a JSON object of strings, was %', v_headers USING ERRCODE = '22023';
    END IF;
    IF EXISTS (SELECT 1 FROM jsonb_object_keys(v_headers) AS k WHERE k LIKE 'pgqueue.%') THEN
        RAISE EXCEPTION 'enqueue_job: headers named pgqueue.* are the queue''s own; give group_key and tags instead'
            USING ERRCODE = '22023';
    END IF;
    IF def.grouped THEN
        IF group_key IS NULL AND def.derives_group THEN
            RAISE EXCEPTION 'enqueue_job: task ''%'' derives its group from the payload in Java; give group_key', task
                USING ERRCODE = '22023';
        END IF;
        IF group_key IS NOT NULL THEN
            v_headers := v_headers || jsonb_build_object('pgqueue.group', group_key);
        END IF;
    ELSIF group_key IS NOT NULL THEN
        RAISE EXCEPTION 'enqueue_job: task ''%'' has no groups; group_key is for a task with groups', task
            USING ERRCODE = '22023';
    END IF;
    -- The task's tags, then the call's, each once.
    v_tags := ARRAY(SELECT u.t FROM unnest(def.tags || coalesce(enqueue_job.tags, '{}')) WITH ORDINALITY AS u(t, n)
                    GROUP BY u.t ORDER BY min(u.n));
    FOREACH v_tag IN ARRAY v_tags LOOP
        IF v_tag IS NULL OR length(v_tag) NOT BETWEEN 1 AND 64 OR position(',' IN v_tag) > 0 THEN
            RAISE EXCEPTION 'enqueue_job: tag ''%'' of a ''%'' job is not 1 to 64 characters without commas', v_tag, task
                USING ERRCODE = '22023';
        END IF;
    END LOOP;
    IF cardinality(v_tags) > 20 THEN
        RAISE EXCEPTION 'enqueue_job: a ''%'' job has % tags; at most 20', task, cardinality(v_tags) USING ERRCODE = '22023';
    END IF;
    IF cardinality(v_tags) > 0 THEN
        v_headers := v_headers || jsonb_build_object('pgqueue.tags', array_to_string(v_tags, ','));
    END IF;

    v_key := CASE WHEN def.grouped AND group_key IS NOT NULL THEN group_key
                  WHEN def.grouped AND partition_key IS NOT NULL THEN partition_key
                  WHEN dedup_key IS NOT NULL THEN dedup_key
                  ELSE partition_key END;
    v_partition := CASE WHEN v_key IS NULL THEN floor(random() * v_partitions)::integer
                        ELSE ${flyway:defaultSchema}.partition_of(v_key, v_partitions) END;
    v_schedule := coalesce(run_at, statement_timestamp() + coalesce(delay, interval '0'));

    IF v_sharded THEN
        INSERT INTO ${flyway:defaultSchema}.job_outbox AS o (job_id, partition, task, payload, headers, priority,
                schedule_time, delay_tolerance_deadline, max_attempts, dedup_key, dedup_policy, created_at)
        VALUES (nextval('${flyway:defaultSchema}.job_id_seq'), v_partition, enqueue_job.task, enqueue_job.payload,
                v_headers, v_priority, v_schedule, v_schedule + v_tolerance_ms * interval '1 millisecond', v_attempts,
                enqueue_job.dedup_key, CASE WHEN enqueue_job.dedup_key IS NULL THEN NULL ELSE v_policy END,
                statement_timestamp())
        RETURNING o.job_id INTO v_id;
        RETURN QUERY SELECT v_id, 'RELAYED'::text;
        RETURN;
    END IF;

    LOOP
        IF dedup_key IS NOT NULL AND v_period_ms IS NOT NULL THEN
            v_id := ${flyway:defaultSchema}.finished_holder(task, dedup_key, v_states, v_period_ms);
            IF v_id IS NOT NULL THEN
                RETURN QUERY SELECT v_id, 'KEPT_EXISTING'::text;
                RETURN;
            END IF;
        END IF;
        v_id := NULL;
        INSERT INTO ${flyway:defaultSchema}.job AS j (id, task, payload, headers, priority, schedule_time,
                delay_tolerance_deadline, max_attempts, dedup_key, created_at, partition)
        VALUES (nextval('${flyway:defaultSchema}.job_id_seq'), enqueue_job.task, enqueue_job.payload, v_headers,
                v_priority, v_schedule, v_schedule + v_tolerance_ms * interval '1 millisecond', v_attempts,
                enqueue_job.dedup_key, statement_timestamp(), v_partition)
        ON CONFLICT (task, dedup_key) WHERE dedup_key IS NOT NULL DO NOTHING
        RETURNING j.id INTO v_id;
        IF v_id IS NOT NULL THEN
            -- A unique key's holder that finished while the insert waited for it holds the key.
            IF dedup_key IS NOT NULL AND v_period_ms IS NOT NULL THEN
                v_holder_id := ${flyway:defaultSchema}.finished_holder(task, dedup_key, v_states, v_period_ms);
                IF v_holder_id IS NOT NULL THEN
                    DELETE FROM ${flyway:defaultSchema}.job AS j WHERE j.id = v_id AND j.state = 'READY';
                    RETURN QUERY SELECT v_holder_id, 'KEPT_EXISTING'::text;
                    RETURN;
                END IF;
            END IF;
            IF v_schedule <= statement_timestamp() THEN
                PERFORM pg_notify('${flyway:defaultSchema}.' || task, '');
            END IF;
            RETURN QUERY SELECT v_id, 'CREATED'::text;
            RETURN;
        END IF;
        -- An active job holds the key: lock it and apply the policy.
        SELECT j.id, j.state INTO v_holder FROM ${flyway:defaultSchema}.job AS j
        WHERE j.task = enqueue_job.task AND j.dedup_key = enqueue_job.dedup_key
        FOR UPDATE;
        IF FOUND THEN
            IF v_policy = 'REPLACE_IF_READY' AND v_holder.state = 'READY' THEN
                UPDATE ${flyway:defaultSchema}.job AS j
                SET payload = enqueue_job.payload, headers = v_headers, priority = v_priority,
                    schedule_time = v_schedule,
                    delay_tolerance_deadline = v_schedule + v_tolerance_ms * interval '1 millisecond'
                WHERE j.id = v_holder.id;
                RETURN QUERY SELECT v_holder.id, 'REPLACED'::text;
            ELSIF v_policy = 'RERUN' AND v_holder.state = 'READY' THEN
                UPDATE ${flyway:defaultSchema}.job AS j SET payload = enqueue_job.payload WHERE j.id = v_holder.id;
                RETURN QUERY SELECT v_holder.id, 'REPLACED'::text;
            ELSIF v_policy = 'RERUN' AND v_holder.state IN ('STARTING', 'RUNNING') THEN
                UPDATE ${flyway:defaultSchema}.job AS j SET rerun_requested = true, payload = enqueue_job.payload
                WHERE j.id = v_holder.id;
                RETURN QUERY SELECT v_holder.id, 'RERUN_SCHEDULED'::text;
            ELSE
                RETURN QUERY SELECT v_holder.id, 'KEPT_EXISTING'::text;
            END IF;
            RETURN;
        END IF;
        -- The holder finished after the insert saw it: try again.
    END LOOP;
END
$enqueue$;

COMMENT ON FUNCTION ${flyway:defaultSchema}.enqueue_job(text, jsonb, integer, timestamptz, interval, interval, text, text,
    integer, text, text, jsonb, text[])
    IS 'pgqueue enqueue_job revision 1: enqueues one job with the semantics of QueueClient.enqueue';
