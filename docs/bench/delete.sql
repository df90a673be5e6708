-- pgbench script; see docs/design-notes.md ("Finished jobs leave the hot table"). Run against a database migrated with V1__jobs.sql.
INSERT INTO pgqueue.job (task, payload, max_attempts) SELECT 't', '{"file":"abc","n":1}', 5 FROM generate_series(1, 100);
UPDATE pgqueue.job SET state = 'STARTING', lease_owner = 'c:client_id', lease_epoch = lease_epoch + 1, attempt = attempt + 1, started_at = now(), expected_status_change_time = now() + interval '30 seconds' WHERE id = ANY(ARRAY(SELECT id FROM pgqueue.job WHERE task = 't' AND state = 'READY' AND schedule_time <= now() ORDER BY priority DESC, coalesce(delay_tolerance_deadline, schedule_time) LIMIT 100 FOR UPDATE SKIP LOCKED));
WITH held AS (SELECT id FROM pgqueue.job WHERE state IN ('STARTING','RUNNING') AND lease_owner = 'c:client_id' FOR UPDATE)
DELETE FROM pgqueue.job USING held WHERE job.id = held.id;
