-- pgqueue schema, version 13: the partition balancer (io.pgqueue.balance).
--
-- Everything here lives on the main shard. Nodes count the jobs each partition brings (enqueued
-- and executed) and add their counts to partition_load per time bucket; the balancer, run by one
-- node at a time (the holder of the balancer_leader lease), weighs partitions by these counts,
-- records every decision in balancer_decision, and reads from it which partitions moved recently
-- (friction) when it takes over.

-- Jobs per partition per bucket, summed over the nodes that counted them.
CREATE TABLE partition_load (
    bucket    timestamptz NOT NULL,
    partition integer     NOT NULL CHECK (partition >= 0),
    jobs      bigint      NOT NULL CHECK (jobs >= 0),
    PRIMARY KEY (bucket, partition)
);

-- The node that runs the balancer, until its lease runs out; one row.
CREATE TABLE balancer_leader (
    singleton boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    node      text        NOT NULL,
    until     timestamptz NOT NULL
);

-- Every move the balancer decided, and how it ended.
CREATE TABLE balancer_decision (
    id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    decided_at  timestamptz NOT NULL DEFAULT now(),
    node        text        NOT NULL,
    reason      text        NOT NULL CHECK (reason IN ('DRAIN', 'OVERLOAD', 'GINI')),
    partition   integer     NOT NULL CHECK (partition >= 0),
    source      text        NOT NULL,
    target      text        NOT NULL,
    weight      double precision NOT NULL,
    gini_before double precision NOT NULL,
    gini_after  double precision NOT NULL,
    -- MOVED: done; FAILED: the move did not happen (error says why); null while it runs.
    outcome     text        CHECK (outcome IN ('MOVED', 'FAILED')),
    error       text,
    finished_at timestamptz
);

CREATE INDEX balancer_decision_recent_idx ON balancer_decision (decided_at DESC);

-- Shards an operator drains: the balancer moves every partition off them and none onto them.
ALTER TABLE shard ADD COLUMN draining boolean NOT NULL DEFAULT false;
