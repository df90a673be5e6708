package io.pgqueue.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * No versioned migration blocks the job tables' writers for long on a large installation: an
 * index on {@code job} or {@code job_finished} is built CONCURRENTLY, and no change rewrites or
 * scans either table under a lock. The index builds that migrations before this rule made are
 * listed, with what they cost (docs/operations.md, upgrades); a new one fails this test.
 */
class MigrationLocksTests {

    private static final Path MIGRATIONS = Path.of("src", "main", "resources", "io", "pgqueue", "db", "migration");

    /** Index builds under a write lock that shipped before the rule (V1 creates empty tables). */
    private static final List<String> SHIPPED = List.of(
            "V9__failed_jobs_index.sql: job_finished_failed_idx",
            "V15__flow_control.sql: job_limited_idx",
            "V16__groups.sql: job_group_idx",
            "V16__groups.sql: job_group_claimed_idx",
            "V16__groups.sql: job_finished_sequence_block_idx",
            "V19__job_listing_indexes.sql: job_finished_dedup_idx",
            "V19__job_listing_indexes.sql: job_finished_cancelled_idx");

    /** Changes that scan job under an exclusive lock and shipped before the rule (a column checked as it is added). */
    private static final List<String> SHIPPED_SCANS = List.of("V10__partitions_and_shards.sql: job");

    private static final Pattern INDEX = Pattern.compile(
            "CREATE\\s+(?:UNIQUE\\s+)?INDEX\\s+(CONCURRENTLY\\s+)?(?:IF\\s+NOT\\s+EXISTS\\s+)?(\\w+)\\s+ON\\s+(?:ONLY\\s+)?(\\w+)",
            Pattern.CASE_INSENSITIVE);

    private static final Pattern REWRITE = Pattern.compile(
            "ALTER\\s+TABLE\\s+(?:ONLY\\s+)?(job|job_finished)\\s+[^;]*?(ALTER\\s+COLUMN\\s+\\w+\\s+(?:SET\\s+DATA\\s+)?TYPE"
                    + "|SET\\s+NOT\\s+NULL|ADD\\s+COLUMN\\s+[^;]*DEFAULT\\s+[^;]*\\(|ADD\\s+CONSTRAINT\\s+[^;]*(?<!NOT VALID))",
            Pattern.CASE_INSENSITIVE);

    @Test
    void indexesOnTheJobTablesAreBuiltConcurrentlyAndNothingRewritesThem() throws IOException {
        List<String> locking = new ArrayList<>();
        List<String> rewriting = new ArrayList<>();
        try (Stream<Path> files = Files.list(MIGRATIONS)) {
            for (Path file : files.filter(path -> path.getFileName().toString().matches("V\\d+__.*\\.sql")).sorted().toList()) {
                String name = file.getFileName().toString();
                if (name.startsWith("V1__")) {
                    continue;
                }
                String sql = withoutComments(Files.readString(file));
                Matcher index = INDEX.matcher(sql);
                while (index.find()) {
                    String table = index.group(3).toLowerCase(Locale.ROOT);
                    if (index.group(1) == null && (table.equals("job") || table.equals("job_finished"))) {
                        locking.add(name + ": " + index.group(2));
                    }
                }
                Matcher rewrite = REWRITE.matcher(sql);
                while (rewrite.find()) {
                    rewriting.add(name + ": " + rewrite.group(1));
                }
            }
        }

        assertThat(locking).as("index builds that block writers of job or job_finished; build new ones with CREATE "
                + "INDEX CONCURRENTLY, alone in a migration (Flyway runs it outside a transaction)")
            .containsExactlyInAnyOrderElementsOf(SHIPPED);
        assertThat(rewriting).as("changes that rewrite or scan job or job_finished under an exclusive lock; add a "
                + "constraint NOT VALID and VALIDATE it in a later statement, and a column without a volatile default")
            .containsExactlyInAnyOrderElementsOf(SHIPPED_SCANS);
    }

    private static String withoutComments(String sql) {
        return sql.replaceAll("--[^\\n]*", "");
    }
}
