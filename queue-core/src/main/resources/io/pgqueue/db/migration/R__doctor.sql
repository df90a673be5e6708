-- pgqueue: the doctor, current definition (repeatable migration: see R__claim.sql).
--
-- doctor() checks what makes a queue slow or stuck that the queue cannot fix itself: indexes that
-- are missing or left invalid (a CREATE INDEX CONCURRENTLY that failed), dead rows piling up in
-- the job tables, what keeps vacuum from removing them (a long transaction, an idle one, a
-- prepared transaction, a replication slot), autovacuum switched off, worker nodes of two releases
-- running side by side, and connections running
-- out; a transaction counts as long once it has been open for older_than. One row per check: OK, WARN or FAIL, what was found and what to do. Run it from psql
-- (SELECT * FROM pgqueue.doctor()) or read it at GET /actuator/queues/doctor, which adds the
-- schema's migration state.
CREATE OR REPLACE FUNCTION ${flyway:defaultSchema}.doctor(older_than interval DEFAULT interval '5 minutes')
    RETURNS TABLE (check_name text, status text, detail text, advice text)
    LANGUAGE plpgsql
AS $doctor$
DECLARE
    v_missing  text[];
    v_invalid  text[];
    v_row      record;
    v_found    boolean;
    -- The queue's schema, found from its job table (the function reads the catalogs by name).
    v_namespace oid := (SELECT c.relnamespace FROM pg_class AS c WHERE c.oid = '${flyway:defaultSchema}.job'::regclass);
    v_schema    name := (SELECT n.nspname FROM pg_namespace AS n WHERE n.oid = v_namespace);
BEGIN
    -- Indexes the claim, the rescue, dedup, retention and the console rely on.
    SELECT array_agg(expected ORDER BY expected) INTO v_missing
    FROM unnest(ARRAY['job_claim_idx', 'job_dedup_idx', 'job_lease_idx', 'job_limited_idx', 'job_group_idx',
                      'job_group_claimed_idx', 'job_finished_retention_idx', 'job_finished_dedup_idx',
                      'job_finished_failed_idx', 'job_finished_cancelled_idx', 'job_waiting_workflow_idx',
                      'message_visible_idx', 'message_fair_idx', 'message_group_idx', 'schedule_next_fire_idx']) AS expected
    WHERE NOT EXISTS (SELECT 1 FROM pg_indexes AS i
                      WHERE i.schemaname = v_schema AND i.indexname = expected);
    SELECT array_agg(c.relname ORDER BY c.relname) INTO v_invalid
    FROM pg_index AS x JOIN pg_class AS c ON c.oid = x.indexrelid
    WHERE c.relnamespace = v_namespace AND NOT (x.indisvalid AND x.indisready);
    RETURN QUERY SELECT 'indexes'::text,
        CASE WHEN v_missing IS NULL AND v_invalid IS NULL THEN 'OK' ELSE 'FAIL' END,
        CASE WHEN v_missing IS NULL AND v_invalid IS NULL THEN 'every index the queue relies on is there and valid'
             ELSE concat_ws('; ', 'missing: ' || array_to_string(v_missing, ', '),
                            'invalid: ' || array_to_string(v_invalid, ', ')) END,
        CASE WHEN v_missing IS NULL AND v_invalid IS NULL THEN ''
             ELSE 'Recreate a missing index as docs/schema.sql defines it (CREATE INDEX CONCURRENTLY); rebuild an invalid '
                  || 'one with REINDEX INDEX CONCURRENTLY' END;

    -- Dead rows: each finished or claimed job leaves one behind until vacuum removes it.
    v_found := false;
    FOR v_row IN
        SELECT s.relname, s.n_live_tup, s.n_dead_tup, greatest(s.last_autovacuum, s.last_vacuum) AS vacuumed
        FROM pg_stat_user_tables AS s
        WHERE s.schemaname = v_schema
          AND s.relname IN ('job', 'job_finished', 'job_waiting', 'job_outbox', 'message', 'message_group')
          AND s.n_dead_tup > 100000 AND s.n_dead_tup > 0.2 * greatest(s.n_live_tup, 1)
        ORDER BY s.n_dead_tup DESC
    LOOP
        v_found := true;
        RETURN QUERY SELECT 'dead rows'::text, 'WARN'::text,
            format('%s: %s dead rows against %s live, last vacuumed %s', v_row.relname, v_row.n_dead_tup,
                   v_row.n_live_tup, coalesce(to_char(v_row.vacuumed, 'YYYY-MM-DD HH24:MI:SS TZ'), 'never')),
            'Autovacuum is behind or blocked: see the checks below, and docs/operations.md (bloat, autovacuum)'::text;
    END LOOP;
    IF NOT v_found THEN
        RETURN QUERY SELECT 'dead rows'::text, 'OK'::text, 'the job and message tables hold few dead rows'::text, ''::text;
    END IF;

    -- What keeps vacuum from removing dead rows: the oldest snapshot still in use.
    v_found := false;
    FOR v_row IN
        SELECT a.pid, a.application_name, a.state, a.xact_start, now() - a.xact_start AS open_for
        FROM pg_stat_activity AS a
        WHERE a.xact_start < now() - older_than AND a.pid <> pg_backend_pid()
          AND (a.backend_xmin IS NOT NULL OR a.backend_xid IS NOT NULL)
        ORDER BY a.xact_start
        LIMIT 5
    LOOP
        v_found := true;
        RETURN QUERY SELECT 'long transactions'::text, 'WARN'::text,
            format('pid %s (%s, %s) has held a transaction open for %s', v_row.pid,
                   coalesce(nullif(v_row.application_name, ''), 'no application name'), v_row.state,
                   date_trunc('second', v_row.open_for)),
            'Dead rows younger than it cannot be removed anywhere in the database: end it, and set '
                || 'idle_in_transaction_session_timeout for sessions that forget to'::text;
    END LOOP;
    FOR v_row IN SELECT p.gid, now() - p.prepared AS open_for FROM pg_prepared_xacts AS p
                 WHERE p.prepared < now() - older_than LOOP
        v_found := true;
        RETURN QUERY SELECT 'long transactions'::text, 'WARN'::text,
            format('prepared transaction %s has waited for %s', v_row.gid, date_trunc('second', v_row.open_for)),
            'Commit or roll it back (COMMIT PREPARED / ROLLBACK PREPARED): it holds back vacuum'::text;
    END LOOP;
    FOR v_row IN SELECT r.slot_name, r.active FROM pg_replication_slots AS r
                 WHERE (r.xmin IS NOT NULL OR r.catalog_xmin IS NOT NULL) AND NOT r.active LOOP
        v_found := true;
        RETURN QUERY SELECT 'long transactions'::text, 'WARN'::text,
            format('replication slot %s is inactive and holds an xmin', v_row.slot_name),
            'Drop the slot if its consumer is gone (pg_drop_replication_slot): it holds back vacuum'::text;
    END LOOP;
    IF NOT v_found THEN
        RETURN QUERY SELECT 'long transactions'::text, 'OK'::text,
            'no transaction, prepared transaction or replication slot holds back vacuum'::text, ''::text;
    END IF;

    -- Autovacuum on, and not switched off for the job tables.
    SELECT array_agg(c.relname ORDER BY c.relname) INTO v_invalid
    FROM pg_class AS c
    WHERE c.relnamespace = v_namespace AND c.relkind = 'r'
      AND c.reloptions @> ARRAY['autovacuum_enabled=false'];
    RETURN QUERY SELECT 'autovacuum'::text,
        CASE WHEN current_setting('autovacuum') = 'on' AND current_setting('track_counts') = 'on' AND v_invalid IS NULL
             THEN 'OK' ELSE 'FAIL' END,
        CASE WHEN current_setting('autovacuum') <> 'on' THEN 'autovacuum is off'
             WHEN current_setting('track_counts') <> 'on' THEN 'track_counts is off: autovacuum cannot tell what to vacuum'
             WHEN v_invalid IS NOT NULL THEN 'autovacuum is off for ' || array_to_string(v_invalid, ', ')
             ELSE 'autovacuum runs, also on the queue''s tables' END,
        CASE WHEN current_setting('autovacuum') <> 'on' OR current_setting('track_counts') <> 'on'
             THEN 'A queue leaves a dead row per job: set autovacuum = on and track_counts = on (postgresql.conf)'
             WHEN v_invalid IS NOT NULL
             THEN 'A queue leaves a dead row per job: ALTER TABLE ... RESET (autovacuum_enabled) on those tables'
             ELSE '' END;

    -- Sessions idle in a transaction hold locks and snapshots.
    SELECT count(*) > 0 INTO v_found FROM pg_stat_activity AS a
    WHERE a.state LIKE 'idle in transaction%' AND a.state_change < now() - older_than AND a.pid <> pg_backend_pid();
    RETURN QUERY SELECT 'idle in transaction'::text, CASE WHEN v_found THEN 'WARN' ELSE 'OK' END,
        CASE WHEN v_found THEN (SELECT count(*) || ' sessions idle in a transaction for over ' || older_than
                                FROM pg_stat_activity AS a WHERE a.state LIKE 'idle in transaction%'
                                  AND a.state_change < now() - older_than AND a.pid <> pg_backend_pid())
             ELSE 'no session idles in a transaction' END,
        CASE WHEN v_found THEN 'Set idle_in_transaction_session_timeout (e.g. 5min) and fix the code that leaves them'
             ELSE '' END;

    -- Nodes of two releases side by side: a rolling deploy in progress, or one that stopped half-way.
    RETURN QUERY SELECT 'node releases'::text,
        CASE WHEN count(DISTINCT coalesce(n.schema_version, 0)) > 1 THEN 'WARN' ELSE 'OK' END,
        CASE WHEN count(*) = 0 THEN 'no worker node is registered'
             ELSE string_agg(DISTINCT coalesce('schema ' || n.schema_version, 'a schema before 28') || ': '
                             || (SELECT count(*) FROM ${flyway:defaultSchema}.node AS m
                                 WHERE m.schema_version IS NOT DISTINCT FROM n.schema_version) || ' node(s)', '; ') END,
        CASE WHEN count(DISTINCT coalesce(n.schema_version, 0)) > 1
             THEN 'Worker nodes of two releases run side by side: finish the rolling deploy' ELSE '' END
    FROM ${flyway:defaultSchema}.node AS n;

    -- Connections: workers, heartbeats, LISTEN and the application share max_connections.
    RETURN QUERY SELECT 'connections'::text,
        CASE WHEN used > 0.9 * total THEN 'WARN' ELSE 'OK' END,
        format('%s of %s connections in use', used, total),
        CASE WHEN used > 0.9 * total THEN 'Raise max_connections, shrink the pools, or put PgBouncer in front (docs/operations.md)'
             ELSE '' END
    FROM (SELECT (SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend') AS used,
                 current_setting('max_connections')::integer AS total) AS c;
END
$doctor$;

COMMENT ON FUNCTION ${flyway:defaultSchema}.doctor(interval)
    IS 'pgqueue doctor revision 3: indexes, dead rows, what holds back vacuum, autovacuum, idle transactions, node releases, connections';
