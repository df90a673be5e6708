package io.pgqueue.faults;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueResult;
import io.pgqueue.JobRequest;
import io.pgqueue.QueueClient;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.ApplicationArguments;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.stereotype.Component;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * With {@code faults.role=producer}, enqueues {@code record} jobs in transactions on the
 * application's DataSource, as an application does in its own business transactions, at a steady
 * rate until the process ends. Each transaction enqueues one to {@code faults.producer.batch} jobs
 * whose partition keys are drawn at random, so on a sharded installation most of them go through
 * the outbox; a share of the transactions rolls back on purpose.
 * <p>
 * What happened is recorded in {@code <node>-<pid>.enqueues} in {@code faults.record-dir}, so that
 * a scenario checks the queue against facts: {@code T <tx> <job id>...} once the jobs are enqueued
 * and before the commit; {@code C <tx> <epoch millis>} once the commit returned;
 * {@code R <tx>} once a rollback on purpose returned; {@code F <tx> <exception>} when the
 * transaction failed (an enqueue that failed wrote nothing; a commit that failed may have
 * committed). A transaction with a {@code T} line and no outcome was cut short by a kill: it
 * committed entirely or not at all.
 */
@Component
@ConditionalOnProperty(name = "faults.role", havingValue = "producer")
class FaultProducer implements ApplicationRunner {

    private final QueueClient client;

    private final TransactionTemplate transactions;

    private final RecordFile file;

    private final String pid = Long.toString(ProcessHandle.current().pid());

    private final AtomicLong transactionCount = new AtomicLong();

    @Value("${faults.producer.threads:2}")
    private int threads;

    @Value("${faults.producer.transactions-per-second:40}")
    private int transactionsPerSecond;

    @Value("${faults.producer.batch:4}")
    private int batch;

    /** Distinct partition keys; 0 gives every job a key of its own. */
    @Value("${faults.producer.keys:0}")
    private int keys;

    @Value("${faults.producer.rollback-share:0.1}")
    private double rollbackShare;

    /** The share of jobs scheduled up to {@code faults.producer.delay} ahead, which wait in their partitions. */
    @Value("${faults.producer.delayed-share:0}")
    private double delayedShare;

    @Value("${faults.producer.delay:5s}")
    private Duration delay;

    @Value("${faults.producer.work-millis:10}")
    private int workMillis;

    FaultProducer(QueueClient client, PlatformTransactionManager transactionManager,
            @Value("${pgqueue.node-id}") String node, @Value("${faults.record-dir}") Path directory) {
        this.client = client;
        this.transactions = new TransactionTemplate(transactionManager);
        this.file = new RecordFile(directory.resolve(node + "-" + this.pid + ".enqueues"));
    }

    @Override
    public void run(ApplicationArguments args) throws InterruptedException {
        List<Thread> producers = new ArrayList<>();
        long periodNanos = TimeUnit.SECONDS.toNanos(1) * this.threads / this.transactionsPerSecond;
        for (int t = 0; t < this.threads; t++) {
            Thread producer = new Thread(() -> produce(periodNanos), "fault-producer-" + t);
            producer.start();
            producers.add(producer);
        }
        for (Thread producer : producers) {
            producer.join();
        }
    }

    private void produce(long periodNanos) {
        long next = System.nanoTime();
        while (!Thread.currentThread().isInterrupted()) {
            transaction();
            next += periodNanos;
            long wait = next - System.nanoTime();
            if (wait > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(wait);
                }
                catch (InterruptedException ex) {
                    return;
                }
            }
            else {
                next = System.nanoTime();
            }
        }
    }

    private void transaction() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        String tx = this.pid + "-" + this.transactionCount.incrementAndGet();
        boolean rollback = random.nextDouble() < this.rollbackShare;
        List<JobRequest> jobs = new ArrayList<>();
        for (int i = random.nextInt(this.batch) + 1; i > 0; i--) {
            String key = this.keys > 0 ? "key-" + random.nextInt(this.keys) : "k-" + random.nextLong();
            EnqueueOptions options = EnqueueOptions.defaults().withPartitionKey(key);
            if (random.nextDouble() < this.delayedShare) {
                options = options.withDelay(Duration.ofMillis(random.nextLong(this.delay.toMillis() / 2,
                        this.delay.toMillis() + 1)));
            }
            jobs.add(JobRequest.of("record", new RecordTask.Work(this.workMillis, 0), options));
        }
        try {
            this.transactions.executeWithoutResult(status -> {
                List<EnqueueResult> results = this.client.enqueueAll(jobs);
                this.file.append("T " + tx + " " + results.stream().map(result -> Long.toString(result.jobId()))
                    .collect(Collectors.joining(" ")));
                if (rollback) {
                    status.setRollbackOnly();
                }
            });
            this.file.append((rollback ? "R " + tx : "C " + tx + " " + System.currentTimeMillis()));
        }
        catch (RuntimeException ex) {
            this.file.append("F " + tx + " " + ex.getClass().getSimpleName());
            try {
                Thread.sleep(50);
            }
            catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
