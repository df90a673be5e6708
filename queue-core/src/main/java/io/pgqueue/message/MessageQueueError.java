package io.pgqueue.message;

/**
 * Why a message-queue call was refused, with the error code Amazon SQS gives for it: the JSON
 * protocol's {@link #code()}, the query protocol's {@link #queryCode()} and the HTTP status.
 */
public enum MessageQueueError {

    /** The queue does not exist (or was deleted). */
    QUEUE_DOES_NOT_EXIST("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue", 400),
    /** A queue of that name exists with other attributes. */
    QUEUE_NAME_EXISTS("QueueNameExists", "QueueAlreadyExists", 400),
    /** An attribute name is unknown or its value is out of range. */
    INVALID_ATTRIBUTE_VALUE("InvalidAttributeValue", "InvalidAttributeValue", 400),
    /** An attribute name is not one the call accepts. */
    INVALID_ATTRIBUTE_NAME("InvalidAttributeName", "InvalidAttributeName", 400),
    /** A parameter is out of range or not valid for this queue. */
    INVALID_PARAMETER_VALUE("InvalidParameterValue", "InvalidParameterValue", 400),
    /** A required parameter is missing. */
    MISSING_PARAMETER("MissingParameter", "MissingParameter", 400),
    /** The receipt handle is malformed, or the message was received again since it was issued. */
    RECEIPT_HANDLE_INVALID("ReceiptHandleIsInvalid", "ReceiptHandleIsInvalid", 400),
    /** The message is not in flight: its visibility timeout cannot be changed. */
    MESSAGE_NOT_IN_FLIGHT("MessageNotInflight", "AWS.SimpleQueueService.MessageNotInflight", 400),
    /** The message body holds characters outside the allowed ones. */
    INVALID_MESSAGE_CONTENTS("InvalidMessageContents", "InvalidMessageContents", 400),
    /** A batch holds no entry. */
    EMPTY_BATCH_REQUEST("EmptyBatchRequest", "AWS.SimpleQueueService.EmptyBatchRequest", 400),
    /** A batch holds more than ten entries. */
    TOO_MANY_ENTRIES_IN_BATCH_REQUEST("TooManyEntriesInBatchRequest",
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest", 400),
    /** Two entries of a batch have the same id. */
    BATCH_ENTRY_IDS_NOT_DISTINCT("BatchEntryIdsNotDistinct", "AWS.SimpleQueueService.BatchEntryIdsNotDistinct",
            400),
    /** A batch entry id is not 1 to 80 letters, digits, '-' or '_'. */
    INVALID_BATCH_ENTRY_ID("InvalidBatchEntryId", "AWS.SimpleQueueService.InvalidBatchEntryId", 400),
    /** The messages of a batch are larger together than the queue's maximum message size. */
    BATCH_REQUEST_TOO_LONG("BatchRequestTooLong", "AWS.SimpleQueueService.BatchRequestTooLong", 400),
    /** The request is not one the API knows. */
    INVALID_ACTION("InvalidAction", "InvalidAction", 400),
    /** The request's credentials are not allowed to do this. */
    ACCESS_DENIED("AccessDenied", "AccessDenied", 403),
    /** The request is not signed. */
    MISSING_AUTHENTICATION_TOKEN("MissingAuthenticationToken", "MissingAuthenticationToken", 403),
    /** The request's signature is malformed or lacks a required part. */
    INCOMPLETE_SIGNATURE("IncompleteSignature", "IncompleteSignature", 403),
    /** The request's signature does not match its credentials. */
    SIGNATURE_DOES_NOT_MATCH("SignatureDoesNotMatch", "SignatureDoesNotMatch", 403),
    /** The request's access key is not configured. */
    INVALID_CLIENT_TOKEN_ID("InvalidClientTokenId", "InvalidClientTokenId", 403),
    /**
     * The request exceeds a request quota of its queue or access key; SDKs retry it with back-off
     * ({@code RequestThrottled} is one of their throttling codes; with HTTP 403, as SQS answers it,
     * botocore's legacy retry mode retries it too).
     */
    REQUEST_THROTTLED("RequestThrottled", "RequestThrottled", 403),
    /** A resource the call names (a move task's queue or handle) does not exist. */
    RESOURCE_NOT_FOUND("ResourceNotFoundException", "ResourceNotFoundException", 404),
    /** The call cannot be done on this resource (e.g. a second move task for a queue). */
    UNSUPPORTED_OPERATION("UnsupportedOperation", "AWS.SimpleQueueService.UnsupportedOperation", 400),
    /** The request is malformed. */
    MALFORMED_REQUEST("InvalidParameterValue", "MalformedQueryString", 400),
    /** The queue's database failed the call; the client may retry. */
    INTERNAL_ERROR("InternalError", "InternalError", 500);

    private final String code;

    private final String queryCode;

    private final int status;

    MessageQueueError(String code, String queryCode, int status) {
        this.code = code;
        this.queryCode = queryCode;
        this.status = status;
    }

    /** @return the error code of the JSON protocol, e.g. {@code QueueDoesNotExist} */
    public String code() {
        return this.code;
    }

    /** @return the error code of the query protocol, e.g. {@code AWS.SimpleQueueService.NonExistentQueue} */
    public String queryCode() {
        return this.queryCode;
    }

    /** @return the HTTP status of a response carrying the error */
    public int status() {
        return this.status;
    }

    /** @return whether the caller is at fault (4xx) rather than the server */
    public boolean senderFault() {
        return this.status < 500;
    }
}
