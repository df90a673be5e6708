-- pgqueue schema, version 23: the attempts of a job whose task keeps them (TaskDefinition.history),
-- and unique dedup policies in the outbox.
--
-- A JSON array on the job's own row, newest last, one element per attempt: start, end, node,
-- outcome, error and the lines its handler logged. On the row it goes wherever the job goes —
-- archived into job_finished, moved to another shard with its partition, back into the queue on a
-- re-run — and is deleted with it by retention, with no table of its own to keep in step. Jobs of
-- other tasks leave it null, which costs a bit in the row's null bitmap. Adding a nullable column
-- without a default rewrites no row and holds its lock for an instant.
ALTER TABLE job ADD COLUMN history jsonb;

ALTER TABLE job_finished ADD COLUMN history jsonb;

COMMENT ON COLUMN job.history IS 'The attempts of a task that keeps them: a JSON array, newest last';

COMMENT ON COLUMN job_finished.history IS 'The attempts of a task that keeps them: a JSON array, newest last';

-- A job relayed through the outbox carries its dedup policy by name; a unique policy's name holds its
-- window: UNIQUE:<period in milliseconds>:<final states>, e.g. UNIQUE:600000:COMPLETED,FAILED.
ALTER TABLE job_outbox DROP CONSTRAINT job_outbox_dedup_policy_check;

ALTER TABLE job_outbox ADD CONSTRAINT job_outbox_dedup_policy_check
    CHECK (dedup_policy IN ('KEEP_EXISTING', 'REPLACE_IF_READY', 'MERGE_IF_READY', 'RERUN')
           OR dedup_policy ~ '^UNIQUE:[0-9]+:(COMPLETED|FAILED|CANCELLED)(,(COMPLETED|FAILED|CANCELLED))*$');
