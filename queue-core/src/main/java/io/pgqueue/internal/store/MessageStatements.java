package io.pgqueue.internal.store;

/**
 * The SQL of message queues (tables {@code message_queue}, {@code message}, {@code message_group},
 * {@code message_dedup}), one named statement per operation. {@code ${schema}} stands for the
 * validated queue schema. Its length is its statements, each a text block with its reason; a
 * class of statements has no logic to split.
 */
public final class MessageStatements {

    private MessageStatements() {
    }

    /**
     * A condition that switches the transaction's commit to asynchronous when :relaxed: a receive,
     * delete or visibility change lost in a crash leaves the message to be delivered again
     * (at-least-once holds), so it need not wait for the WAL flush. Never for sends, and never in
     * the caller's own transaction.
     */
    private static final String RELAXED_COMMIT = """
            (SELECT CASE WHEN :relaxed THEN set_config('synchronous_commit', 'off', true) ELSE 'on' END) IS NOT NULL""";

    private static final String QUEUE_COLUMNS = """
            id, name, fifo, visibility_timeout_s, retention_s, delay_s, max_message_size, receive_wait_s,
            content_dedup, dead_letter_queue, max_receive_count, CAST(tags AS text) AS tags, created_at, updated_at
            """;

    /** Creates a queue unless one of that name exists; returns nothing then. */
    static final String CREATE_QUEUE = """
            INSERT INTO ${schema}.message_queue (name, fifo, visibility_timeout_s, retention_s, delay_s, max_message_size,
                                                 receive_wait_s, content_dedup, dead_letter_queue, max_receive_count, tags)
            VALUES (:name, :fifo, :visibilityTimeout, :retention, :delay, :maxMessageSize, :receiveWait, :contentDedup,
                    :deadLetterQueue, :maxReceiveCount, CAST(:tags AS jsonb))
            ON CONFLICT (name) DO NOTHING
            RETURNING %s
            """.formatted(QUEUE_COLUMNS);

    /** A queue by name. */
    static final String FIND_QUEUE = """
            SELECT %s FROM ${schema}.message_queue WHERE name = :name
            """.formatted(QUEUE_COLUMNS);

    /** A queue by id. */
    static final String FIND_QUEUE_BY_ID = """
            SELECT %s FROM ${schema}.message_queue WHERE id = :id
            """.formatted(QUEUE_COLUMNS);

    /** Queues whose name starts with a prefix (LIKE wildcards escaped by the caller), by name, after a name. */
    static final String LIST_QUEUES = """
            SELECT %s FROM ${schema}.message_queue
            WHERE name LIKE :prefix ESCAPE '\\' AND name > :after
            ORDER BY name
            LIMIT :limit
            """.formatted(QUEUE_COLUMNS);

    /** Queues whose redrive policy names a dead-letter queue. */
    static final String DEAD_LETTER_SOURCES = """
            SELECT %s FROM ${schema}.message_queue WHERE dead_letter_queue = :name ORDER BY name
            """.formatted(QUEUE_COLUMNS);

    /** Changes a queue's settings. */
    static final String UPDATE_QUEUE = """
            UPDATE ${schema}.message_queue
            SET visibility_timeout_s = :visibilityTimeout, retention_s = :retention, delay_s = :delay,
                max_message_size = :maxMessageSize, receive_wait_s = :receiveWait, content_dedup = :contentDedup,
                dead_letter_queue = :deadLetterQueue, max_receive_count = :maxReceiveCount, updated_at = now()
            WHERE id = :id
            """;

    /** Replaces a queue's tags. */
    static final String UPDATE_TAGS = """
            UPDATE ${schema}.message_queue SET tags = CAST(:tags AS jsonb) WHERE id = :id
            """;

    /**
     * Deletes a queue. Its messages go in a second statement of the same transaction, whose
     * snapshot sees every send that committed before the queue row was gone (a send writes only
     * to a queue whose row it sees).
     */
    static final String DELETE_QUEUE = """
            DELETE FROM ${schema}.message_queue WHERE id = :id
            """;

    /** Deletes the messages, groups and deduplication ids of a deleted queue. */
    static final String DELETE_QUEUE_CONTENTS = """
            WITH messages AS (
                DELETE FROM ${schema}.message WHERE queue_id = :id
            ), groups AS (
                DELETE FROM ${schema}.message_group WHERE queue_id = :id
            )
            DELETE FROM ${schema}.message_dedup WHERE queue_id = :id
            """;

    /**
     * Sends messages, in the order given, and wakes the receivers waiting on their queues (one
     * NOTIFY per queue and transaction, delivered on commit). A message whose queue is gone (deleted
     * since the sender read it) is not written.
     */
    static final String SEND = send("", "NULL", "", false);

    /**
     * {@link #SEND} on a shard of a sharded installation, fenced as jobs are: the messages are
     * written only if the shard holds every partition among them ACTIVE, or none is (KEY SHARE
     * locks on those shard_partition rows, which marking one MOVING waits for); messages without a
     * partition stay on this shard. The queue is not looked up: the catalog is on the main shard,
     * and messages of a queue deleted meanwhile are removed by the next count.
     */
    static final String SEND_FENCED = send("", "NULL", "", true);

    /** The rank of each fair group's next message: after its last ranked one, never before the queue's first. */
    private static final String RANKS = """
            , ranks AS (
                SELECT g.queue_id, g.fair_group, greatest(
                           (SELECT max(m.fair_rank) FROM ${schema}.message AS m
                            WHERE m.queue_id = g.queue_id AND m.fair_group = g.fair_group AND m.fair_rank IS NOT NULL),
                           (SELECT m.fair_rank - 1 FROM ${schema}.message AS m
                            WHERE m.queue_id = g.queue_id AND m.fair_rank IS NOT NULL ORDER BY m.fair_rank LIMIT 1),
                           0) AS last_rank
                FROM (SELECT DISTINCT queue_id, fair_group FROM input WHERE fair_group IS NOT NULL) AS g
            )""";

    private static final String RANK = "r.last_rank + row_number() OVER (PARTITION BY t.queue_id, t.fair_group ORDER BY t.ord)";

    private static final String RANK_JOIN = "LEFT JOIN ranks AS r ON r.queue_id = t.queue_id AND r.fair_group = t.fair_group";

    /**
     * Sends messages of which some have a fair group (a standard queue's message group): as
     * {@link #SEND}, and each such message gets its rank, after its group's last ranked message
     * and never before the queue's first. Kept apart from {@link #SEND}: its planning costs about
     * twice as much, which only batches with grouped messages pay.
     */
    static final String SEND_RANKED = send(RANKS, RANK, RANK_JOIN, false);

    /** {@link #SEND_RANKED}, fenced as {@link #SEND_FENCED}. */
    static final String SEND_RANKED_FENCED = send(RANKS, RANK, RANK_JOIN, true);

    private static String send(String ranks, String rank, String rankJoin, boolean fenced) {
        String held = !fenced ? "" : """
                , held AS (
                    SELECT owned.partition FROM ${schema}.shard_partition AS owned
                    WHERE owned.partition = ANY(ARRAY(SELECT DISTINCT partition FROM input)) AND owned.state = 'ACTIVE'
                    ORDER BY owned.partition
                    FOR KEY SHARE
                )""";
        String queue = fenced ? "" : "JOIN ${schema}.message_queue AS q ON q.id = t.queue_id";
        String where = !fenced ? "" : "WHERE (SELECT count(*) FROM held) = (SELECT count(DISTINCT partition) FROM input)";
        return """
                WITH input AS (
                    SELECT * FROM unnest(CAST(:queues AS bigint[]), CAST(:messageIds AS uuid[]), CAST(:bodies AS text[]),
                                         CAST(:attributes AS text[]), CAST(:delays AS integer[]), CAST(:groups AS text[]),
                                         CAST(:dedups AS text[]), CAST(:fairGroups AS text[]), CAST(:partitions AS integer[]))
                         WITH ORDINALITY AS t(queue_id, message_id, body, attributes, delay_s, group_id, dedup_id, fair_group,
                                              partition, ord)
                )%s%s, inserted AS (
                    INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, group_id,
                                                   dedup_id, fair_group, fair_rank, partition)
                    SELECT t.queue_id, t.message_id, t.body, CAST(t.attributes AS jsonb), statement_timestamp(),
                           statement_timestamp() + t.delay_s * interval '1 second', t.group_id, t.dedup_id, t.fair_group,
                           %s, t.partition
                    FROM input AS t
                    %s
                    %s
                    %s
                    ORDER BY t.ord
                    RETURNING id, queue_id, message_id
                ), notified AS (
                    SELECT pg_notify(:channel, CAST(q.queue_id AS text)) FROM (SELECT DISTINCT queue_id FROM inserted) AS q
                )
                SELECT i.id, CAST(i.message_id AS text) AS message_id, (SELECT count(*) FROM notified) AS notified
                FROM inserted AS i
                ORDER BY i.id
                """.formatted(held, ranks, rank, queue, rankJoin, where);
    }

    /**
     * FIFO: takes (and locks until commit) the groups of messages about to be sent, creating the
     * missing ones available when their first message is. Taking the lock before the messages get
     * their ids makes a group's id order its commit order; rows are locked in key order, so
     * concurrent senders do not deadlock. A group a deleter removed meanwhile is inserted anew.
     */
    static final String TAKE_GROUPS = """
            INSERT INTO ${schema}.message_group AS g (queue_id, group_id, available_at)
            SELECT t.queue_id, t.group_id, min(statement_timestamp() + t.delay_s * interval '1 second')
            FROM unnest(CAST(:queues AS bigint[]), CAST(:groups AS text[]), CAST(:delays AS integer[]))
                 AS t(queue_id, group_id, delay_s)
            GROUP BY t.queue_id, t.group_id
            ORDER BY t.queue_id, t.group_id
            ON CONFLICT (queue_id, group_id) DO UPDATE SET available_at = g.available_at
            """;

    /** Locks existing groups in key order, until commit: deletes and visibility changes of FIFO messages. */
    static final String LOCK_GROUPS = """
            SELECT g.group_id FROM ${schema}.message_group AS g
            JOIN unnest(CAST(:queues AS bigint[]), CAST(:groups AS text[])) AS t(queue_id, group_id)
              ON g.queue_id = t.queue_id AND g.group_id = t.group_id
            ORDER BY g.queue_id, g.group_id
            FOR UPDATE OF g
            """;

    /**
     * FIFO: makes each locked group available when its first message is, or removes it when it
     * holds none. Run after the changes, in the transaction holding the groups' locks.
     */
    static final String SETTLE_GROUPS = """
            WITH t AS (
                SELECT DISTINCT queue_id, group_id FROM unnest(CAST(:queues AS bigint[]), CAST(:groups AS text[]))
                     AS t(queue_id, group_id)
            ), head AS (
                SELECT t.queue_id, t.group_id, h.visible_at
                FROM t LEFT JOIN LATERAL (
                    SELECT m.visible_at FROM ${schema}.message AS m
                    WHERE m.queue_id = t.queue_id AND m.group_id = t.group_id
                    ORDER BY m.id
                    LIMIT 1
                ) AS h ON true
            ), updated AS (
                UPDATE ${schema}.message_group AS g SET available_at = head.visible_at
                FROM head
                WHERE g.queue_id = head.queue_id AND g.group_id = head.group_id AND head.visible_at IS NOT NULL
            )
            DELETE FROM ${schema}.message_group AS g
            USING head
            WHERE g.queue_id = head.queue_id AND g.group_id = head.group_id AND head.visible_at IS NULL
            """;

    /**
     * FIFO: deduplication ids of messages about to be sent. An id sent within the window returns the
     * message it sent (duplicate = true); an expired one is taken over. Rows are written in key
     * order; a concurrent send of the same id waits here for the first to commit.
     */
    static final String CLAIM_DEDUP_IDS = """
            INSERT INTO ${schema}.message_dedup AS d (queue_id, dedup_id, message_id, expires_at, partition)
            SELECT t.queue_id, t.dedup_id, t.message_id, statement_timestamp() + interval '5 minutes', t.partition
            FROM unnest(CAST(:queues AS bigint[]), CAST(:dedups AS text[]), CAST(:messageIds AS uuid[]),
                        CAST(:partitions AS integer[]))
                 AS t(queue_id, dedup_id, message_id, partition)
            ORDER BY t.queue_id, t.dedup_id
            ON CONFLICT (queue_id, dedup_id) DO UPDATE
                SET message_id = CASE WHEN d.expires_at <= statement_timestamp() THEN excluded.message_id ELSE d.message_id END,
                    expires_at = CASE WHEN d.expires_at <= statement_timestamp() THEN excluded.expires_at ELSE d.expires_at END
            RETURNING d.queue_id, d.dedup_id, CAST(d.message_id AS text) AS message_id, d.sequence
            """;

    /** FIFO: records the sequence number of the messages that took deduplication ids, for later duplicates. */
    static final String SET_DEDUP_SEQUENCES = """
            UPDATE ${schema}.message_dedup AS d SET sequence = t.sequence
            FROM unnest(CAST(:queues AS bigint[]), CAST(:dedups AS text[]), CAST(:sequences AS bigint[]))
                 AS t(queue_id, dedup_id, sequence)
            WHERE d.queue_id = t.queue_id AND d.dedup_id = t.dedup_id
            """;

    private static final String RECEIVED_COLUMNS = """
            m.id, CAST(m.message_id AS text) AS message_id, m.body, CAST(m.attributes AS text) AS attributes, m.sent_at,
            m.receive_count, m.first_received_at, m.receipt, m.group_id, m.dedup_id, m.fair_group, m.partition
            """;

    /** A random 62-bit receipt: unguessable enough that a handle cannot be forged from a message id. */
    private static final String NEW_RECEIPT = """
            (CAST(floor(random() * 2147483648) AS bigint) << 31) + CAST(floor(random() * 2147483648) AS bigint)
            """;

    /**
     * Standard queues: receives up to :max visible messages, oldest visible first (index
     * message_visible_idx; SKIP LOCKED lets concurrent receivers take different ones), hiding them
     * for :visibility seconds under a new receipt. Messages received :maxReceives times already move
     * to the dead-letter queue :deadLetter instead (a data-modifying CTE runs whether or not it is
     * read). The claimed ids are an ARRAY
     * so that the generic plan keeps to the index.
     */
    static final String RECEIVE = """
            WITH plain AS (
                SELECT m.id, m.receive_count >= :maxReceives AS dead FROM ${schema}.message AS m
                WHERE m.queue_id = :queue AND m.visible_at <= statement_timestamp() AND m.fair_rank IS NULL AND %s
                ORDER BY m.visible_at, m.id
                LIMIT :max
                FOR UPDATE SKIP LOCKED
            ), fair AS (
                -- Only when the unranked messages did not fill the receive (a one-time filter: no scan otherwise).
                SELECT m.id, m.receive_count >= :maxReceives AS dead FROM ${schema}.message AS m
                WHERE m.queue_id = :queue AND m.fair_rank IS NOT NULL AND m.visible_at <= statement_timestamp()
                  AND (SELECT count(*) FROM plain) < :max
                ORDER BY m.fair_rank, m.id
                LIMIT :max
                FOR UPDATE SKIP LOCKED
            ), picked AS (
                SELECT id, dead FROM plain
                UNION ALL
                (SELECT id, dead FROM fair LIMIT :max - (SELECT count(*) FROM plain))
            ), dead AS (
                DELETE FROM ${schema}.message AS m WHERE m.id = ANY(ARRAY(SELECT id FROM picked WHERE dead))
                RETURNING m.message_id, m.body, m.attributes, m.sent_at, m.fair_group, m.partition
            ), moved AS (
                INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, fair_group,
                                               source_queue_id, partition)
                SELECT :deadLetter, message_id, body, attributes, sent_at, statement_timestamp(), fair_group, :queue,
                       partition
                FROM dead
                RETURNING 1
            )
            UPDATE ${schema}.message AS m
            SET visible_at = statement_timestamp() + :visibility * interval '1 second',
                receive_count = m.receive_count + 1,
                first_received_at = coalesce(m.first_received_at, statement_timestamp()),
                receipt = %s,
                fair_rank = NULL
            WHERE m.id = ANY(ARRAY(SELECT id FROM picked WHERE NOT dead))
            RETURNING %s
            """.formatted(RELAXED_COMMIT, NEW_RECEIPT, RECEIVED_COLUMNS);

    /**
     * FIFO: locks the groups available now (oldest available first; SKIP LOCKED: a group being
     * received, deleted from or sent to elsewhere is left to that transaction) and returns, per
     * group in that order, the messages from its first up to the first that is not visible.
     */
    static final String PICK_FIFO = """
            WITH groups AS (
                SELECT g.group_id, g.available_at FROM ${schema}.message_group AS g
                WHERE g.queue_id = :queue AND g.available_at <= statement_timestamp() AND %s
                ORDER BY g.available_at
                LIMIT :max
                FOR UPDATE SKIP LOCKED
            )
            SELECT c.id, c.group_id, c.receive_count
            FROM groups AS g
            CROSS JOIN LATERAL (
                SELECT m.id, m.group_id, m.receive_count,
                       bool_and(m.visible_at <= statement_timestamp()) OVER (ORDER BY m.id) AS visible_so_far
                FROM ${schema}.message AS m
                WHERE m.queue_id = :queue AND m.group_id = g.group_id
                ORDER BY m.id
                LIMIT :max
            ) AS c
            WHERE c.visible_so_far
            ORDER BY g.available_at, c.id
            LIMIT :max
            """.formatted(RELAXED_COMMIT);

    /** FIFO: hides picked messages under a new receipt (their groups are locked by the picker). */
    static final String MARK_RECEIVED = """
            UPDATE ${schema}.message AS m
            SET visible_at = statement_timestamp() + :visibility * interval '1 second',
                receive_count = m.receive_count + 1,
                first_received_at = coalesce(m.first_received_at, statement_timestamp()),
                receipt = %s
            WHERE m.id = ANY(CAST(:ids AS bigint[]))
            RETURNING %s
            """.formatted(NEW_RECEIPT, RECEIVED_COLUMNS);

    /**
     * Moves messages to a dead-letter queue: they keep their id, body, attributes, send time, group
     * (FIFO or standard) and deduplication id, start there visible and unreceived, and remember the
     * queue they came from. Returns the groups they joined.
     */
    static final String MOVE_TO_DEAD_LETTER = """
            WITH dead AS (
                DELETE FROM ${schema}.message AS m WHERE m.id = ANY(CAST(:ids AS bigint[]))
                RETURNING m.id, m.queue_id, m.message_id, m.body, m.attributes, m.sent_at, m.group_id, m.dedup_id,
                          m.fair_group, m.partition
            )
            INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, group_id, dedup_id,
                                           fair_group, source_queue_id, partition)
            SELECT :deadLetter, message_id, body, attributes, sent_at, statement_timestamp(), group_id, dedup_id, fair_group,
                   queue_id, partition
            FROM dead
            ORDER BY id
            RETURNING group_id
            """;

    /** Deletes messages whose receipt is the latest one; returns the ids deleted. */
    static final String DELETE = """
            DELETE FROM ${schema}.message AS m
            USING unnest(CAST(:queues AS bigint[]), CAST(:ids AS bigint[]), CAST(:receipts AS bigint[]))
                  AS r(queue_id, id, receipt)
            WHERE m.id = r.id AND m.queue_id = r.queue_id AND m.receipt = r.receipt AND %s
            RETURNING m.id
            """.formatted(RELAXED_COMMIT);

    /**
     * Changes the visibility timeout of messages in flight whose receipt is the latest one, counted
     * from now; returns the ids changed.
     */
    static final String CHANGE_VISIBILITY = """
            UPDATE ${schema}.message AS m
            SET visible_at = statement_timestamp() + r.seconds * interval '1 second'
            FROM unnest(CAST(:queues AS bigint[]), CAST(:ids AS bigint[]), CAST(:receipts AS bigint[]),
                        CAST(:seconds AS integer[])) AS r(queue_id, id, receipt, seconds)
            WHERE m.id = r.id AND m.queue_id = r.queue_id AND m.receipt = r.receipt
              AND m.visible_at > statement_timestamp() AND %s
            RETURNING m.id
            """.formatted(RELAXED_COMMIT);

    /** Why a receipt did not match: the message's latest receipt and whether it is in flight, for those that exist. */
    static final String RECEIPT_STATES = """
            SELECT m.id, m.receipt, m.visible_at > statement_timestamp() AS in_flight
            FROM ${schema}.message AS m
            WHERE m.id = ANY(CAST(:ids AS bigint[]))
            """;

    /** Deletes every message of a queue, with its groups. */
    static final String PURGE = """
            WITH groups AS (
                DELETE FROM ${schema}.message_group WHERE queue_id = :queue
            )
            DELETE FROM ${schema}.message WHERE queue_id = :queue
            """;

    /** Wakes the receivers waiting on a queue, on commit. */
    static final String ANNOUNCE = """
            SELECT pg_notify(:channel, CAST(:queue AS text))
            """;

    /**
     * When the next message of a queue becomes visible: the first unranked one (message_visible_idx),
     * or the first ranked one (message_fair_idx; a fair queue's ranked messages are visible unless
     * sent with a delay, so a delayed one of a higher rank may wake a waiting receive later).
     */
    static final String NEXT_VISIBLE = """
            SELECT least(
                (SELECT visible_at FROM ${schema}.message
                 WHERE queue_id = :queue AND fair_rank IS NULL ORDER BY visible_at, id LIMIT 1),
                (SELECT visible_at FROM ${schema}.message
                 WHERE queue_id = :queue AND fair_rank IS NOT NULL ORDER BY fair_rank, id LIMIT 1))
            """;

    /** Deletes up to :limit messages of a standard queue older than its retention (index message_sent_idx). */
    static final String DELETE_EXPIRED = """
            DELETE FROM ${schema}.message
            WHERE id = ANY(ARRAY(
                SELECT id FROM ${schema}.message
                WHERE queue_id = :queue AND sent_at < statement_timestamp() - :retention * interval '1 second'
                ORDER BY sent_at
                LIMIT :limit
                FOR UPDATE SKIP LOCKED))
            """;

    /** FIFO: the groups of up to :limit messages older than the queue's retention, to lock before deleting them. */
    static final String EXPIRED_GROUPS = """
            SELECT DISTINCT group_id FROM (
                SELECT group_id FROM ${schema}.message
                WHERE queue_id = :queue AND sent_at < statement_timestamp() - :retention * interval '1 second'
                ORDER BY sent_at
                LIMIT :limit) AS expired
            """;

    /** FIFO: deletes the messages older than the queue's retention in locked groups. */
    static final String DELETE_EXPIRED_IN_GROUPS = """
            DELETE FROM ${schema}.message
            WHERE queue_id = :queue AND group_id = ANY(CAST(:groups AS text[]))
              AND sent_at < statement_timestamp() - :retention * interval '1 second'
            """;

    /**
     * VACUUMs the message table, skipping it when another VACUUM holds it: every receive and delete
     * leaves a dead row, and until they are cleaned receives step over them in message_visible_idx
     * (measured: 178,000 dead rows after 30 s of 2,000 messages/s, before autovacuum had woken).
     */
    static final String VACUUM = """
            VACUUM (SKIP_LOCKED, ANALYZE) ${schema}.message
            """;

    /** Forgets deduplication ids past their five minutes. */
    static final String DELETE_EXPIRED_DEDUP = """
            DELETE FROM ${schema}.message_dedup WHERE expires_at <= statement_timestamp()
            """;

    /** Counts of one queue: visible, in flight, delayed, and the oldest message's send time. */
    static final String COUNTS_OF_QUEUE = """
            SELECT CAST(:queue AS bigint) AS queue_id,
                   count(*) FILTER (WHERE m.visible_at <= statement_timestamp()) AS visible,
                   count(*) FILTER (WHERE m.visible_at > statement_timestamp() AND m.receive_count > 0) AS in_flight,
                   count(*) FILTER (WHERE m.visible_at > statement_timestamp() AND m.receive_count = 0) AS delayed,
                   min(m.sent_at) AS oldest
            FROM ${schema}.message AS m
            WHERE m.queue_id = :queue
            """;

    /** Counts per queue: visible, in flight, delayed, and the oldest message's send time. */
    static final String COUNTS = """
            SELECT m.queue_id,
                   count(*) FILTER (WHERE m.visible_at <= statement_timestamp()) AS visible,
                   count(*) FILTER (WHERE m.visible_at > statement_timestamp() AND m.receive_count > 0) AS in_flight,
                   count(*) FILTER (WHERE m.visible_at > statement_timestamp() AND m.receive_count = 0) AS delayed,
                   min(m.sent_at) AS oldest
            FROM ${schema}.message AS m
            GROUP BY m.queue_id
            """;

    /** A queue's oldest messages, as they are, without receiving them (message_sent_idx serves it). */
    static final String PEEK = """
            SELECT message_id, body, CAST(attributes AS text) AS attributes, sent_at, visible_at, receive_count, group_id,
                   dedup_id
            FROM ${schema}.message
            WHERE queue_id = :queue
            ORDER BY sent_at, id
            LIMIT :limit
            """;

    /**
     * Moves a batch of a standard queue's visible messages, oldest sent first, to another standard
     * queue ({@code :to}), or each to the queue it was dead-lettered from when {@code :to} is null,
     * as new arrivals there (visible now, never received), keeping their ids, bodies, attributes and
     * send times, as a dead-letter move keeps them; in-flight messages stay, and so do messages whose
     * target queue does not exist. Returns how many joined each target.
     */
    static final String REDRIVE = """
            WITH picked AS (
                SELECT m.id FROM ${schema}.message AS m
                JOIN unnest(CAST(:existing AS bigint[])) AS q(id) ON q.id = coalesce(CAST(:to AS bigint), m.source_queue_id)
                WHERE m.queue_id = :from AND m.visible_at <= statement_timestamp()
                ORDER BY m.sent_at, m.id
                LIMIT :limit
                FOR UPDATE OF m SKIP LOCKED
            ), taken AS (
                DELETE FROM ${schema}.message AS m WHERE m.id = ANY(ARRAY(SELECT id FROM picked))
                RETURNING m.message_id, m.body, m.attributes, m.sent_at, m.fair_group, m.source_queue_id, m.partition
            ), moved AS (
                INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, fair_group,
                                               partition)
                SELECT coalesce(CAST(:to AS bigint), source_queue_id), message_id, body, attributes, sent_at,
                       statement_timestamp(), fair_group, partition
                FROM taken
                RETURNING queue_id
            )
            SELECT queue_id, count(*) AS moved FROM moved GROUP BY queue_id
            """;

    /** The visible messages of a queue a redrive cannot move: the queue each would go to does not exist. */
    static final String UNMOVABLE = """
            SELECT count(*) FROM ${schema}.message AS m
            WHERE m.queue_id = :from AND m.visible_at <= statement_timestamp()
              AND NOT coalesce(coalesce(CAST(:to AS bigint), m.source_queue_id) = ANY(CAST(:existing AS bigint[])), false)
            """;

    /** FIFO redrive: groups of a queue available now (none of their messages in flight), in key order. */
    static final String AVAILABLE_GROUPS = """
            SELECT g.group_id FROM ${schema}.message_group AS g
            WHERE g.queue_id = :queue AND g.available_at <= statement_timestamp()
            ORDER BY g.group_id
            LIMIT :limit
            """;

    /** FIFO redrive: locks those of the groups still available, skipping the ones a receiver holds. */
    static final String LOCK_AVAILABLE_GROUPS = """
            SELECT g.group_id FROM ${schema}.message_group AS g
            WHERE g.queue_id = :queue AND g.group_id = ANY(CAST(:groups AS text[]))
              AND g.available_at <= statement_timestamp()
            ORDER BY g.group_id
            FOR UPDATE SKIP LOCKED
            """;

    /**
     * FIFO redrive: moves the oldest messages of locked groups (each group's a prefix, in order) to
     * the end of the same groups in another FIFO queue, keeping ids, bodies, attributes, send times
     * and deduplication ids; a message sent with a delay that has not passed keeps it.
     */
    static final String REDRIVE_GROUPS = """
            WITH picked AS (
                SELECT m.id FROM ${schema}.message AS m
                WHERE m.queue_id = :from AND m.group_id = ANY(CAST(:groups AS text[]))
                ORDER BY m.id
                LIMIT :limit
            ), taken AS (
                DELETE FROM ${schema}.message AS m WHERE m.id = ANY(ARRAY(SELECT id FROM picked))
                RETURNING m.id, m.message_id, m.body, m.attributes, m.sent_at, m.visible_at, m.group_id, m.dedup_id,
                          m.partition
            ), moved AS (
                INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, group_id, dedup_id,
                                               partition)
                SELECT :to, message_id, body, attributes, sent_at, greatest(visible_at, statement_timestamp()), group_id,
                       dedup_id, partition
                FROM taken
                ORDER BY id
                RETURNING 1
            )
            SELECT count(*) FROM moved
            """;

    /**
     * The end of a staging statement: the rows its {@code moved} step deleted, as one batch of a
     * kind ({@code message}, {@code dedup}) in message_moving.
     */
    private static final String INTO_MOVING = """
            , batch AS (
                SELECT nextval('${schema}.job_moving_batch_seq') AS batch
            )
            INSERT INTO ${schema}.message_moving (batch, partition, kind, row)
            SELECT batch.batch, :partition, '%s', to_jsonb(moved) FROM moved, batch
            """;

    /**
     * Partition moves: stages up to :limit of a partition's messages without a FIFO group (keeping
     * their receipts and visibility: one in flight stays in flight), deleting them from the message
     * table into message_moving in one transaction; messages a receive holds now are skipped and
     * taken by the next batch.
     */
    static final String STAGE_MESSAGES = """
            WITH picked AS (
                SELECT id FROM ${schema}.message
                WHERE partition = :partition AND group_id IS NULL
                ORDER BY id
                LIMIT :limit
                FOR UPDATE SKIP LOCKED
            ), moved AS (
                DELETE FROM ${schema}.message AS m WHERE m.id IN (SELECT id FROM picked)
                RETURNING m.*
            )""" + INTO_MOVING.formatted("message");

    /**
     * Partition moves: locks up to :limit FIFO groups of a partition, in key order (SKIP LOCKED: a
     * group a receive, send or delete holds now is taken later). Unless :force, only groups with no
     * message in flight: a group moves whole, and its messages are numbered anew on the target,
     * where a receipt handle of an earlier receive no longer finds them.
     */
    static final String LOCK_MOVABLE_GROUPS = """
            SELECT g.queue_id, g.group_id FROM ${schema}.message_group AS g
            JOIN (SELECT DISTINCT queue_id, group_id FROM ${schema}.message
                  WHERE partition = :partition AND group_id IS NOT NULL) AS p
              ON p.queue_id = g.queue_id AND p.group_id = g.group_id
            WHERE :force OR NOT EXISTS (SELECT 1 FROM ${schema}.message AS f
                                        WHERE f.queue_id = g.queue_id AND f.group_id = g.group_id
                                          AND f.receipt IS NOT NULL AND f.visible_at > statement_timestamp())
            ORDER BY g.queue_id, g.group_id
            LIMIT :limit
            FOR UPDATE OF g SKIP LOCKED
            """;

    /** Partition moves: stages the partition's messages of locked FIFO groups, as {@link #STAGE_MESSAGES}. */
    static final String STAGE_GROUPS = """
            WITH moved AS (
                DELETE FROM ${schema}.message AS m
                USING unnest(CAST(:queues AS bigint[]), CAST(:groups AS text[])) AS t(queue_id, group_id)
                WHERE m.queue_id = t.queue_id AND m.group_id = t.group_id AND m.partition = :partition
                RETURNING m.*
            )""" + INTO_MOVING.formatted("message");

    /** Partition moves: stages the partition's FIFO deduplication ids, once its messages are staged. */
    static final String STAGE_DEDUPS = """
            WITH moved AS (
                DELETE FROM ${schema}.message_dedup WHERE partition = :partition
                RETURNING *
            )""" + INTO_MOVING.formatted("dedup");

    /** Partition moves: the batches of a partition's messages staged on this shard, oldest first. */
    static final String STAGED_BATCHES = """
            SELECT DISTINCT batch FROM ${schema}.message_moving WHERE partition = :partition ORDER BY batch
            """;

    /** Partition moves: one staged batch, its messages and its deduplication ids as JSON arrays. */
    static final String STAGED_BATCH = """
            SELECT CAST(coalesce(jsonb_agg(row) FILTER (WHERE kind = 'message'), '[]') AS text) AS messages,
                   CAST(coalesce(jsonb_agg(row) FILTER (WHERE kind = 'dedup'), '[]') AS text) AS dedups
            FROM ${schema}.message_moving
            WHERE partition = :partition AND batch = :batch
            """;

    /** Partition moves: drops a batch the target has written. */
    static final String DROP_BATCH = """
            DELETE FROM ${schema}.message_moving WHERE partition = :partition AND batch = :batch
            """;

    /**
     * Partition moves: writes a staged batch on the target, once (its mark in move_applied, shared
     * with the jobs' batches). Messages without a FIFO group keep every column, their id included,
     * so a receipt handle finds them here; FIFO messages are numbered anew in their order, after
     * every message this shard numbered before, as their group's order is their ids' order.
     * Receivers of their queues are woken.
     */
    static final String APPLY_BATCH = """
            WITH applied AS (
                INSERT INTO ${schema}.move_applied (source, batch, partition) VALUES (:source, :batch, :partition)
                ON CONFLICT (source, batch) DO NOTHING
                RETURNING batch
            ), rows AS (
                SELECT r.* FROM jsonb_populate_recordset(NULL::${schema}.message, CAST(:messages AS jsonb)) AS r
                WHERE EXISTS (SELECT 1 FROM applied)
            ), kept AS (
                INSERT INTO ${schema}.message OVERRIDING SYSTEM VALUE
                SELECT * FROM rows WHERE group_id IS NULL
                RETURNING queue_id
            ), renumbered AS (
                INSERT INTO ${schema}.message (queue_id, message_id, body, attributes, sent_at, visible_at, receive_count,
                                               first_received_at, receipt, group_id, dedup_id, fair_group, fair_rank,
                                               source_queue_id, partition)
                SELECT queue_id, message_id, body, attributes, sent_at, visible_at, receive_count, first_received_at,
                       receipt, group_id, dedup_id, fair_group, fair_rank, source_queue_id, partition
                FROM rows WHERE group_id IS NOT NULL
                ORDER BY id
                RETURNING queue_id
            ), dedups AS (
                INSERT INTO ${schema}.message_dedup
                SELECT d.* FROM jsonb_populate_recordset(NULL::${schema}.message_dedup, CAST(:dedups AS jsonb)) AS d
                WHERE EXISTS (SELECT 1 FROM applied)
                ON CONFLICT (queue_id, dedup_id) DO NOTHING
                RETURNING 1
            ), notified AS (
                SELECT pg_notify(:channel, CAST(q.queue_id AS text))
                FROM (SELECT queue_id FROM kept UNION SELECT queue_id FROM renumbered) AS q
            )
            SELECT EXISTS (SELECT 1 FROM applied) AS applied,
                   (SELECT count(*) FROM kept) + (SELECT count(*) FROM renumbered) AS inserted,
                   (SELECT count(*) FROM dedups) AS dedups, (SELECT count(*) FROM notified) AS notified
            """;

    /** Partition moves: the FIFO groups of a staged batch's messages. */
    static final String BATCH_GROUPS = """
            SELECT DISTINCT r.queue_id, r.group_id
            FROM jsonb_populate_recordset(NULL::${schema}.message, CAST(:messages AS jsonb)) AS r
            WHERE r.group_id IS NOT NULL
            ORDER BY r.queue_id, r.group_id
            """;

    /** Partition moves: the messages of a partition still on this shard (partition index). */
    static final String PARTITION_MESSAGES = """
            SELECT count(*) FROM ${schema}.message WHERE partition = :partition
            """;
}
