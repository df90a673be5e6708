-- pgqueue schema, version 21: a standard queue keeps the MessageGroupId a message was sent with.
--
-- On a FIFO queue the group orders the messages (group_id, message_group). On a standard queue it
-- orders nothing: it is the tenant the message belongs to (SQS fair queues), returned with the
-- message on receive and carried to a dead-letter queue. Adding a nullable column without a default
-- rewrites no row and holds its lock for an instant.
ALTER TABLE message ADD COLUMN fair_group text;

COMMENT ON COLUMN message.fair_group IS 'A standard queue''s MessageGroupId: kept and returned, orders nothing';
