-- pgqueue schema, version 24: the actions operators take, who took them, and the progress of bulk ones.
--
-- One row per action taken through QueueAdmin (the console, the queues endpoint, or code): pausing
-- or resuming a task, re-running, cancelling, rescuing, and bulk actions over every job a filter
-- matches. A bulk action's row is its progress: the node that runs it updates acted and skipped
-- after each batch, so every node (and the console on any of them) shows how far it got. Rows stay
-- until deleted: the table grows by one row per action, not per job.
CREATE TABLE queue_action (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    actor       text,
    action      text        NOT NULL,
    target      text        NOT NULL,
    state       text        NOT NULL CONSTRAINT queue_action_state
                            CHECK (state IN ('RUNNING', 'DONE', 'FAILED', 'STOPPED')),
    matched     bigint,
    acted       bigint      NOT NULL DEFAULT 0,
    skipped     bigint      NOT NULL DEFAULT 0,
    node        text,
    message     text,
    started_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
);

COMMENT ON TABLE queue_action IS 'Operator actions (who, what, when, how many jobs) and the progress of bulk actions';
