package io.pgqueue.sample;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import javax.sql.DataSource;

import io.pgqueue.AttemptOutcomes;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.QueueConfig;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskRegistry;
import io.pgqueue.retry.RetryPolicy;
import io.pgqueue.store.ClaimLimit;
import io.pgqueue.store.ClaimedJob;
import io.pgqueue.store.FencedResult;
import io.pgqueue.store.JobStore;
import io.pgqueue.store.Outcome;
import io.pgqueue.store.QueueSchema;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.ApplicationRunner;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.support.TransactionTemplate;
import tools.jackson.databind.json.JsonMapper;

/**
 * A tour of the queue engine on a file-storage workload: uploads enqueue push notifications in the
 * same transaction, a worker claims them in batches and records the outcomes, a flaky task is
 * retried, and a sync task is deduplicated. (The Spring Boot starter's {@code @QueueTask} beans
 * replace the hand-written worker loop here once the starter lands.)
 */
@SpringBootApplication
public class SampleApplication {

    private static final Log log = LogFactory.getLog(SampleApplication.class);

    /**
     * Starts the application.
     * @param args command-line arguments
     */
    public static void main(String[] args) {
        SpringApplication.run(SampleApplication.class, args);
    }

    @Bean
    ApplicationRunner tour(DataSource dataSource, TransactionTemplate transactions) {
        return args -> {
            QueueConfig config = QueueConfig.defaults();
            QueueSchema.migrate(dataSource, config.schema());
            TaskRegistry tasks = TaskRegistry.of(
                    TaskDefinition.builder("send-push").delayTolerance(Duration.ofSeconds(1)).build(),
                    TaskDefinition.builder("sync-folder").retryPolicy(RetryPolicy.fixed(Duration.ZERO)).maxAttempts(3).build());
            JobStore store = new JobStore(dataSource, config);
            QueueClient queue = new QueueClient(store, config, tasks, JsonMapper.builder().build());
            AttemptOutcomes outcomes = new AttemptOutcomes(tasks);

            // An upload and its notification commit together.
            transactions.executeWithoutResult(tx -> queue.enqueue("send-push", Map.of("fileId", "f-1")));
            List<JobRequest> batch = new ArrayList<>();
            for (int i = 2; i <= 1000; i++) {
                batch.add(JobRequest.of("send-push", Map.of("fileId", "f-" + i)));
            }
            queue.enqueueAll(batch);
            for (int change = 1; change <= 5; change++) {
                var result = queue.enqueue("sync-folder", Map.of("folder", "photos", "change", change),
                        EnqueueOptions.defaults().withDedupKey("photos"));
                log.info("sync-folder change " + change + " -> job " + result.jobId() + " " + result.outcome());
            }

            int completed = 0;
            int retried = 0;
            while (true) {
                List<ClaimedJob> claimed = store.claim(
                        List.of(new ClaimLimit("send-push", 100), new ClaimLimit("sync-folder", 1)), "sample-worker",
                        JobState.RUNNING, Duration.ofSeconds(30));
                if (claimed.isEmpty()) {
                    break;
                }
                List<Outcome> results = new ArrayList<>();
                for (ClaimedJob job : claimed) {
                    if (job.task().equals("sync-folder") && job.attempt() == 1) {
                        results.add(outcomes.failed(job, new IllegalStateException("storage backend timed out")));
                    }
                    else {
                        results.add(outcomes.succeeded(job));
                    }
                }
                FencedResult written = store.record(results);
                completed += (int) written.count(JobState.COMPLETED);
                retried += (int) written.count(JobState.READY);
            }
            log.info("Tour finished: " + completed + " jobs completed, " + retried + " retried");
        };
    }
}
