-- pgqueue schema, version 19: finished jobs are found by their dedup key, cancelled ones by task.
--
-- Operators look up what became of the job of a key, and list a task's cancelled jobs (the job
-- listing's filters, QueueAdmin.jobs). Both partial: a job enqueued without a key never enters the
-- first, a job that was not cancelled never enters the second, so the drain's archive writes stay
-- as they were. Building them reads job_finished once and blocks writes to it meanwhile (outcome
-- writes wait, they do not fail).
CREATE INDEX job_finished_dedup_idx ON job_finished (dedup_key) WHERE dedup_key IS NOT NULL;

CREATE INDEX job_finished_cancelled_idx ON job_finished (task, finished_at DESC) WHERE state = 'CANCELLED';
