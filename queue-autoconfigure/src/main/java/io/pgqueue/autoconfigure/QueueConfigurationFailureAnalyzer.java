package io.pgqueue.autoconfigure;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a {@link QueueConfigurationException} as a start-up failure with a description and an
 * action, instead of a stack trace.
 */
class QueueConfigurationFailureAnalyzer extends AbstractFailureAnalyzer<QueueConfigurationException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, QueueConfigurationException cause) {
        return new FailureAnalysis("pgqueue could not start: " + cause.getMessage(), cause.getAction(), cause);
    }
}
