-- pgqueue schema, version 17: recurring jobs.
--
-- One row per schedule: a task, a cron expression in a time zone, the payload of its jobs, and
-- when it fires next. Every node's scheduler locks the due rows (FOR UPDATE SKIP LOCKED), enqueues
-- the jobs of their due slots and moves next_fire past now in the same transaction, so each slot
-- fires once whatever the number of nodes, with no leader, and a restart neither repeats nor
-- loses a slot.
CREATE TABLE schedule (
    name        text        PRIMARY KEY CONSTRAINT schedule_name CHECK (length(name) BETWEEN 1 AND 128),
    task        text        NOT NULL CONSTRAINT schedule_task CHECK (length(task) BETWEEN 1 AND 48),
    cron        text        NOT NULL,
    zone        text        NOT NULL,
    payload     jsonb       NOT NULL DEFAULT '{}',
    catch_up    text        NOT NULL CONSTRAINT schedule_catch_up CHECK (catch_up IN ('RUN_ONCE', 'RUN_ALL', 'SKIP')),
    -- 'CONFIG': declared by a task's settings, kept in step with them by the nodes that declare the
    -- task; 'RUNTIME': added through the API or the endpoint, kept until removed there.
    source      text        NOT NULL CONSTRAINT schedule_source CHECK (source IN ('CONFIG', 'RUNTIME')),
    next_fire   timestamptz NOT NULL,
    last_fire   timestamptz,
    last_job_id bigint,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- The scheduler's question: which schedules are due, and when is the next one.
CREATE INDEX schedule_next_fire_idx ON schedule (next_fire);
