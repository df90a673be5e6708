package io.pgqueue;

/**
 * One finding of {@link QueueAdmin#doctor()}: what the queue cannot fix itself and an operator can.
 *
 * @param shard the shard (database) it was found on: {@code main} unsharded
 * @param check what was checked: {@code schema}, {@code indexes}, {@code dead rows},
 * {@code long transactions}, {@code autovacuum}, {@code idle in transaction}, {@code connections}
 * @param status {@code OK}, {@code WARN} (it will hurt) or {@code FAIL} (it hurts now)
 * @param detail what was found
 * @param advice what to do, empty when {@code OK}
 */
public record DoctorCheck(String shard, String check, String status, String detail, String advice) {

    /** @return whether the check passed */
    public boolean ok() {
        return "OK".equals(this.status);
    }
}
