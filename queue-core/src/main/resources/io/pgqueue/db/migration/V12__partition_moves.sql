-- pgqueue schema, version 12: moving a partition from one shard to another.
--
-- A move is journaled on the main shard, one row per moving partition, so that any node can finish
-- a move whose node died (io.pgqueue.shard.PartitionMover). Jobs leave the source shard in batches:
-- each batch is deleted from job and kept in job_moving in one transaction on the source, written
-- to the target together with its mark in move_applied in one transaction on the target, and only
-- then dropped from job_moving. A job is always in exactly one of: the source's job table, the
-- source's job_moving (where no worker sees it), the target's job table.

-- On the main shard: the moves in progress.
CREATE TABLE partition_move (
    partition  integer     PRIMARY KEY CHECK (partition >= 0),
    source     text        NOT NULL REFERENCES shard (name),
    target     text        NOT NULL REFERENCES shard (name),
    -- MARKED: enqueues stopped, jobs leaving; SWITCHED: the target holds the partition.
    step       text        NOT NULL CHECK (step IN ('MARKED', 'SWITCHED')),
    started_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT partition_move_shards CHECK (source <> target)
);

-- On every shard: jobs on their way to another shard, one batch at a time.
CREATE SEQUENCE job_moving_batch_seq;

CREATE TABLE job_moving (
    batch     bigint  NOT NULL,
    partition integer NOT NULL,
    -- The whole job row, as to_jsonb(job) gives it; the target restores it column by column.
    job       jsonb   NOT NULL
);

CREATE INDEX job_moving_batch_idx ON job_moving (partition, batch);

-- On every shard: the batches it received, by source shard number, so that a batch is written once
-- however often a crashed move is resumed.
CREATE TABLE move_applied (
    source     integer     NOT NULL,
    batch      bigint      NOT NULL,
    partition  integer     NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source, batch)
);
