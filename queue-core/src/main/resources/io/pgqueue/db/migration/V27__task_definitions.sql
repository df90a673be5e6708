-- pgqueue schema, version 27: the tasks' settings in the database, for enqueue_job (R__enqueue.sql).
--
-- Every node writes the settings of the tasks it declares (handlers and pgqueue.tasks entries) when
-- it opens the queue, so that a job enqueued from SQL gets the defaults a job enqueued through
-- QueueClient gets, and a task no node declared is refused as QueueClient refuses it. During a
-- rolling deploy the node that opened last wins; the settings of one task should agree on every node.
CREATE TABLE task_definition (
    task               text        PRIMARY KEY,
    priority           integer     NOT NULL,
    max_attempts       integer     NOT NULL CHECK (max_attempts >= 1),
    delay_tolerance_ms bigint      CHECK (delay_tolerance_ms >= 0),
    -- As the outbox records it: KEEP_EXISTING, REPLACE_IF_READY, MERGE_IF_READY, RERUN or UNIQUE:<ms>:<states>.
    dedup_policy       text        NOT NULL,
    -- The task derives a job's dedup key, or its group, from the payload in Java (a function or SpEL).
    derives_dedup_key  boolean     NOT NULL,
    grouped            boolean     NOT NULL,
    derives_group      boolean     NOT NULL,
    tags               text[]      NOT NULL DEFAULT '{}',
    encrypted          boolean     NOT NULL,
    max_payload_bytes  bigint      NOT NULL,
    declared_by        text        NOT NULL,
    declared_at        timestamptz NOT NULL DEFAULT now()
);

COMMENT ON TABLE task_definition IS 'The settings of each declared task, written by the nodes that declare it; read by enqueue_job';
