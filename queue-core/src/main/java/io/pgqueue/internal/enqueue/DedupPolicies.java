package io.pgqueue.internal.enqueue;

import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;

import io.pgqueue.DedupPolicy;
import io.pgqueue.JobState;

/**
 * The names dedup policies are recorded by where a job waits in the database before its dedup key
 * is resolved (the outbox of a sharded installation). A merge policy's function cannot be
 * recorded: its name stands for the task's own merge policy.
 */
public final class DedupPolicies {

    private DedupPolicies() {
    }

    /**
     * @param policy a policy
     * @return the name it is recorded by
     */
    public static String nameOf(DedupPolicy policy) {
        if (policy instanceof DedupPolicy.ReplaceIfReady) {
            return "REPLACE_IF_READY";
        }
        if (policy instanceof DedupPolicy.MergeIfReady) {
            return "MERGE_IF_READY";
        }
        if (policy instanceof DedupPolicy.Rerun) {
            return "RERUN";
        }
        if (policy instanceof DedupPolicy.Unique unique) {
            // UNIQUE:<period in ms>:<states>, e.g. UNIQUE:600000:COMPLETED,FAILED
            return "UNIQUE:" + unique.period().toMillis() + ":"
                    + unique.states().stream().map(Enum::name).collect(Collectors.joining(","));
        }
        return "KEEP_EXISTING";
    }

    /**
     * @param name a recorded name
     * @param own the task's own policy, which a merge stands for
     * @return the policy
     */
    public static DedupPolicy named(String name, DedupPolicy own) {
        if (name.startsWith("UNIQUE:")) {
            String[] parts = name.split(":", 3);
            return DedupPolicy.unique(Duration.ofMillis(Long.parseLong(parts[1])),
                    Arrays.stream(parts[2].split(",")).map(JobState::valueOf).toArray(JobState[]::new));
        }
        return switch (name) {
            case "REPLACE_IF_READY" -> DedupPolicy.replaceIfReady();
            case "MERGE_IF_READY" -> own instanceof DedupPolicy.MergeIfReady ? own : DedupPolicy.keepExisting();
            case "RERUN" -> DedupPolicy.rerun();
            default -> DedupPolicy.keepExisting();
        };
    }
}
