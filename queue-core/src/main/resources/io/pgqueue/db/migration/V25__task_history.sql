-- pgqueue schema, version 25: what each task did, per minute for a day and per hour for a week.
--
-- Worker nodes add what their handlers did (jobs completed, failed and retried; the wait from due to
-- start and the run time, as count, sum and maximum) every few seconds, one statement per node for
-- every task, to the minute's row and to the hour's row of each task; the sums over nodes are the
-- installation's figures. The console's charts and the queues endpoint read them, so the history
-- outlives any node and any page. A node prunes minute rows older than 25 hours and hour rows
-- older than 8 days: a few thousand rows per task at most.
CREATE TABLE task_history (
    step_seconds   integer     NOT NULL CONSTRAINT task_history_step CHECK (step_seconds IN (60, 3600)),
    bucket         timestamptz NOT NULL,
    task           text        NOT NULL,
    completed      bigint      NOT NULL DEFAULT 0,
    failed         bigint      NOT NULL DEFAULT 0,
    retried        bigint      NOT NULL DEFAULT 0,
    waits          bigint      NOT NULL DEFAULT 0,
    wait_sum_ms    bigint      NOT NULL DEFAULT 0,
    wait_max_ms    bigint      NOT NULL DEFAULT 0,
    runs           bigint      NOT NULL DEFAULT 0,
    run_sum_ms     bigint      NOT NULL DEFAULT 0,
    run_max_ms     bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (step_seconds, bucket, task)
);

COMMENT ON TABLE task_history IS 'Per task and minute (step 60) or hour (step 3600): jobs completed, failed, retried, wait and run times';
