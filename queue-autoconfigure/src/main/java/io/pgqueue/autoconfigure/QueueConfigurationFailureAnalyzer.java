package io.pgqueue.autoconfigure;

import io.pgqueue.shard.ShardException;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;

/**
 * Reports a {@link QueueConfigurationException}, or a {@link ShardException} raised while the
 * queue opens its shards, as a start-up failure with a description and an action, instead of a
 * stack trace.
 */
class QueueConfigurationFailureAnalyzer implements FailureAnalyzer {

    private static final String SHARD_ACTION = "Check pgqueue.shards and pgqueue.partitions against the installation: "
            + "its shards, partition map and partition count are recorded on the main shard (the queue's own DataSource)";

    @Override
    public FailureAnalysis analyze(Throwable failure) {
        QueueConfigurationException configuration = cause(failure, QueueConfigurationException.class);
        if (configuration != null) {
            return new FailureAnalysis("pgqueue could not start: " + configuration.getMessage(),
                    configuration.getAction(), configuration);
        }
        ShardException shard = cause(failure, ShardException.class);
        if (shard != null) {
            return new FailureAnalysis("pgqueue could not start: " + shard.getMessage(), SHARD_ACTION, shard);
        }
        return null;
    }

    private static <T extends Throwable> T cause(Throwable failure, Class<T> type) {
        for (Throwable candidate = failure; candidate != null; candidate = candidate.getCause()) {
            if (type.isInstance(candidate)) {
                return type.cast(candidate);
            }
            if (candidate.getCause() == candidate) {
                break;
            }
        }
        return null;
    }
}
