-- pgqueue schema, version 2: the node registry and job progress.

-- One row per running worker node, refreshed by its heartbeat and removed when it stops.
-- Operators read it to see who is working; a node that vanished without stopping ages out.
CREATE TABLE node (
    id             text        PRIMARY KEY,
    host           text        NOT NULL,
    started_at     timestamptz NOT NULL DEFAULT now(),
    last_heartbeat timestamptz NOT NULL DEFAULT now(),
    pools          jsonb       NOT NULL DEFAULT '{}'
);

-- Free-form progress a long-running handler reports (e.g. "1200 of 5000 files copied"),
-- written with its lease heartbeats.
ALTER TABLE job ADD COLUMN progress text;
ALTER TABLE job_finished ADD COLUMN progress text;
