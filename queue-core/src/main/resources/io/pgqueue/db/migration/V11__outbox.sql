-- pgqueue schema, version 11: the outbox of a sharded installation.
--
-- A job enqueued in a transaction on the main shard whose partition lives on another shard cannot
-- be written there in that transaction. It is written here instead, in the caller's transaction,
-- and relayed to its shard after the commit (io.pgqueue.OutboxRelay): it exists if and only if the
-- caller's transaction commits. A batch whose jobs span shards goes the same way, so that it stays
-- all or nothing. Rows live for milliseconds; the table stays small and is vacuumed often.
CREATE TABLE job_outbox (
    id                       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- Taken from the main shard's id range when the job is enqueued: the caller gets it at once.
    job_id                   bigint      NOT NULL,
    partition                integer     NOT NULL CHECK (partition >= 0),
    task                     text        NOT NULL,
    payload                  jsonb       NOT NULL,
    headers                  jsonb       NOT NULL,
    priority                 smallint    NOT NULL,
    schedule_time            timestamptz NOT NULL,
    delay_tolerance_deadline timestamptz,
    max_attempts             integer     NOT NULL,
    dedup_key                text,
    -- The dedup policy the relay applies to a duplicate on the shard, null for the task's own.
    dedup_policy             text        CHECK (dedup_policy IN ('KEEP_EXISTING', 'REPLACE_IF_READY', 'MERGE_IF_READY', 'RERUN')),
    created_at               timestamptz NOT NULL
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0
);

-- On every shard: outbox rows already relayed here, written in the transaction that writes their
-- jobs. A relay that commits on the shard and dies before deleting the rows from the outbox finds
-- them here and writes nothing twice. Deleted once the outbox rows are gone.
CREATE TABLE job_relayed (
    outbox_id  bigint      PRIMARY KEY,
    partition  integer     NOT NULL,
    relayed_at timestamptz NOT NULL DEFAULT now()
);
