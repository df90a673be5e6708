-- pgqueue schema, version 29: message move tasks (SQS's StartMessageMoveTask), the queue each
-- dead-lettered message came from, and fair queues (standard queues' message groups served in turn).
--
-- A receive that moves a message to its dead-letter queue records the queue it came from, where a
-- move task without a destination returns it. Messages sent to a dead-letter queue directly, or
-- dead-lettered by an earlier release, have none.
ALTER TABLE message ADD COLUMN source_queue_id bigint;

COMMENT ON COLUMN message.source_queue_id IS 'The queue a dead-lettered message came from, where a move task returns it';

-- A task moves the messages of a dead-letter queue back, at most max_per_second a second, one
-- batch a second on whichever node's sweeper locks it first. One task runs per source queue at a time.
CREATE TABLE message_move_task (
    id                   bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    handle               text        NOT NULL UNIQUE,
    source_queue_id      bigint      NOT NULL,
    -- null: each message goes back to the queue it came from
    destination_queue_id bigint,
    max_per_second       integer     CONSTRAINT message_move_task_rate CHECK (max_per_second BETWEEN 1 AND 500),
    status               text        NOT NULL DEFAULT 'RUNNING'
                                     CONSTRAINT message_move_task_status
                                     CHECK (status IN ('RUNNING', 'COMPLETED', 'CANCELLED', 'FAILED')),
    moved                bigint      NOT NULL DEFAULT 0,
    to_move              bigint      NOT NULL,
    failure_reason       text,
    started_at           timestamptz NOT NULL DEFAULT now(),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

CREATE UNIQUE INDEX message_move_task_running_idx ON message_move_task (source_queue_id) WHERE status = 'RUNNING';

CREATE INDEX message_move_task_source_idx ON message_move_task (source_queue_id, started_at DESC);

COMMENT ON TABLE message_move_task IS 'Message move tasks: a dead-letter queue''s messages moved back to their sources or a destination';

-- Fair queues: a standard queue's message sent with a group (fair_group, V21) gets a rank, after its
-- group's last ranked message and never before the queue's first: receives take ranked messages in
-- rank order, so the groups are served in turn and a group with a large backlog does not hold back
-- the others. A message loses its rank when it is received (a message visible again is served by
-- visibility time, as every message without a group is). Unranked and ranked messages are kept in
-- separate indexes, so a ranked backlog costs an unranked receive nothing.
ALTER TABLE message ADD COLUMN fair_rank bigint;

DROP INDEX message_visible_idx;

CREATE INDEX message_visible_idx ON message (queue_id, visible_at, id) WHERE fair_rank IS NULL;

CREATE INDEX message_fair_idx ON message (queue_id, fair_rank, id) INCLUDE (visible_at) WHERE fair_rank IS NOT NULL;

CREATE INDEX message_fair_group_idx ON message (queue_id, fair_group, fair_rank) WHERE fair_rank IS NOT NULL;

COMMENT ON COLUMN message.fair_rank IS 'A standard queue''s grouped message''s place in the turns of its groups, until it is received';
