-- pgqueue schema, version 3: operator controls per task type.

-- A paused task is not claimed by any node (each node reads this table once per poll interval);
-- its jobs keep queueing and run once it is resumed.
CREATE TABLE task_control (
    task       text        PRIMARY KEY,
    paused     boolean     NOT NULL DEFAULT false,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Finished jobs keep the epoch of their last lease, so a job re-run by an operator continues the
-- epoch sequence and a stale lease from before can never match it again.
ALTER TABLE job_finished ADD COLUMN lease_epoch integer NOT NULL DEFAULT 0;
