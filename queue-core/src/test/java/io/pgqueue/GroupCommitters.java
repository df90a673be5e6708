package io.pgqueue;

import io.pgqueue.store.JobStore;

/** Makes the package-private {@link GroupCommitter} available to tests in other packages. */
public final class GroupCommitters {

    private GroupCommitters() {
    }

    /**
     * Creates a group committer with two writers.
     * @param store where it writes
     * @return the committer, not started
     */
    public static BackgroundService create(JobStore store) {
        return new GroupCommitter(store, 2, 100);
    }
}
