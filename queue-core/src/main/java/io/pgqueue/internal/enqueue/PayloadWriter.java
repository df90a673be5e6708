package io.pgqueue.internal.enqueue;

import java.nio.charset.StandardCharsets;
import java.util.Objects;

import io.pgqueue.InvalidJobException;
import io.pgqueue.PayloadEncryption;
import io.pgqueue.PayloadTooLargeException;
import io.pgqueue.TaskDefinition;
import io.pgqueue.internal.store.StoreSupport;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.ObjectMapper;

/**
 * Writes payloads as JSON and holds them to the queue's size limit, for new jobs and for payloads
 * a dedup policy merges, and encrypts those of the tasks that ask for it (the limit holds for the
 * JSON before encryption).
 */
public final class PayloadWriter {

    private final ObjectMapper mapper;

    private final long maxPayloadBytes;

    private final PayloadEncryption encryption;

    /**
     * @param mapper the JSON mapper of payloads
     * @param maxPayloadBytes the largest payload in UTF-8 bytes
     * @param encryption encrypts the payloads of the tasks that ask for it
     */
    public PayloadWriter(ObjectMapper mapper, long maxPayloadBytes, PayloadEncryption encryption) {
        this.mapper = Objects.requireNonNull(mapper, "mapper");
        this.maxPayloadBytes = maxPayloadBytes;
        this.encryption = Objects.requireNonNull(encryption, "encryption");
    }

    /** @return the JSON mapper of payloads */
    public ObjectMapper mapper() {
        return this.mapper;
    }

    /**
     * Writes a payload as JSON.
     * @param task the task, for the error message
     * @param payload the payload
     * @return the JSON text
     * @throws InvalidJobException if the payload cannot be written as JSON
     * @throws PayloadTooLargeException if the JSON is over the size limit
     */
    public String write(String task, Object payload) {
        String json;
        try {
            json = this.mapper.writeValueAsString(payload);
        }
        catch (JacksonException ex) {
            throw new InvalidJobException("Payload of task '" + task + "' (" + (payload == null ? "null" : payload.getClass().getName())
                    + ") cannot be written as JSON: " + ex.getOriginalMessage(), ex);
        }
        requireNoNul(json, "The payload of a '" + task + "' job");
        long limit = this.maxPayloadBytes;
        // A UTF-8 character takes at most 3 bytes per UTF-16 char: short payloads need no counting.
        if ((long) json.length() * 3 > limit) {
            int size = json.getBytes(StandardCharsets.UTF_8).length;
            if (size > limit) {
                throw new PayloadTooLargeException(task, size, limit);
            }
        }
        return json;
    }

    /**
     * The form a payload is stored in: encrypted when its task asks for it, else as it is.
     * @param task the job's task
     * @param json the payload as JSON, as {@link #write} wrote it
     * @return the stored form
     */
    public String seal(TaskDefinition task, String json) {
        return task.encrypted() ? this.encryption.encrypt(task.name(), json) : json;
    }

    /**
     * A stored payload as JSON, decrypted if it is encrypted.
     * @param task the job's task
     * @param stored the stored payload
     * @return the JSON
     * @throws PayloadEncryption.PayloadDecryptionException if it is encrypted and cannot be decrypted here
     */
    public String open(String task, String stored) {
        return this.encryption.decrypt(task, stored);
    }

    /**
     * Refuses JSON that holds U+0000, which PostgreSQL cannot store.
     * @param json the JSON text
     * @param what what it is, for the message
     * @throws InvalidJobException if it holds U+0000
     */
    public static void requireNoNul(String json, String what) {
        if (StoreSupport.jsonHoldsNul(json)) {
            throw new InvalidJobException(what + " holds the character U+0000, which PostgreSQL cannot store: "
                    + "remove it, or encode the data that holds it (as base64, for instance)");
        }
    }
}
