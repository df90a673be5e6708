package io.pgqueue;

/**
 * Thrown when workers start against a queue schema that lacks what this version of pgqueue needs:
 * the migrations were not applied, or not all of them (e.g. the library was upgraded while the
 * schema is migrated by separate tooling). Apply the migrations in
 * {@link io.pgqueue.store.QueueSchema#MIGRATION_LOCATION}, or call
 * {@link io.pgqueue.store.QueueSchema#migrate}.
 */
public class QueueSchemaException extends QueueException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception.
     * @param message what is missing and what to do about it
     */
    public QueueSchemaException(String message) {
        super(message);
    }
}
