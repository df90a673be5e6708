package io.pgqueue.internal.store;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.pgqueue.AttemptResult;
import io.pgqueue.JobAttempt;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A job's attempt history as its row keeps it ({@code job.history}, V23): a JSON array of attempts,
 * newest last, written and read here with a mapper of its own, whatever the application's JSON
 * settings are. Times are ISO-8601 instants.
 */
public final class AttemptHistory {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private AttemptHistory() {
    }

    /**
     * @param attempt an attempt
     * @return its element of the history array, as JSON
     */
    public static String entry(JobAttempt attempt) {
        ObjectNode node = JSON.createObjectNode();
        node.put("attempt", attempt.attempt());
        node.put("outcome", attempt.outcome().name());
        node.put("node", attempt.node());
        node.put("startedAt", attempt.startedAt() == null ? null : attempt.startedAt().toString());
        node.put("endedAt", attempt.endedAt() == null ? null : attempt.endedAt().toString());
        node.put("error", clean(attempt.error()));
        ArrayNode log = node.putArray("log");
        for (JobAttempt.LogLine line : attempt.log()) {
            log.addObject().put("at", line.at().toString()).put("level", line.level()).put("message", clean(line.message()));
        }
        node.put("droppedLogLines", attempt.droppedLogLines());
        return JSON.writeValueAsString(node);
    }

    /**
     * @param history a job's history column, or {@code null}
     * @return its attempts, oldest first; none for {@code null}
     */
    public static List<JobAttempt> read(String history) {
        if (history == null) {
            return List.of();
        }
        List<JobAttempt> attempts = new ArrayList<>();
        for (JsonNode node : JSON.readTree(history)) {
            List<JobAttempt.LogLine> log = new ArrayList<>();
            for (JsonNode line : node.path("log")) {
                log.add(new JobAttempt.LogLine(instant(line.path("at")), line.path("level").asString(null),
                        line.path("message").asString(null)));
            }
            attempts.add(new JobAttempt(node.path("attempt").asInt(), AttemptResult.valueOf(node.path("outcome").asString()),
                    node.path("node").asString(null), instant(node.path("startedAt")), instant(node.path("endedAt")),
                    node.path("error").asString(null), log, node.path("droppedLogLines").asInt()));
        }
        return attempts;
    }

    private static Instant instant(JsonNode node) {
        return node.isMissingNode() || node.isNull() ? null : Instant.parse(node.asString());
    }

    /** PostgreSQL's jsonb cannot hold U+0000 (as {@code \u0000}) either. */
    private static String clean(String text) {
        return text == null || text.indexOf('\u0000') < 0 ? text : text.replace("\u0000", "");
    }
}
