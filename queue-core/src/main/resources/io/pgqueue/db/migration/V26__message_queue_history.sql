-- pgqueue schema, version 26: what each message queue did, per minute for a day and per hour for a week.
--
-- Every node that sends, receives or deletes messages adds its counts every few seconds, one
-- statement for every queue it used, to the minute's and the hour's row of each queue, as worker
-- nodes add to task_history (V25); the sums over nodes are the installation's rates. A node prunes
-- minute rows older than 25 hours and hour rows older than 8 days.
CREATE TABLE message_queue_history (
    step_seconds integer     NOT NULL CONSTRAINT message_queue_history_step CHECK (step_seconds IN (60, 3600)),
    bucket       timestamptz NOT NULL,
    queue        text        NOT NULL,
    sent         bigint      NOT NULL DEFAULT 0,
    received     bigint      NOT NULL DEFAULT 0,
    deleted      bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (step_seconds, bucket, queue)
);

COMMENT ON TABLE message_queue_history IS 'Per message queue and minute (step 60) or hour (step 3600): messages sent, received, deleted';
