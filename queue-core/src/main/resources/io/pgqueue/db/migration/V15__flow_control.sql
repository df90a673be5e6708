-- pgqueue schema, version 15: flow control — global concurrency and rate limits per task.
--
-- A task with a global concurrency limit runs at most that many jobs at once across all nodes. The
-- claim counts the task's claimed jobs (STARTING and RUNNING) under a transaction-scoped advisory
-- lock of the task and takes at most the difference, so concurrent claims cannot overshoot and a
-- dead node's jobs hold their slots only until the rescue takes their expired leases back.

-- Set by the claim of a task with a concurrency limit: such claimed jobs enter job_limited_idx,
-- which the claim counts. Jobs of other tasks never enter it, so it costs them nothing. A job that
-- returns to READY leaves the index by its predicate; the next claim sets the flag again.
ALTER TABLE job ADD COLUMN limited boolean NOT NULL DEFAULT false;

CREATE INDEX job_limited_idx ON job (task) WHERE limited AND state IN ('STARTING', 'RUNNING');

-- The token bucket of each rate-limited task: the permits it holds at refilled_at. A claim locks
-- the row, adds the permits earned since (at the task's rate, up to its burst), takes at most the
-- whole permits it holds and pays for the jobs it claimed.
CREATE TABLE task_rate (
    task        text             PRIMARY KEY,
    permits     double precision NOT NULL,
    refilled_at timestamptz      NOT NULL
);
