-- pgqueue schema, version 30: message queues spread over the shards of a sharded installation.
--
-- The queues themselves (message_queue, move tasks, history) stay on the main shard; their messages
-- are written to the shard holding their partition: a FIFO message's by its group, a standard
-- message's with a group by that group, any other's at random. A message with no partition was
-- written by an unsharded installation, or in the application's transaction on the main shard, and
-- stays on the shard where it is.
ALTER TABLE message ADD COLUMN partition integer;

COMMENT ON COLUMN message.partition IS 'The partition whose shard holds the message; null: it stays where it is';

-- The FIFO deduplication ids of partitioned messages move with their partition.
ALTER TABLE message_dedup ADD COLUMN partition integer;

-- A partition move takes its messages in id order; unpartitioned messages are not indexed.
CREATE INDEX message_partition_idx ON message (partition, id) WHERE partition IS NOT NULL;

CREATE INDEX message_dedup_partition_idx ON message_dedup (partition) WHERE partition IS NOT NULL;

-- On every shard: messages (and FIFO deduplication ids) on their way to another shard, as job_moving
-- holds jobs (V12). A batch is numbered from job_moving_batch_seq, so the target's move_applied
-- marks it written once, whichever kind of rows it holds.
CREATE TABLE message_moving (
    batch     bigint  NOT NULL,
    partition integer NOT NULL,
    -- 'message' or 'dedup': the row is to_jsonb of a message or of a message_dedup row.
    kind      text    NOT NULL CHECK (kind IN ('message', 'dedup')),
    row       jsonb   NOT NULL
);

CREATE INDEX message_moving_batch_idx ON message_moving (partition, batch);
