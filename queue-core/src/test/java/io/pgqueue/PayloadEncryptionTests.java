package io.pgqueue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.pgqueue.testing.TestShards;
import io.pgqueue.testing.TestWorkers;
import io.pgqueue.worker.WorkerTask;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.jdbc.core.JdbcTemplate;
import tools.jackson.databind.node.JsonNodeFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Payloads encrypted at rest: stored encrypted for the tasks that ask for it, decrypted for their
 * handlers and the client, readable with old keys after a rotation, bound to their task.
 */
class PayloadEncryptionTests {

    private static final String K1 = key(1);

    private static final String K2 = key(2);

    private static final DedupPolicy SUM = DedupPolicy.mergeIfReady((existing, incoming) -> JsonNodeFactory.instance
        .objectNode().put("n", existing.get("n").asInt() + incoming.get("n").asInt()));

    @RegisterExtension
    final TestShards databases = TestShards.perTest("encryption", 1);

    private final List<PgQueue> queues = new ArrayList<>();

    /** What each handler got, by job id. */
    private final Map<Long, Map<?, ?>> handled = new ConcurrentHashMap<>();

    @AfterEach
    void stop() {
        this.queues.forEach(PgQueue::stop);
    }

    @Test
    void anEncryptedTasksPayloadIsStoredEncryptedAndReachesItsHandlerDecrypted() {
        PgQueue producer = queue(PayloadEncryption.of(null, Map.of("k1", K1)), definition("charge", true),
                definition("log", false));
        long charge = producer.client().enqueue("charge", Map.of("card", "4111-1111-1111-1111", "amount", 12)).jobId();
        long plain = producer.client().enqueue("log", Map.of("line", "visible")).jobId();

        String stored = storedPayload(charge);
        assertThat(stored).contains(PayloadEncryption.FIELD).doesNotContain("4111").doesNotContain("amount");
        assertThat(PayloadEncryption.keyOf(stored)).contains("k1");
        assertThat(storedPayload(plain)).contains("visible");
        assertThat(producer.admin().job(charge).orElseThrow().payload()).as("the admin reads it as stored")
            .isEqualTo(stored);
        assertThat(producer.client().find(charge).orElseThrow().payload()).as("the client decrypts")
            .contains("4111-1111-1111-1111");

        worker(PayloadEncryption.of(null, Map.of("k1", K1)), "charge", "log");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.handled.size() == 2);
        assertThat(this.handled.get(charge)).isEqualTo(Map.of("card", "4111-1111-1111-1111", "amount", 12));
        assertThat(this.handled.get(plain)).isEqualTo(Map.of("line", "visible"));
    }

    @Test
    void afterARotationNewPayloadsTakeTheNewKeyAndOldOnesStillRunWhileTheOldKeyIsKept() {
        PgQueue before = queue(PayloadEncryption.of(null, Map.of("k1", K1)), definition("charge", true));
        long old = before.client().enqueue("charge", Map.of("n", 1)).jobId();
        PgQueue after = queue(PayloadEncryption.of("k2", Map.of("k1", K1, "k2", K2)), definition("charge", true));
        long fresh = after.client().enqueue("charge", Map.of("n", 2)).jobId();
        assertThat(PayloadEncryption.keyOf(storedPayload(old))).contains("k1");
        assertThat(PayloadEncryption.keyOf(storedPayload(fresh))).contains("k2");

        PgQueue onlyNew = worker(PayloadEncryption.of(null, Map.of("k2", K2)), "charge");
        await().atMost(Duration.ofSeconds(20)).until(() -> after.admin().job(old).orElseThrow().state() == JobState.FAILED
                && this.handled.containsKey(fresh));
        assertThat(after.admin().job(old).orElseThrow().lastError())
            .contains("encrypted with the key 'k1', which this node does not have").contains("pgqueue.encryption.keys");
        onlyNew.stop();

        after.admin().rerun(old);
        worker(PayloadEncryption.of("k2", Map.of("k1", K1, "k2", K2)), "charge");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.handled.containsKey(old));
        assertThat(this.handled.get(old)).isEqualTo(Map.of("n", 1));
    }

    @Test
    void aPayloadIsBoundToItsTaskAndAnAlteredOneFailsItsAttempt() {
        PgQueue producer = queue(PayloadEncryption.of(null, Map.of("k1", K1)), definition("charge", true),
                definition("refund", true));
        long charge = producer.client().enqueue("charge", Map.of("amount", 100)).jobId();
        long refund = producer.client().enqueue("refund", Map.of("amount", 1)).jobId();
        long altered = producer.client().enqueue("charge", Map.of("amount", 2)).jobId();
        JdbcTemplate jdbc = jdbc();
        // A charge's payload copied into a refund does not decrypt there.
        jdbc.update("UPDATE pgqueue.job SET payload = (SELECT payload FROM pgqueue.job WHERE id = ?) WHERE id = ?",
                charge, refund);
        String stored = storedPayload(altered);
        String data = stored.substring(stored.indexOf("\"data\": \"") + 9, stored.lastIndexOf('"'));
        byte[] bytes = Base64.getDecoder().decode(data);
        bytes[bytes.length - 1] ^= 1;
        jdbc.update("UPDATE pgqueue.job SET payload = ?::jsonb WHERE id = ?",
                stored.replace(data, Base64.getEncoder().encodeToString(bytes)), altered);

        worker(PayloadEncryption.of(null, Map.of("k1", K1)), "charge", "refund");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.handled.containsKey(charge)
                && producer.admin().job(refund).orElseThrow().state() == JobState.FAILED
                && producer.admin().job(altered).orElseThrow().state() == JobState.FAILED);
        assertThat(producer.admin().job(refund).orElseThrow().lastError())
            .contains("encrypted for a task other than 'refund'");
        assertThat(producer.admin().job(altered).orElseThrow().lastError()).contains("altered");
        assertThat(this.handled).containsOnlyKeys(charge);
    }

    @Test
    void aMergePolicyMergesTheDecryptedPayloadsAndStoresTheMergeEncrypted() {
        PgQueue producer = queue(PayloadEncryption.of(null, Map.of("k1", K1)),
                TaskDefinition.builder("tally").dedupPolicy(SUM).maxAttempts(1).encrypted(true).build());
        long id = producer.client().enqueue("tally", Map.of("n", 1), EnqueueOptions.defaults().withDedupKey("t")).jobId();
        EnqueueResult merged = producer.client().enqueue("tally", Map.of("n", 2), EnqueueOptions.defaults().withDedupKey("t"));

        assertThat(merged).isEqualTo(new EnqueueResult(id, EnqueueOutcome.MERGED));
        assertThat(storedPayload(id)).contains(PayloadEncryption.FIELD).doesNotContain("\"n\"");
        assertThat(producer.client().find(id).orElseThrow().payload().replace(" ", "")).isEqualTo("{\"n\":3}");
    }

    @Test
    void aPayloadStoredBeforeItsTaskWasEncryptedStillRuns() {
        PgQueue plain = queue(PayloadEncryption.NONE, definition("charge", false));
        long id = plain.client().enqueue("charge", Map.of("n", 7)).jobId();

        worker(PayloadEncryption.of(null, Map.of("k1", K1)), "charge");
        await().atMost(Duration.ofSeconds(20)).until(() -> this.handled.containsKey(id));
        assertThat(this.handled.get(id)).isEqualTo(Map.of("n", 7));
    }

    @Test
    void anEncryptedTaskWithoutAKeyIsRefusedWhenTheQueueIsBuilt() {
        assertThatThrownBy(() -> queue(PayloadEncryption.NONE, definition("charge", true)))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("tasks.charge.encrypted")
            .hasMessageContaining("pgqueue.encryption.keys");
    }

    @Test
    void keysThatCannotWorkAreRefusedSayingWhatToFix() {
        assertThatThrownBy(() -> PayloadEncryption.of(null, Map.of("k1", "not base64!")))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("encryption.keys.k1")
            .hasMessageContaining("base64");
        assertThatThrownBy(() -> PayloadEncryption.of(null, Map.of("k1", Base64.getEncoder().encodeToString(new byte[20]))))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("16, 24 or 32 bytes").hasMessageContaining("was 20")
            .hasMessageNotContaining("AAAA");
        assertThatThrownBy(() -> PayloadEncryption.of(null, Map.of("k1", K1, "k2", K2)))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("encryption.key");
        assertThatThrownBy(() -> PayloadEncryption.of("k3", Map.of("k1", K1)))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("k3").hasMessageContaining("[k1]");
        assertThatThrownBy(() -> PayloadEncryption.of(null, Map.of("bad id", K1)))
            .isInstanceOf(InvalidSettingException.class).hasMessageContaining("key ids");
    }

    @Test
    void eachPayloadGetsItsOwnNonce() {
        PayloadEncryption encryption = PayloadEncryption.of(null, Map.of("k1", K1));
        String once = encryption.encrypt("charge", "{\"n\": 1}");
        String twice = encryption.encrypt("charge", "{\"n\": 1}");

        assertThat(once).isNotEqualTo(twice);
        assertThat(encryption.decrypt("charge", once)).isEqualTo(encryption.decrypt("charge", twice)).isEqualTo("{\"n\": 1}");
        assertThat(encryption.decrypt("charge", "{\"n\": 1}")).as("plain JSON reads as it is").isEqualTo("{\"n\": 1}");
    }

    private static TaskDefinition definition(String name, boolean encrypted) {
        return TaskDefinition.builder(name).maxAttempts(1).encrypted(encrypted).build();
    }

    private PgQueue queue(PayloadEncryption encryption, TaskDefinition... tasks) {
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource()).tasks(TaskRegistry.of(List.of(tasks)))
            .encryption(encryption).migrateSchema(true).build();
        this.queues.add(queue);
        queue.open();
        return queue;
    }

    private PgQueue worker(PayloadEncryption encryption, String... tasks) {
        List<WorkerTask> workers = new ArrayList<>();
        for (String task : tasks) {
            TaskHandler<Map<?, ?>> handler = (payload, context) -> this.handled.put(context.jobId(), payload);
            @SuppressWarnings("unchecked")
            Class<Map<?, ?>> type = (Class<Map<?, ?>>) (Class<?>) Map.class;
            workers.add(WorkerTask.of(definition(task, true), handler, type, 2, Duration.ofSeconds(30), "default"));
        }
        PgQueue queue = PgQueue.builder(this.databases.get(0).dataSource())
            .tasks(TaskRegistry.of(workers.stream().map(WorkerTask::definition).toList()))
            .workers(TestWorkers.settings("worker-" + this.queues.size()).build(), workers)
            .encryption(encryption).migrateSchema(true).build();
        this.queues.add(queue);
        queue.start();
        return queue;
    }

    private String storedPayload(long id) {
        return jdbc().queryForObject("SELECT payload::text FROM pgqueue.job WHERE id = ?", String.class, id);
    }

    private JdbcTemplate jdbc() {
        return new JdbcTemplate(this.databases.get(0).dataSource());
    }

    private static String key(int seed) {
        byte[] bytes = new byte[32];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = (byte) (seed * 31 + i);
        }
        return Base64.getEncoder().encodeToString(bytes);
    }
}
