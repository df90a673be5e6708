package io.pgqueue;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import org.slf4j.MDC;

/**
 * The built-in {@link JobInterceptor}s: log context for every attempt, and values carried from the
 * enqueuing thread to the handler's thread in the job's headers (MDC entries, a tenant, a user). A
 * header crosses processes and survives restarts, as the job does; a thread-local value on its own
 * does neither.
 */
public final class JobInterceptors {

    /** MDC key of the job id during an attempt ({@link #logContext()}). */
    public static final String MDC_JOB_ID = "pgqueue.jobId";

    /** MDC key of the task during an attempt ({@link #logContext()}). */
    public static final String MDC_TASK = "pgqueue.task";

    /** MDC key of the attempt number during an attempt ({@link #logContext()}). */
    public static final String MDC_ATTEMPT = "pgqueue.attempt";

    /** Prefix of the headers that carry MDC entries ({@link #carryMdc(Collection)}): {@code mdc.<key>}. */
    public static final String MDC_HEADER_PREFIX = "mdc.";

    private JobInterceptors() {
    }

    /**
     * Puts the job id, the task and the attempt number in the SLF4J MDC while an attempt runs
     * ({@value #MDC_JOB_ID}, {@value #MDC_TASK}, {@value #MDC_ATTEMPT}), so that every line the
     * handler logs says which job it is about; the entries the thread had before come back after.
     * @return the interceptor
     */
    public static JobInterceptor logContext() {
        return new JobInterceptor() {

            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                // Three entries, each put back as it was: written out, as this runs around every attempt.
                String jobId = MDC.get(MDC_JOB_ID);
                String task = MDC.get(MDC_TASK);
                String number = MDC.get(MDC_ATTEMPT);
                MDC.put(MDC_JOB_ID, Long.toString(context.jobId()));
                MDC.put(MDC_TASK, context.task());
                MDC.put(MDC_ATTEMPT, Integer.toString(context.attempt()));
                try {
                    attempt.proceed();
                }
                finally {
                    restore(MDC_JOB_ID, jobId);
                    restore(MDC_TASK, task);
                    restore(MDC_ATTEMPT, number);
                }
            }

            @Override
            public String toString() {
                return "JobInterceptors.logContext()";
            }
        };
    }

    /**
     * Carries MDC entries from the thread that enqueues a job to the attempts that run it: at enqueue,
     * each key's value is written to the header {@code mdc.<key>} (unless the job has that header
     * already); while an attempt runs, the headers' values are in the MDC under their keys.
     * @param keys the MDC keys, e.g. {@code requestId}, {@code tenantId}
     * @return the interceptor
     * @throws IllegalArgumentException if a key is null or blank
     */
    public static JobInterceptor carryMdc(Collection<String> keys) {
        List<String> carried = new ArrayList<>();
        for (String key : Objects.requireNonNull(keys, "keys")) {
            if (key == null || key.isBlank()) {
                throw new IllegalArgumentException("An MDC key to carry must not be blank, was " + keys);
            }
            carried.add(key.strip());
        }
        List<String> all = List.copyOf(carried);
        return new JobInterceptor() {

            @Override
            public JobRequest beforeEnqueue(JobRequest request) {
                JobRequest carrying = request;
                for (String key : all) {
                    String value = MDC.get(key);
                    if (value != null && !request.options().headers().containsKey(MDC_HEADER_PREFIX + key)) {
                        carrying = carrying.withHeader(MDC_HEADER_PREFIX + key, value);
                    }
                }
                return carrying;
            }

            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                try (MdcScope scope = new MdcScope()) {
                    for (String key : all) {
                        String value = context.headers().get(MDC_HEADER_PREFIX + key);
                        if (value != null) {
                            scope.put(key, value);
                        }
                    }
                    attempt.proceed();
                }
            }

            @Override
            public String toString() {
                return "JobInterceptors.carryMdc(" + all + ")";
            }
        };
    }

    /**
     * Carries a value from the thread that enqueues a job to the attempts that run it, in a header:
     * a tenant, the user who asked, a locale. At enqueue, {@code capture} gives the value to write
     * (none when it returns {@code null}, or when the job has the header already); while an attempt
     * of a job with the header runs, the value is put in place with {@code restore}, and the scope
     * that returns is closed when the attempt ends.
     * <pre>{@code
     * @Bean
     * JobInterceptor tenantContext() {
     *     return JobInterceptors.carry("tenant", TenantContext::currentId, id -> {
     *         TenantContext.set(id);
     *         return TenantContext::clear;
     *     });
     * }
     * }</pre>
     * A header is data: whoever can enqueue a job can set it. Restore a value that grants rights
     * (a user's authorities) only for jobs whose enqueuers are trusted to.
     * @param header the header that carries the value
     * @param capture reads the value on the enqueuing thread
     * @param restore puts the value in place on the handler's thread and returns what undoes it
     * @return the interceptor
     * @throws IllegalArgumentException if the header is blank
     */
    public static JobInterceptor carry(String header, Supplier<String> capture,
            Function<String, ? extends AutoCloseable> restore) {
        if (header == null || header.isBlank()) {
            throw new IllegalArgumentException("The header to carry a value in must not be blank");
        }
        Objects.requireNonNull(capture, "capture");
        Objects.requireNonNull(restore, "restore");
        return new JobInterceptor() {

            @Override
            public JobRequest beforeEnqueue(JobRequest request) {
                if (request.options().headers().containsKey(header)) {
                    return request;
                }
                String value = capture.get();
                return value == null ? request : request.withHeader(header, value);
            }

            @Override
            public void aroundAttempt(TaskContext context, Object payload, Attempt attempt) throws Exception {
                String value = context.headers().get(header);
                if (value == null) {
                    attempt.proceed();
                    return;
                }
                try (AutoCloseable scope = restore.apply(value)) {
                    attempt.proceed();
                }
            }

            @Override
            public String toString() {
                return "JobInterceptors.carry(" + header + ")";
            }
        };
    }

    /** Puts back what an MDC key held before: its value, or no entry. */
    private static void restore(String key, String previous) {
        if (previous == null) {
            MDC.remove(key);
        }
        else {
            MDC.put(key, previous);
        }
    }

    /** MDC entries put for a while; closing puts back what the keys held before. */
    private static final class MdcScope implements AutoCloseable {

        private final List<String> keys = new ArrayList<>();

        private final List<String> previous = new ArrayList<>();

        void put(String key, String value) {
            this.keys.add(key);
            this.previous.add(MDC.get(key));
            MDC.put(key, value);
        }

        @Override
        public void close() {
            for (int i = this.keys.size() - 1; i >= 0; i--) {
                restore(this.keys.get(i), this.previous.get(i));
            }
        }
    }
}
