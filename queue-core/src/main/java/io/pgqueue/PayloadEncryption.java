package io.pgqueue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;

import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Encrypts the payloads of the tasks that ask for it ({@link TaskDefinition#encrypted()}) before
 * they are written, and decrypts them where a handler reads them: AES-GCM with a 96-bit random
 * nonce per payload and the task's name as associated data (a payload copied into a job of another
 * task does not decrypt). The keys are named; new payloads are encrypted with the current one, and
 * a payload is decrypted with the key it names, so that old keys stay readable after a rotation
 * for as long as they are kept.
 * <p>
 * A stored encrypted payload is the JSON object
 * <pre>{"pgqueue.encrypted": {"v": 1, "key": "&lt;key id&gt;", "data": "&lt;base64 of nonce, ciphertext and tag&gt;"}}</pre>
 * Payloads that are not of that form are plain JSON and read as they are: jobs enqueued before a
 * task was encrypted still run. Only the payload is encrypted; a job's dedup key, headers, tags,
 * result, errors and log lines are not.
 */
public final class PayloadEncryption {

    /** The one field of a stored encrypted payload. */
    public static final String FIELD = "pgqueue.encrypted";

    /** No keys: encrypts nothing, and fails to read an encrypted payload, saying which key it needs. */
    public static final PayloadEncryption NONE = new PayloadEncryption(null, Map.of());

    private static final Pattern KEY_ID = Pattern.compile("[A-Za-z0-9_-]{1,32}");

    private static final String PREFIX = "{\"" + FIELD + "\"";

    private static final int NONCE_BYTES = 12;

    private static final int TAG_BITS = 128;

    private static final int VERSION = 1;

    private static final SecureRandom RANDOM = new SecureRandom();

    /** A cipher per thread, initialised afresh for each payload: looking one up costs more than the work. */
    private static final ThreadLocal<Cipher> CIPHERS = ThreadLocal.withInitial(() -> {
        try {
            return Cipher.getInstance("AES/GCM/NoPadding");
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("AES-GCM is not available in this JVM", ex);
        }
    });

    private final String current;

    private final Map<String, SecretKey> keys;

    private PayloadEncryption(String current, Map<String, SecretKey> keys) {
        this.current = current;
        this.keys = Map.copyOf(keys);
    }

    /**
     * Keys given as base64 text, as configuration holds them ({@code pgqueue.encryption.keys}).
     * @param current the id of the key new payloads are encrypted with; {@code null} when there is
     * exactly one key, which is then the current one
     * @param keys the keys by id (letters, digits, {@code _} and {@code -}; at most 32 characters),
     * each the base64 of 16, 24 or 32 random bytes (AES-128, -192 or -256); old keys stay here
     * until no stored payload names them
     * @return the encryption
     * @throws InvalidSettingException if a key id, a key or the current id is not valid
     */
    public static PayloadEncryption of(String current, Map<String, String> keys) {
        Map<String, byte[]> decoded = new LinkedHashMap<>();
        keys.forEach((id, text) -> {
            try {
                decoded.put(id, Base64.getDecoder().decode(text == null ? "" : text.strip()));
            }
            catch (IllegalArgumentException ex) {
                throw new InvalidSettingException("encryption.keys." + id, "(not shown)",
                        "must be base64 (e.g. the output of `openssl rand -base64 32`): " + ex.getMessage());
            }
        });
        return ofBytes(current, decoded);
    }

    /**
     * Keys given as bytes.
     * @param current the id of the key new payloads are encrypted with; {@code null} when there is
     * exactly one key
     * @param keys the keys by id, each 16, 24 or 32 bytes
     * @return the encryption
     * @throws InvalidSettingException if a key id, a key or the current id is not valid
     */
    public static PayloadEncryption ofBytes(String current, Map<String, byte[]> keys) {
        Map<String, SecretKey> secrets = new LinkedHashMap<>();
        keys.forEach((id, bytes) -> {
            InvalidSettingException.require(id != null && KEY_ID.matcher(id).matches(), "encryption.keys", id,
                    "key ids are letters, digits, '_' and '-', at most 32 characters");
            int length = bytes == null ? 0 : bytes.length;
            InvalidSettingException.require(length == 16 || length == 24 || length == 32, "encryption.keys." + id,
                    "(not shown)", "must be 16, 24 or 32 bytes (AES-128, -192 or -256), was " + length
                            + "; make one with `openssl rand -base64 32`");
            secrets.put(id, new SecretKeySpec(bytes.clone(), "AES"));
        });
        if (current == null || current.isBlank()) {
            InvalidSettingException.require(secrets.size() <= 1, "encryption.key", current,
                    "must name the key new payloads are encrypted with, one of " + secrets.keySet());
            return new PayloadEncryption(secrets.isEmpty() ? null : secrets.keySet().iterator().next(), secrets);
        }
        InvalidSettingException.require(secrets.containsKey(current), "encryption.key", current,
                "must be one of the configured keys " + secrets.keySet());
        return new PayloadEncryption(current, secrets);
    }

    /** @return whether there is a key to encrypt with */
    public boolean canEncrypt() {
        return this.current != null;
    }

    /** @return the id of the key new payloads are encrypted with, or empty without keys */
    public Optional<String> currentKey() {
        return Optional.ofNullable(this.current);
    }

    /**
     * Encrypts a payload with the current key.
     * @param task the job's task, bound to the ciphertext
     * @param json the payload as JSON
     * @return the stored form, a JSON object
     * @throws IllegalStateException without keys
     */
    public String encrypt(String task, String json) {
        if (this.current == null) {
            throw new IllegalStateException("No encryption key: task '" + task + "' encrypts its payloads; set "
                    + "pgqueue.encryption.keys");
        }
        byte[] nonce = new byte[NONCE_BYTES];
        RANDOM.nextBytes(nonce);
        byte[] sealed;
        try {
            Cipher cipher = CIPHERS.get();
            cipher.init(Cipher.ENCRYPT_MODE, this.keys.get(this.current), new GCMParameterSpec(TAG_BITS, nonce));
            cipher.updateAAD(task.getBytes(StandardCharsets.UTF_8));
            sealed = cipher.doFinal(json.getBytes(StandardCharsets.UTF_8));
        }
        catch (GeneralSecurityException ex) {
            throw new IllegalStateException("AES-GCM cannot encrypt with the key '" + this.current + "'", ex);
        }
        ByteBuffer data = ByteBuffer.allocate(nonce.length + sealed.length).put(nonce).put(sealed);
        // Key ids and base64 need no JSON escaping.
        return PREFIX + ":{\"v\":" + VERSION + ",\"key\":\"" + this.current + "\",\"data\":\""
                + Base64.getEncoder().encodeToString(data.array()) + "\"}}";
    }

    /**
     * Decrypts a stored payload; a payload that is not encrypted is returned as it is.
     * @param task the job's task, which the payload was encrypted for
     * @param stored the stored payload
     * @return the payload as JSON
     * @throws PayloadDecryptionException if the key it names is not configured, or the payload does
     * not decrypt with it (altered, or encrypted for another task)
     */
    public String decrypt(String task, String stored) {
        if (!isEncrypted(stored)) {
            return stored;
        }
        Envelope envelope = Envelope.read(stored);
        SecretKey key = this.keys.get(envelope.key);
        if (key == null) {
            throw new PayloadDecryptionException("The payload is encrypted with the key '" + envelope.key
                    + "', which this node does not have: add it to pgqueue.encryption.keys (configured: "
                    + this.keys.keySet() + ")");
        }
        try {
            Cipher cipher = CIPHERS.get();
            cipher.init(Cipher.DECRYPT_MODE, key, new GCMParameterSpec(TAG_BITS, envelope.data, 0, NONCE_BYTES));
            cipher.updateAAD(task.getBytes(StandardCharsets.UTF_8));
            byte[] plain = cipher.doFinal(envelope.data, NONCE_BYTES, envelope.data.length - NONCE_BYTES);
            return new String(plain, StandardCharsets.UTF_8);
        }
        catch (AEADBadTagException ex) {
            throw new PayloadDecryptionException("The payload does not decrypt with the key '" + envelope.key
                    + "': it was altered, encrypted for a task other than '" + task + "', or the key's bytes changed");
        }
        catch (GeneralSecurityException ex) {
            throw new PayloadDecryptionException("The payload does not decrypt with the key '" + envelope.key + "': "
                    + ex.getMessage());
        }
    }

    /**
     * @param stored a stored payload, or {@code null}
     * @return whether it is encrypted
     */
    public static boolean isEncrypted(String stored) {
        return stored != null && stored.startsWith(PREFIX);
    }

    /**
     * @param stored a stored payload
     * @return the id of the key it is encrypted with, or empty when it is not encrypted
     */
    public static Optional<String> keyOf(String stored) {
        return isEncrypted(stored) ? Optional.of(Envelope.read(stored).key) : Optional.empty();
    }

    /**
     * The parts of a stored encrypted payload. Read by scanning, as the database prints it or as
     * {@link #encrypt} wrote it: its values (a number, a key id, base64) hold nothing JSON escapes.
     */
    private record Envelope(String key, byte[] data) {

        static Envelope read(String stored) {
            try {
                String version = value(stored, "v");
                String key = value(stored, "key");
                byte[] data = Base64.getDecoder().decode(value(stored, "data"));
                if (!String.valueOf(VERSION).equals(version) || data.length <= NONCE_BYTES) {
                    throw new PayloadDecryptionException("The encrypted payload is of version " + version
                            + " or too short: this node reads version " + VERSION);
                }
                return new Envelope(key, data);
            }
            catch (IllegalArgumentException ex) {
                throw new PayloadDecryptionException("The payload starts as an encrypted one but is not: its '" + FIELD
                        + "' object needs v, key and data (base64)");
            }
        }

        /** The text of a field's value, without quotes. */
        private static String value(String stored, String field) {
            int name = stored.indexOf("\"" + field + "\"", PREFIX.length());
            int colon = name < 0 ? -1 : stored.indexOf(':', name);
            if (colon < 0) {
                throw new IllegalArgumentException("no " + field);
            }
            int start = colon + 1;
            while (start < stored.length() && stored.charAt(start) == ' ') {
                start++;
            }
            boolean quoted = start < stored.length() && stored.charAt(start) == '"';
            int from = quoted ? start + 1 : start;
            int end = from;
            while (end < stored.length() && (quoted ? stored.charAt(end) != '"'
                    : Character.isDigit(stored.charAt(end)))) {
                end++;
            }
            if (end == from || end == stored.length()) {
                throw new IllegalArgumentException("no value of " + field);
            }
            return stored.substring(from, end);
        }
    }

    /**
     * A stored payload that cannot be decrypted here: its key is not configured, or it does not
     * decrypt with it.
     */
    public static final class PayloadDecryptionException extends QueueException {

        private static final long serialVersionUID = 1L;

        /**
         * @param message what is wrong and what to do
         */
        public PayloadDecryptionException(String message) {
            super(message);
        }
    }
}
