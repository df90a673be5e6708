package io.pgqueue.message;

import java.util.Arrays;
import java.util.Objects;

/**
 * A message attribute: a data type ({@code String}, {@code Number} or {@code Binary}, each with an
 * optional custom suffix such as {@code Number.float}) and a string or a binary value.
 *
 * @param dataType the data type
 * @param stringValue the value of a String or Number attribute, else {@code null}
 * @param binaryValue the value of a Binary attribute, else {@code null}
 */
public record MessageAttributeValue(String dataType, String stringValue, byte[] binaryValue) {

    /**
     * Checks that the value matches its type.
     */
    public MessageAttributeValue {
        if (dataType == null || dataType.isEmpty()) {
            throw MessageQueueException.invalidParameter("A message attribute needs a DataType");
        }
        if (!dataType.matches("(String|Number|Binary)(\\.[A-Za-z0-9_.-]{1,250})?")) {
            throw MessageQueueException.invalidParameter("The message attribute type '" + dataType
                    + "' is not String, Number or Binary (optionally with a custom suffix)");
        }
        if (isBinary(dataType) ? binaryValue == null : stringValue == null) {
            throw MessageQueueException.invalidParameter("The message attribute of type " + dataType + " needs a "
                    + (isBinary(dataType) ? "BinaryValue" : "StringValue"));
        }
    }

    /**
     * A String attribute.
     * @param value the value
     * @return the attribute
     */
    public static MessageAttributeValue string(String value) {
        return new MessageAttributeValue("String", Objects.requireNonNull(value, "value"), null);
    }

    /**
     * A Number attribute.
     * @param value the value, as text
     * @return the attribute
     */
    public static MessageAttributeValue number(String value) {
        return new MessageAttributeValue("Number", Objects.requireNonNull(value, "value"), null);
    }

    /**
     * A Binary attribute.
     * @param value the value
     * @return the attribute
     */
    public static MessageAttributeValue binary(byte[] value) {
        return new MessageAttributeValue("Binary", null, Objects.requireNonNull(value, "value"));
    }

    /** @return whether the value is binary */
    public boolean binary() {
        return isBinary(this.dataType);
    }

    static boolean isBinary(String dataType) {
        return dataType.startsWith("Binary");
    }

    /** @return the bytes the value counts towards the message size: its type and value */
    public int size() {
        return utf8Length(this.dataType) + (binary() ? this.binaryValue.length : utf8Length(this.stringValue));
    }

    static int utf8Length(String text) {
        return text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof MessageAttributeValue that && this.dataType.equals(that.dataType)
                && Objects.equals(this.stringValue, that.stringValue) && Arrays.equals(this.binaryValue, that.binaryValue);
    }

    @Override
    public int hashCode() {
        return Objects.hash(this.dataType, this.stringValue, Arrays.hashCode(this.binaryValue));
    }

    @Override
    public String toString() {
        return this.dataType + "=" + (binary() ? this.binaryValue.length + " bytes" : this.stringValue);
    }
}
