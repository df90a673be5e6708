package io.pgqueue.benchmark;

import java.io.BufferedWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.pgqueue.QueueClient;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The producer of {@code workload=starter-latency-external}: another instance of the benchmark's
 * application that only enqueues ({@code pgqueue.workers.enabled=false}). Enqueues {@code count}
 * single jobs at {@code rate} per second, after a warm-up, and writes each job's id and the moment its enqueue call
 * returned, in microseconds of the machine's clock, one per line.
 */
public final class ExternalProducer {

    private ExternalProducer() {
    }

    /**
     * Runs the producer.
     * @param args the JDBC URL, the rate, the count, the output file and the warm-up jobs
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String url = args[0];
        int rate = Integer.parseInt(args[1]);
        int count = Integer.parseInt(args[2]);
        Path out = Path.of(args[3]);
        int warmup = Integer.parseInt(args[4]);
        SpringApplication application = new SpringApplication(StarterBenchmark.BenchmarkApplication.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(Map.of("spring.datasource.url", url, "pgqueue.workers.enabled", "false",
                "logging.level.root", "WARN", "spring.main.banner-mode", "off"));
        try (ConfigurableApplicationContext context = application.run();
                BufferedWriter writer = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            QueueClient queue = context.getBean(QueueClient.class);
            // A producer in production has run for a while: jobs at 1,000 jobs/s that the handler does
            // not count (20,000 by default) let the JIT compile the enqueue path first (its compiler
            // threads would otherwise take the two cores from the workers during the measured run),
            // then a second's rest.
            long warm = System.nanoTime();
            for (int i = 0; i < warmup; i++) {
                LockSupport.parkNanos(warm + i * 1_000_000L - System.nanoTime());
                queue.enqueue("noop", StarterBenchmark.NOT_COUNTED);
            }
            Thread.sleep(1000);
            long interval = TimeUnit.SECONDS.toNanos(1) / rate;
            long next = System.nanoTime();
            StringBuilder lines = new StringBuilder();
            for (int i = 0; i < count; i++) {
                long wait = next - System.nanoTime();
                if (wait > 0) {
                    LockSupport.parkNanos(wait);
                }
                long id = queue.enqueue("noop", (long) i).jobId();
                lines.append(id).append(' ').append(StarterBenchmark.epochMicros()).append('\n');
                next += interval;
            }
            writer.write(lines.toString());
        }
        System.exit(0);
    }
}
