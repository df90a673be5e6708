package io.pgqueue;

/**
 * What a job that runs after others does when one of them fails for good or is cancelled.
 */
public enum DependencyFailure {

    /**
     * The job is cancelled (it never runs), and so, in turn, are the jobs that wait for it with this
     * choice. The default.
     */
    CANCEL,

    /**
     * The job runs anyway once all its dependencies ended; {@link TaskContext#dependencies()} tells
     * it how many succeeded and failed.
     */
    RUN
}
