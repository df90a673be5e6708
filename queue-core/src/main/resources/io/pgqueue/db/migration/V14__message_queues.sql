-- pgqueue schema, version 14: message queues (io.pgqueue.message), the pull model of Amazon SQS.
--
-- A message queue holds messages that consumers receive, which hides them for a visibility
-- timeout, and delete with the receipt of that receive. They live on the main shard, apart from
-- the job table: a message has no task, state, lease owner or outcome, and is deleted when it is
-- done with, so the hot table holds only the messages not yet deleted.

CREATE TABLE message_queue (
    id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name                 text        NOT NULL UNIQUE CHECK (name ~ '^([A-Za-z0-9_-]{1,80}|[A-Za-z0-9_-]{1,75}\.fifo)$'),
    fifo                 boolean     NOT NULL,
    visibility_timeout_s integer     NOT NULL CHECK (visibility_timeout_s BETWEEN 0 AND 43200),
    retention_s          integer     NOT NULL CHECK (retention_s BETWEEN 60 AND 1209600),
    delay_s              integer     NOT NULL CHECK (delay_s BETWEEN 0 AND 900),
    max_message_size     integer     NOT NULL CHECK (max_message_size BETWEEN 1024 AND 1048576),
    receive_wait_s       integer     NOT NULL CHECK (receive_wait_s BETWEEN 0 AND 20),
    content_dedup        boolean     NOT NULL DEFAULT false,
    -- Redrive: a message received max_receive_count times moves to dead_letter_queue when received again.
    dead_letter_queue    text,
    max_receive_count    integer     CHECK (max_receive_count BETWEEN 1 AND 1000),
    tags                 jsonb       NOT NULL DEFAULT '{}',
    created_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now(),
    CHECK (fifo = (name LIKE '%.fifo')),
    CHECK ((dead_letter_queue IS NULL) = (max_receive_count IS NULL))
);

CREATE TABLE message (
    id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id          bigint      NOT NULL,
    message_id        uuid        NOT NULL,
    -- Kept verbatim: a body is any text, not necessarily JSON, and its MD5 is the client's check.
    body              text        NOT NULL,
    attributes        jsonb,
    sent_at           timestamptz NOT NULL,
    -- When a consumer may receive it: the send time plus its delay, then the end of each visibility timeout.
    visible_at        timestamptz NOT NULL,
    receive_count     integer     NOT NULL DEFAULT 0,
    first_received_at timestamptz,
    -- Random per receive: a receipt handle deletes the message only while it holds the latest one.
    receipt           bigint,
    group_id          text,
    dedup_id          text,
    CHECK ((receive_count = 0) = (receipt IS NULL))
);

-- As the job table (V6): VACUUM keeps the empty tail pages for the next messages instead of
-- truncating them under an ACCESS EXCLUSIVE lock that stalls every send, receive and delete.
ALTER TABLE message SET (vacuum_truncate = false);

-- Receive: the visible messages of a queue, oldest first; its first entry is also the next to become visible.
CREATE INDEX message_visible_idx ON message (queue_id, visible_at, id);

-- Retention and the age of the oldest message.
CREATE INDEX message_sent_idx ON message (queue_id, sent_at);

-- FIFO queues: a group's messages in order.
CREATE INDEX message_group_idx ON message (queue_id, group_id, id) WHERE group_id IS NOT NULL;

-- FIFO queues: one row per group that has messages, available when its first message is: a group
-- whose first message is in flight delivers nothing else until it is deleted or visible again. The
-- row is locked by whoever changes the group's first message (receive, delete, visibility change).
CREATE TABLE message_group (
    queue_id   bigint      NOT NULL,
    group_id   text        NOT NULL,
    available_at timestamptz NOT NULL,
    PRIMARY KEY (queue_id, group_id)
);

CREATE INDEX message_group_free_idx ON message_group (queue_id, available_at);

-- FIFO queues: deduplication ids seen in the last five minutes, and the message each one sent.
CREATE TABLE message_dedup (
    queue_id   bigint      NOT NULL,
    dedup_id   text        NOT NULL,
    message_id uuid        NOT NULL,
    -- The sequence number of that message, returned to a duplicate send.
    sequence   bigint,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (queue_id, dedup_id)
);

CREATE INDEX message_dedup_expiry_idx ON message_dedup (expires_at);
