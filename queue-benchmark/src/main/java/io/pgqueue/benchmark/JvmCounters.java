package io.pgqueue.benchmark;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * The benchmark JVM's own counters read around a drain: CPU time of the whole process (handlers,
 * claimer, completer, driver, JIT and GC alike) and bytes allocated by its live threads. Unlike
 * the drain's wall-clock rate, neither counts the time the shared machine gives to others, so a
 * change to the worker's code path shows in them even when the machine is slow. Also the JIT
 * compilers' time, which tells a run that still compiles the path from a warm one.
 * @param cpuNanos process CPU time, or -1 where the JVM does not report it
 * @param allocatedBytes bytes allocated by the threads alive at the reading, or -1
 * @param jitMillis time the JIT compilers spent compiling, summed over their threads, or -1
 */
record JvmCounters(long cpuNanos, long allocatedBytes, long jitMillis) {

    static JvmCounters read() {
        long cpu = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
        long allocated = -1;
        if (ManagementFactory.getThreadMXBean() instanceof com.sun.management.ThreadMXBean threads
                && threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled()) {
            // A thread that ends between two readings takes its bytes with it; the drain's threads live
            // until the second reading.
            allocated = Arrays.stream(threads.getThreadAllocatedBytes(threads.getAllThreadIds()))
                .filter(bytes -> bytes > 0)
                .sum();
        }
        CompilationMXBean compilers = ManagementFactory.getCompilationMXBean();
        long jit = compilers != null && compilers.isCompilationTimeMonitoringSupported()
                ? compilers.getTotalCompilationTime() : -1;
        return new JvmCounters(cpu, allocated, jit);
    }

    /**
     * @param earlier the reading before
     * @param jobs the jobs in between
     * @return {@code jvm_cpu_us_per_job=... alloc_bytes_per_job=... jit_ms=...} (-1 where not reported)
     */
    String perJobSince(JvmCounters earlier, int jobs) {
        double cpu = this.cpuNanos < 0 ? -1 : (this.cpuNanos - earlier.cpuNanos) / 1000.0 / jobs;
        double allocated = this.allocatedBytes < 0 ? -1 : (double) (this.allocatedBytes - earlier.allocatedBytes) / jobs;
        long jit = this.jitMillis < 0 ? -1 : this.jitMillis - earlier.jitMillis;
        return String.format(Locale.ROOT, "jvm_cpu_us_per_job=%.1f alloc_bytes_per_job=%.0f jit_ms=%d", cpu, allocated, jit);
    }

    /**
     * Collects garbage and reads what is left: the live heap and the JVM's threads.
     * @return {@code heap_live_mib=... threads=...}
     */
    static String liveHeapAndThreads() {
        System.gc();
        long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        return String.format(Locale.ROOT, "heap_live_mib=%.1f threads=%d", used / 1048576.0,
                ManagementFactory.getThreadMXBean().getThreadCount());
    }
}
