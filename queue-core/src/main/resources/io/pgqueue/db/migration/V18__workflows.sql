-- pgqueue schema, version 18: workflows — jobs that run after other jobs, fan-out / fan-in, batches.
--
-- A job that depends on jobs not yet finished waits in job_waiting, outside the claim's table and
-- indexes, with the number of its dependencies still to finish. When a dependency ends, the
-- transaction that ends it (an outcome write, a cancel) counts it off its dependents at commit
-- (R__workflows.sql): a dependent whose count reaches zero moves into the job table as READY,
-- keeping its id; one whose dependency failed is cancelled or run anyway, as its workflow chose.
-- Jobs without dependencies, dependents or a workflow pay one boolean per row.

-- Set on a job whose end matters to others: it belongs to a workflow, jobs wait for it, or it waited
-- for jobs itself. Only such rows fire the trigger that records their end (R__workflows.sql).
ALTER TABLE job ADD COLUMN tracked boolean NOT NULL DEFAULT false;

-- A workflow: jobs enqueued together, some after others, with counts of how they ended.
CREATE TABLE workflow (
    id          bigint      PRIMARY KEY,
    name        text        NOT NULL CONSTRAINT workflow_name CHECK (length(name) BETWEEN 1 AND 128),
    -- What a job whose dependency failed or was cancelled does: 'CANCEL' it (and its own
    -- dependents), or 'RUN' it anyway.
    on_failure  text        NOT NULL CONSTRAINT workflow_on_failure CHECK (on_failure IN ('CANCEL', 'RUN')),
    state       text        NOT NULL DEFAULT 'RUNNING'
                            CONSTRAINT workflow_state CHECK (state IN ('RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED')),
    jobs        integer     NOT NULL CONSTRAINT workflow_jobs CHECK (jobs >= 1),
    completed   integer     NOT NULL DEFAULT 0,
    failed      integer     NOT NULL DEFAULT 0,
    cancelled   integer     NOT NULL DEFAULT 0,
    -- The job ids of the workflow's named steps, {"step": id}.
    steps       jsonb       NOT NULL,
    partition   integer     NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz,
    CONSTRAINT workflow_finished CHECK ((state = 'RUNNING') = (finished_at IS NULL))
);

-- Operators list running workflows and the latest finished ones; retention deletes finished ones.
CREATE INDEX workflow_state_idx ON workflow (state, finished_at);

-- Jobs waiting for their dependencies: the job's columns as enqueued, and the count.
CREATE TABLE job_waiting (
    id                bigint      PRIMARY KEY,
    task              text        NOT NULL CONSTRAINT job_waiting_task CHECK (length(task) BETWEEN 1 AND 48),
    priority          smallint    NOT NULL,
    payload           jsonb       NOT NULL,
    headers           jsonb       NOT NULL,
    -- When it becomes due once released: at run_at, or delay_ms after the release.
    run_at            timestamptz,
    delay_ms          bigint      NOT NULL DEFAULT 0,
    tolerance_ms      bigint,
    max_attempts      integer     NOT NULL,
    partition         integer     NOT NULL DEFAULT 0,
    workflow          bigint,
    on_failure        text        NOT NULL CONSTRAINT job_waiting_on_failure CHECK (on_failure IN ('CANCEL', 'RUN')),
    dependencies      integer     NOT NULL,
    -- Dependencies not finished yet; the job is released when it reaches zero.
    pending           integer     NOT NULL,
    -- Dependencies that failed or were cancelled (run-anyway jobs count them).
    failed            integer     NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT job_waiting_pending CHECK (pending BETWEEN 0 AND dependencies)
);

CREATE INDEX job_waiting_workflow_idx ON job_waiting (workflow) WHERE workflow IS NOT NULL;
CREATE INDEX job_waiting_task_idx ON job_waiting (task);

-- Who waits for whom. An edge stays until its dependent ends, so a running job can read the
-- results of its dependencies.
CREATE TABLE job_dependency (
    depends_on bigint NOT NULL,
    job_id     bigint NOT NULL,
    PRIMARY KEY (depends_on, job_id)
);

CREATE INDEX job_dependency_job_idx ON job_dependency (job_id);

-- Results recorded by jobs for their dependents: small JSON values, kept while the workflow (or,
-- outside a workflow, the completed job) is kept.
CREATE TABLE job_result (
    id          bigint      PRIMARY KEY,
    workflow    bigint,
    step        text,
    result      jsonb       NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX job_result_workflow_idx ON job_result (workflow) WHERE workflow IS NOT NULL;

-- Workflows that ended, per final state, since the schema was created: the metrics' counters.
-- Written once per ended workflow, by the transaction that ends it.
CREATE TABLE workflow_total (
    state     text   PRIMARY KEY CONSTRAINT workflow_total_state CHECK (state IN ('COMPLETED', 'FAILED', 'CANCELLED')),
    workflows bigint NOT NULL DEFAULT 0
);

INSERT INTO workflow_total (state) VALUES ('COMPLETED'), ('FAILED'), ('CANCELLED');

-- One row per transaction that ended tracked jobs, inserted with its first such end and deleted at
-- its commit: the deferred trigger that applies the ends fires on this row, once per transaction,
-- instead of once per ended job. Never visible to another transaction.
CREATE TABLE job_end_pending (
    txid bigint PRIMARY KEY
);
