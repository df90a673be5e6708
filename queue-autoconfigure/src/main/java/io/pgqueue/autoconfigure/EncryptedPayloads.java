package io.pgqueue.autoconfigure;

import io.pgqueue.PayloadEncryption;
import org.jspecify.annotations.Nullable;

/**
 * How the console and the {@code queues} endpoint show a payload encrypted at rest: decrypted only
 * for users with {@code pgqueue.encryption.reader-role} (with Spring Security), else as a note that
 * names its key. Payloads that are not encrypted are shown as they are.
 */
public final class EncryptedPayloads {

    private final PayloadEncryption encryption;

    private final @Nullable String readerRole;

    /**
     * @param encryption the queue's keys
     * @param readerRole the role whose users see payloads decrypted, or {@code null} for none
     */
    public EncryptedPayloads(PayloadEncryption encryption, @Nullable String readerRole) {
        this.encryption = encryption;
        this.readerRole = readerRole == null || readerRole.isBlank() ? null : readerRole.strip();
    }

    /** @return the role whose users see payloads decrypted, or {@code null} when no one does */
    public @Nullable String readerRole() {
        return this.readerRole;
    }

    /**
     * A payload as shown.
     * @param task the job's task
     * @param stored the stored payload, or {@code null}
     * @param decrypt whether the user may see it decrypted
     * @return the payload as JSON: as stored when it is not encrypted, decrypted when allowed and
     * possible, else a JSON string that says which key encrypts it
     */
    public @Nullable String show(String task, @Nullable String stored, boolean decrypt) {
        if (!PayloadEncryption.isEncrypted(stored)) {
            return stored;
        }
        String key = PayloadEncryption.keyOf(stored).orElseThrow();
        if (!decrypt) {
            return "\"encrypted with the key '" + key + "'" + (this.readerRole == null
                    ? ": set pgqueue.encryption.reader-role to show it to a role\""
                    : ": shown to the role " + this.readerRole + "\"");
        }
        try {
            return this.encryption.decrypt(task, stored);
        }
        catch (PayloadEncryption.PayloadDecryptionException ex) {
            return "\"encrypted with the key '" + key + "', which cannot decrypt it on this node\"";
        }
    }
}
