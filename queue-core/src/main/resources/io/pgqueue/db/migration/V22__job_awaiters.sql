-- pgqueue schema, version 22: callers waiting for a job to end (QueueClient.await).
--
-- A caller that awaits a job marks it tracked (so its end runs end_jobs, R__workflows.sql) and
-- adds a row here; end_jobs deletes the rows of the jobs that ended and sends their ids on the
-- channel '<schema>/ended', which the awaiting nodes listen on. Jobs nobody awaits never touch the
-- table.
CREATE TABLE job_awaiter (
    job_id bigint      PRIMARY KEY,
    since  timestamptz NOT NULL DEFAULT now()
);
