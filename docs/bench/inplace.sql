-- pgbench script; see docs/design-notes.md ("Finished jobs leave the hot table"). Run against a database migrated with V1__jobs.sql,
-- plus pgqueue.job_inplace: a copy of pgqueue.job without the active-state check, with a partial index on finished rows.
INSERT INTO pgqueue.job_inplace (task, payload, max_attempts) SELECT 't', '{"file":"abc","n":1}', 5 FROM generate_series(1, 100);
UPDATE pgqueue.job_inplace SET state = 'STARTING', lease_owner = 'c:client_id', lease_epoch = lease_epoch + 1, attempt = attempt + 1, started_at = now(), expected_status_change_time = now() + interval '30 seconds' WHERE id = ANY(ARRAY(SELECT id FROM pgqueue.job_inplace WHERE task = 't' AND state = 'READY' AND schedule_time <= now() ORDER BY priority DESC, coalesce(delay_tolerance_deadline, schedule_time) LIMIT 100 FOR UPDATE SKIP LOCKED));
WITH held AS (SELECT id FROM pgqueue.job_inplace WHERE state IN ('STARTING','RUNNING') AND lease_owner = 'c:client_id' FOR UPDATE)
UPDATE pgqueue.job_inplace SET state = 'COMPLETED', finished_at = now(), expected_status_change_time = NULL FROM held WHERE job_inplace.id = held.id;
