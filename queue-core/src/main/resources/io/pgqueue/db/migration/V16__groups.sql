-- pgqueue schema, version 16: job groups — fair claims across groups, limits per group, sequences.
--
-- A job's group (a tenant, an account, a document) is its header 'pgqueue.group', so it travels
-- with the job wherever the job goes (shards, moves, the outbox, job_finished) with no column of
-- its own. Only jobs with a group enter the indexes below: tasks without groups pay nothing.

-- The claim of a task with groups walks the task's groups in key order from where its last claim
-- stopped, and each group's active jobs in enqueue (id) order.
CREATE INDEX job_group_idx ON job (task, (headers ->> 'pgqueue.group'), id) WHERE headers ? 'pgqueue.group';

-- Claimed jobs per group, counted by the claim of a task with a concurrency per group.
CREATE INDEX job_group_claimed_idx ON job (task, (headers ->> 'pgqueue.group'))
    WHERE headers ? 'pgqueue.group' AND state IN ('STARTING', 'RUNNING');

-- Jobs of sequences that block on a failure (header 'pgqueue.sequence' = 'block') and failed for
-- good: their sequence waits until they are re-run (and succeed) or leave with retention.
CREATE INDEX job_finished_sequence_block_idx ON job_finished (task, (headers ->> 'pgqueue.group'))
    WHERE state = 'FAILED' AND headers ->> 'pgqueue.sequence' = 'block';

-- Where each task's round of groups stands: the group its last claim took a job from.
CREATE TABLE task_group_cursor (
    task      text PRIMARY KEY,
    group_key text NOT NULL
);
