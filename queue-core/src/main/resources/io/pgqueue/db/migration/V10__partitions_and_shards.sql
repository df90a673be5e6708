-- pgqueue schema, version 10: jobs in partitions, partitions on shards.
--
-- Every job belongs to one of the installation's partitions: the hash of its dedup key when it has
-- one (so duplicates always meet in one partition), else of its partition key, else a partition
-- picked at random. A shard is one PostgreSQL database holding this schema; each partition lives
-- on exactly one shard at a time. Unsharded, the one database holds every partition and none of
-- the tables below but installation is read.

-- MurmurHash3 (x86, 32-bit, seed 0) of the key's UTF-8 bytes modulo the partition count, as the
-- Java side computes it (io.pgqueue.shard.PartitionHash). Fixed for good: a different function
-- would strand every dedup key. 32-bit products are formed from 16-bit halves so that bigint
-- arithmetic never overflows.
CREATE FUNCTION partition_of(p_key text, p_partitions integer) RETURNS integer
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $partition$
DECLARE
    data bytea := convert_to(p_key, 'UTF8');
    len integer := length(data);
    h bigint := 0;
    k bigint;
    i integer := 0;
    rest integer;
    mask constant bigint := 4294967295;
BEGIN
    WHILE i + 4 <= len LOOP
        k := get_byte(data, i)::bigint | (get_byte(data, i + 1)::bigint << 8) | (get_byte(data, i + 2)::bigint << 16)
             | (get_byte(data, i + 3)::bigint << 24);
        k := (((k & 65535) * 3432918353) + ((((k >> 16) * 3432918353) & 65535) << 16)) & mask;
        k := ((k << 15) | (k >> 17)) & mask;
        k := (((k & 65535) * 461845907) + ((((k >> 16) * 461845907) & 65535) << 16)) & mask;
        h := h # k;
        h := ((h << 13) | (h >> 19)) & mask;
        h := (h * 5 + 3864292196) & mask;
        i := i + 4;
    END LOOP;
    rest := len - i;
    IF rest > 0 THEN
        k := 0;
        IF rest = 3 THEN
            k := k # (get_byte(data, i + 2)::bigint << 16);
        END IF;
        IF rest >= 2 THEN
            k := k # (get_byte(data, i + 1)::bigint << 8);
        END IF;
        k := k # get_byte(data, i)::bigint;
        k := (((k & 65535) * 3432918353) + ((((k >> 16) * 3432918353) & 65535) << 16)) & mask;
        k := ((k << 15) | (k >> 17)) & mask;
        k := (((k & 65535) * 461845907) + ((((k >> 16) * 461845907) & 65535) << 16)) & mask;
        h := h # k;
    END IF;
    h := h # len;
    h := h # (h >> 16);
    h := (((h & 65535) * 2246822507) + ((((h >> 16) * 2246822507) & 65535) << 16)) & mask;
    h := h # (h >> 13);
    h := (((h & 65535) * 3266489909) + ((((h >> 16) * 3266489909) & 65535) << 16)) & mask;
    h := h # (h >> 16);
    RETURN h % p_partitions;
END
$partition$;

-- The installation, one row: its partition count, recorded when the schema is created, and, on a
-- shard, the shard's place in the installation (set when the shard is registered).
CREATE TABLE installation (
    singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
    id           uuid        NOT NULL DEFAULT gen_random_uuid(),
    partitions   integer     NOT NULL CHECK (partitions BETWEEN 1 AND 32768),
    shard_name   text,
    shard_number integer     CHECK (shard_number BETWEEN 0 AND 32767),
    created_at   timestamptz NOT NULL DEFAULT now()
);

INSERT INTO installation (partitions) VALUES (1024);

-- The job's partition. Jobs already queued get the partition of their dedup key; jobs without one
-- stay in partition 0, which is as good as any. The default keeps a node of the previous release,
-- still running during a rolling upgrade, able to enqueue (it cannot run sharded).
ALTER TABLE job ADD COLUMN partition integer NOT NULL DEFAULT 0 CONSTRAINT job_partition CHECK (partition >= 0);
ALTER TABLE job_finished ADD COLUMN partition integer NOT NULL DEFAULT 0;
UPDATE job SET partition = partition_of(dedup_key, 1024) WHERE dedup_key IS NOT NULL;
UPDATE job_finished SET partition = partition_of(dedup_key, 1024) WHERE dedup_key IS NOT NULL;

-- On every shard: the partitions this shard holds. A sharded enqueue writes a job only if its
-- partition is here and ACTIVE, taking a KEY SHARE lock on the row, so a node routing with a stale
-- map cannot write to the wrong shard, and a partition being marked MOVING (FOR UPDATE) waits for
-- the enqueues in flight to commit.
CREATE TABLE shard_partition (
    partition integer     PRIMARY KEY CHECK (partition >= 0),
    state     text        NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'MOVING')),
    since     timestamptz NOT NULL DEFAULT now()
);

-- On the coordinating shard: the installation's shards, numbered once. A shard's number sets its
-- job id range (number << 48 onwards), so ids are unique across shards and a job keeps its id when
-- its partition moves.
CREATE TABLE shard (
    name     text        PRIMARY KEY CHECK (name ~ '^[a-z0-9][a-z0-9_-]{0,39}$'),
    number   integer     NOT NULL UNIQUE CHECK (number BETWEEN 0 AND 32767),
    added_at timestamptz NOT NULL DEFAULT now()
);

-- On the coordinating shard: the partition map. A partition is ACTIVE on its shard, or MOVING from
-- it to the target shard; every change raises the version in partition_map_version.
CREATE TABLE partition_map (
    partition  integer     PRIMARY KEY CHECK (partition >= 0),
    shard      text        NOT NULL REFERENCES shard (name),
    state      text        NOT NULL DEFAULT 'ACTIVE' CHECK (state IN ('ACTIVE', 'MOVING')),
    target     text        REFERENCES shard (name),
    changed_at timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT partition_map_target CHECK ((state = 'MOVING') = (target IS NOT NULL) AND target IS DISTINCT FROM shard)
);

CREATE TABLE partition_map_version (
    singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    version   bigint  NOT NULL DEFAULT 0
);

INSERT INTO partition_map_version (singleton) VALUES (true);
