package io.pgqueue.benchmark;

import java.util.List;
import java.util.Map;

import io.pgqueue.testing.TestDatabase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The benchmark's own correctness with small numbers (no timing is asserted): every job of the
 * drain and many-task-type workloads runs exactly once.
 */
class QueueBenchmarkTests {

    @RegisterExtension
    static final TestDatabase db = TestDatabase.perClass();

    @Test
    void drainAndTaskTypesRunEveryJobExactlyOnce() throws Exception {
        List<String> lines = QueueBenchmark.execute(Map.of("workload", "drain,tasks", "n", "3000", "url", url()));

        assertThat(lines).hasSize(3).allMatch(line -> line.contains("exactly_once=true"));
        assertThat(lines.get(0)).startsWith("workload=drain task_types=1 n=3000");
        assertThat(lines.get(2)).startsWith("workload=tasks task_types=20 n=3000");
    }

    private static String url() {
        String url = db.jdbcUrl();
        if (db.user() != null) {
            url += (url.contains("?") ? "&" : "?") + "user=" + db.user();
        }
        if (db.password() != null) {
            url += "&password=" + db.password();
        }
        return url;
    }
}
