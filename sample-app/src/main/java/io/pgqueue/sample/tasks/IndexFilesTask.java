package io.pgqueue.sample.tasks;

import java.util.List;

import io.pgqueue.ChunkHandler;
import io.pgqueue.ChunkItem;
import io.pgqueue.QueueTask;
import io.pgqueue.TerminalTaskException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Takes files into the search index in chunks: one job per file, handed over up to 20 at a time
 * (gathered for at most 200 ms), and written with one statement per chunk — what a bulk API of a
 * search engine wants. A file deleted meanwhile fails its own job alone, for good.
 */
@QueueTask(name = "index-files", concurrency = 20, chunkSize = 20, chunkLinger = "200ms", maxAttempts = 3)
public class IndexFilesTask implements ChunkHandler<IndexFilesTask.Index> {

    private static final Logger log = LoggerFactory.getLogger(IndexFilesTask.class);

    /**
     * A file to index.
     * @param fileId the file
     */
    public record Index(long fileId) {
    }

    private final JdbcTemplate jdbc;

    public IndexFilesTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(List<ChunkItem<Index>> chunk) {
        Long[] ids = chunk.stream().map(item -> item.payload().fileId()).toArray(Long[]::new);
        List<Long> indexed = this.jdbc.queryForList("UPDATE file SET indexed_at = now(), index_chunk = ? "
                + "WHERE id = ANY(?) RETURNING id", Long.class, chunk.size(), ids);
        for (ChunkItem<Index> item : chunk) {
            if (!indexed.contains(item.payload().fileId())) {
                item.fail(new TerminalTaskException("File " + item.payload().fileId() + " no longer exists"));
            }
        }
        log.debug("Indexed {} files in one chunk", indexed.size());
    }
}
