package io.pgqueue.internal.worker;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.pgqueue.JobAttempt;
import io.pgqueue.QueueDefaults;
import org.slf4j.Logger;
import org.slf4j.Marker;
import org.slf4j.event.Level;
import org.slf4j.helpers.LegacyAbstractLogger;
import org.slf4j.helpers.MessageFormatter;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * The lines a handler logged during one attempt, kept with the attempt in its job's history: at
 * most {@link QueueDefaults#MAX_LOG_LINES} lines of {@link QueueDefaults#MAX_LOG_LINE_LENGTH}
 * characters; further lines are counted. A handler may log from threads of its own.
 */
final class AttemptLog {

    private final List<JobAttempt.LogLine> lines = new ArrayList<>();

    private int dropped;

    synchronized void add(Level level, String message) {
        if (this.lines.size() == QueueDefaults.MAX_LOG_LINES) {
            this.dropped++;
            return;
        }
        String text = message == null ? "null" : message;
        if (text.length() > QueueDefaults.MAX_LOG_LINE_LENGTH) {
            text = text.substring(0, QueueDefaults.MAX_LOG_LINE_LENGTH - 1) + "…";
        }
        this.lines.add(new JobAttempt.LogLine(Instant.now(), level.name(), text));
    }

    synchronized List<JobAttempt.LogLine> lines() {
        return List.copyOf(this.lines);
    }

    synchronized int dropped() {
        return this.dropped;
    }

    /**
     * @param delegate the logger the lines go to as well
     * @return a logger whose lines, at the levels the delegate has enabled, also go to this log
     */
    Logger logger(Logger delegate) {
        return new Tee(delegate, this);
    }

    /** Writes to the delegate and, for each line the delegate logs, to the attempt's log. */
    private static final class Tee extends LegacyAbstractLogger {

        private static final long serialVersionUID = 1L;

        private final transient Logger delegate;

        private final transient AttemptLog log;

        Tee(Logger delegate, AttemptLog log) {
            this.delegate = delegate;
            this.log = log;
            this.name = delegate.getName();
        }

        @Override
        public boolean isTraceEnabled() {
            return this.delegate.isTraceEnabled();
        }

        @Override
        public boolean isDebugEnabled() {
            return this.delegate.isDebugEnabled();
        }

        @Override
        public boolean isInfoEnabled() {
            return this.delegate.isInfoEnabled();
        }

        @Override
        public boolean isWarnEnabled() {
            return this.delegate.isWarnEnabled();
        }

        @Override
        public boolean isErrorEnabled() {
            return this.delegate.isErrorEnabled();
        }

        @Override
        protected String getFullyQualifiedCallerName() {
            return null;
        }

        @Override
        protected void handleNormalizedLoggingCall(Level level, Marker marker, String pattern, Object[] arguments,
                Throwable failure) {
            String message = MessageFormatter.basicArrayFormat(pattern, arguments);
            LoggingEventBuilder event = this.delegate.atLevel(level).setCause(failure);
            if (marker != null) {
                event = event.addMarker(marker);
            }
            event.log(message);
            this.log.add(level, failure == null ? message : message + " (" + failure + ")");
        }
    }
}
