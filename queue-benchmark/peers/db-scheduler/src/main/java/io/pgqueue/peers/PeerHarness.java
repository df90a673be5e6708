package io.pgqueue.peers;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The three workloads of the peer benchmark (../README.md), the Java twin of node/common.mjs: drain,
 * latency and enqueue, run against a {@link Peer}. Every run gets its own database,
 * {@code peer_<name>_<random>}, dropped {@code WITH (FORCE)} afterwards.
 */
final class PeerHarness {

    /** One peer, its configuration and the calls the workloads make. */
    interface Peer {
        String peer();

        String config();

        /** Extra key=value pairs for the printed line. */
        String settings();

        /** Installs the peer's schema in a fresh database; no workers yet. The handler calls onJob(i) first. */
        void open(String jdbcUrl, IntConsumer onJob) throws Exception;

        /** One bulk enqueue of the jobs with these indexes (the drain's chunks of 1,000). */
        void enqueueMany(int from, int to) throws Exception;

        /** One single enqueue call. */
        void enqueueOne(int i) throws Exception;

        void startWorkers() throws Exception;

        void close() throws Exception;
    }

    private final Map<String, String> args = new LinkedHashMap<>();
    private final Supplier<Peer> peers;

    PeerHarness(String[] argv, Supplier<Peer> peers) {
        for (String a : argv) {
            int k = a.indexOf('=');
            this.args.put(k < 0 ? a : a.substring(0, k), k < 0 ? "true" : a.substring(k + 1));
        }
        this.peers = peers;
    }

    String arg(String key, String fallback) {
        return this.args.getOrDefault(key, fallback);
    }

    int intArg(String key, int fallback) {
        return Integer.parseInt(arg(key, String.valueOf(fallback)));
    }

    void run() throws Exception {
        switch (arg("workload", "")) {
            case "drain" -> drain();
            case "latency" -> latency();
            case "enqueue" -> enqueue();
            default -> throw new IllegalArgumentException("workload=" + arg("workload", "") + ": use drain, latency or enqueue");
        }
    }

    private interface InDatabase<T> {
        T run(String jdbcUrl) throws Exception;
    }

    /** Creates peer_<name>_<random>, runs the body against it, drops it WITH (FORCE). */
    private <T> T withFreshDatabase(String name, InDatabase<T> body) throws Exception {
        String admin = arg("admin_url", System.getenv().getOrDefault("PEERS_ADMIN_JDBC_URL",
                "jdbc:postgresql://127.0.0.1:5432/test?user=postgres"));
        String db = ("peer_" + name.replaceAll("[^A-Za-z0-9]", "_") + "_"
                + Integer.toHexString(ThreadLocalRandom.current().nextInt() | 0x10000000)).toLowerCase();
        try (Connection c = DriverManager.getConnection(admin); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE " + db);
            try {
                return body.run(admin.replaceFirst("/[^/?]+(\\?|$)", "/" + db + "$1"));
            }
            finally {
                s.execute("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)");
            }
        }
    }

    private static void line(Peer peer, String fields) {
        System.out.println("peer=" + peer.peer() + " config=" + peer.config() + " " + fields
                + (peer.settings().isEmpty() ? "" : " " + peer.settings()));
    }

    private static boolean waitFor(BooleanSupplier done, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (!done.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            Thread.sleep(2);
        }
        return true;
    }

    private static double pct(double[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.floor(p * sorted.length))];
    }

    private record Drained(Peer peer, boolean done, double enqueueSeconds, double seconds, boolean exactlyOnce) {
    }

    /** Jobs enqueued in bulk with no worker running, then the workers started: start → last handler start. */
    private Drained drainOnce(int n, int chunk) throws Exception {
        Peer peer = this.peers.get();
        return withFreshDatabase(peer.peer() + "_drain", url -> {
            AtomicIntegerArray runs = new AtomicIntegerArray(n);
            AtomicInteger started = new AtomicInteger();
            AtomicLong last = new AtomicLong();
            peer.open(url, i -> {
                long now = System.nanoTime();
                last.accumulateAndGet(now, Math::max);
                runs.incrementAndGet(i);
                started.incrementAndGet();
            });
            long e0 = System.nanoTime();
            for (int from = 0; from < n; from += chunk) {
                peer.enqueueMany(from, Math.min(n, from + chunk));
            }
            double enqueueSeconds = (System.nanoTime() - e0) / 1e9;
            long t0 = System.nanoTime();
            peer.startWorkers();
            boolean done = waitFor(() -> started.get() >= n, intArg("timeout_s", 600) * 1000L);
            Thread.sleep(200); // a run twice would show here
            peer.close();
            boolean once = done;
            for (int i = 0; once && i < n; i++) {
                once = runs.get(i) == 1;
            }
            return new Drained(peer, done, enqueueSeconds, (last.get() - t0) / 1e9, once);
        });
    }

    private void drain() throws Exception {
        int n = intArg("n", 100_000);
        int chunk = intArg("chunk", 1000);
        int warmup = intArg("drain_warmup", 20_000);
        if (warmup > 0) {
            drainOnce(warmup, chunk); // discarded: the JIT's first jobs
        }
        for (int r = 0; r < intArg("repeat", 3); r++) {
            Drained d = drainOnce(n, chunk);
            line(d.peer(), String.format("workload=drain n=%d drain_per_s=%s enqueue_per_s=%.0f exactly_once=%s", n,
                    d.done() ? String.format("%.0f", n / d.seconds()) : "incomplete", n / d.enqueueSeconds(), d.exactlyOnce()));
        }
    }

    /** Single enqueues on a fixed schedule from the workers' process: enqueue call's return → handler start. */
    private void latency() throws Exception {
        int rate = intArg("rate", 200);
        int n = intArg("jobs", 4000);
        int repeat = intArg("repeat", 3);
        Peer peer = this.peers.get();
        withFreshDatabase(peer.peer() + "_latency", url -> {
            AtomicLongArray starts = new AtomicLongArray(n * (repeat + 1));
            peer.open(url, i -> starts.set(i, System.nanoTime()));
            peer.startWorkers();
            for (int r = -1; r < repeat; r++) { // r = -1: the discarded warm-up run of the same length
                int offset = (r + 1) * n;
                long[] returned = new long[n];
                double[] calls = new double[n];
                long t0 = System.nanoTime() + 10_000_000L;
                for (int j = 0; j < n; j++) {
                    long due = t0 + j * 1_000_000_000L / rate;
                    while (System.nanoTime() < due) {
                        LockSupport.parkNanos(Math.max(1000, due - System.nanoTime() - 50_000));
                    }
                    long before = System.nanoTime();
                    peer.enqueueOne(offset + j);
                    returned[j] = System.nanoTime();
                    calls[j] = (returned[j] - before) / 1e6;
                }
                double achieved = n / ((returned[n - 1] - t0) / 1e9);
                boolean complete = waitFor(() -> {
                    for (int j = 0; j < n; j++) {
                        if (starts.get(offset + j) == 0) {
                            return false;
                        }
                    }
                    return true;
                }, 30_000);
                if (r < 0) {
                    continue;
                }
                double[] lat = new double[n];
                int m = 0;
                for (int j = 0; j < n; j++) {
                    if (starts.get(offset + j) != 0) {
                        lat[m++] = (starts.get(offset + j) - returned[j]) / 1e6;
                    }
                }
                lat = Arrays.copyOf(lat, m);
                Arrays.sort(lat);
                Arrays.sort(calls);
                line(peer, String.format("workload=latency rate=%d achieved_per_s=%.0f n=%d p50_ms=%.2f p95_ms=%.2f p99_ms=%.2f "
                        + "max_ms=%.2f enqueue_call_p50_ms=%.2f enqueue_call_p99_ms=%.2f%s", rate, achieved, m, pct(lat, 0.5),
                        pct(lat, 0.95), pct(lat, 0.99), lat[m - 1], pct(calls, 0.5), pct(calls, 0.99),
                        complete ? "" : " missing=" + (n - m)));
            }
            peer.close();
            return null;
        });
    }

    /** 8 threads making single enqueue calls at a fixed total rate while the workers run. */
    private void enqueue() throws Exception {
        int seconds = intArg("seconds", 20);
        int producers = intArg("producers", 8);
        for (String t : arg("targets", "5000,10000").split(",")) {
            int target = Integer.parseInt(t.trim());
            Peer peer = this.peers.get();
            withFreshDatabase(peer.peer() + "_enqueue", url -> {
                AtomicInteger handled = new AtomicInteger();
                peer.open(url, i -> handled.incrementAndGet());
                peer.startWorkers();
                AtomicInteger next = new AtomicInteger();
                AtomicInteger enqueued = new AtomicInteger();
                long interval = 1_000_000_000L * producers / target;
                long t0 = System.nanoTime() + 10_000_000L;
                long end = t0 + TimeUnit.SECONDS.toNanos(seconds);
                ExecutorService threads = Executors.newFixedThreadPool(producers);
                List<Future<?>> loops = new ArrayList<>();
                for (int p = 0; p < producers; p++) {
                    long offset = interval * p / producers;
                    loops.add(threads.submit(() -> {
                        long due = t0 + offset;
                        while (due < end && System.nanoTime() < end) { // a producer behind schedule stops with the others
                            while (System.nanoTime() < due) {
                                LockSupport.parkNanos(Math.max(1000, due - System.nanoTime() - 50_000));
                            }
                            peer.enqueueOne(next.getAndIncrement());
                            enqueued.incrementAndGet();
                            due += interval;
                        }
                        return null;
                    }));
                }
                for (Future<?> loop : loops) {
                    loop.get();
                }
                double elapsed = (System.nanoTime() - t0) / 1e9;
                int handledAtEnd = handled.get();
                threads.shutdown();
                line(peer, String.format("workload=enqueue producers=%d target_per_s=%d seconds=%d enqueued_per_s=%.0f "
                        + "completed_per_s=%.0f backlog_at_end=%d", producers, target, seconds, enqueued.get() / elapsed,
                        handledAtEnd / elapsed, enqueued.get() - handledAtEnd));
                waitFor(() -> handled.get() >= enqueued.get(), 30_000); // let the backlog go before the database does
                peer.close();
                return null;
            });
        }
    }
}
