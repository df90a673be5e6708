package io.pgqueue.sample.web;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.pgqueue.DedupPolicy;
import io.pgqueue.EnqueueOptions;
import io.pgqueue.EnqueueResult;
import io.pgqueue.EnqueuedWorkflow;
import io.pgqueue.JobNotFinishedException;
import io.pgqueue.JobRequest;
import io.pgqueue.JobState;
import io.pgqueue.QueueClient;
import io.pgqueue.Workflow;
import io.pgqueue.sample.tasks.CopyFolderTask;
import io.pgqueue.sample.tasks.CountUploadTask;
import io.pgqueue.sample.tasks.GenerateThumbnailTask;
import io.pgqueue.sample.tasks.IndexFilesTask;
import io.pgqueue.sample.tasks.PublishFileTask;
import io.pgqueue.sample.tasks.PublishMemoryTask;
import io.pgqueue.sample.tasks.ScanFileTask;
import io.pgqueue.sample.tasks.SendPushTask;
import io.pgqueue.sample.tasks.SyncDevicesTask;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.annotation.Transactional;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;

/**
 * The storage API. Every endpoint changes the application's tables and enqueues its background
 * work in the same transaction: the job exists if and only if the change committed.
 */
@RestController
public class FileController {

    private final JdbcTemplate jdbc;

    private final QueueClient queue;

    private final ApplicationEventPublisher events;

    public FileController(JdbcTemplate jdbc, QueueClient queue, ApplicationEventPublisher events) {
        this.jdbc = jdbc;
        this.queue = queue;
        this.events = events;
    }

    /**
     * Uploads a file: stores it, notifies the owner (fast, 1 s tolerance), syncs the owner's devices
     * (deduplicated per owner), starts the upload workflow: a thumbnail (flaky dependency,
     * retried) and a virus scan side by side, then the publication once both ended, and publishes a
     * {@link CountUploadTask.FileUploaded} event, which becomes a job in the same transaction.
     */
    @PostMapping("/files")
    @ResponseStatus(HttpStatus.CREATED)
    @Transactional
    public Map<String, Object> upload(@RequestBody Upload upload) {
        if (upload.name() == null || upload.name().isBlank()) {
            throw new IllegalArgumentException("A file needs a name");
        }
        Long fileId = this.jdbc.queryForObject("INSERT INTO file (owner, folder, name, size_bytes) VALUES (?, ?, ?, ?) "
                + "RETURNING id", Long.class, upload.owner(), upload.folder(), upload.name(), upload.sizeBytes());
        // Tagged with its owner: the console finds (and can cancel) every push to one user.
        EnqueueResult push = this.queue.enqueue(SendPushTask.class,
                new SendPushTask.Push(upload.owner(), "Uploaded " + upload.name()),
                EnqueueOptions.defaults().withTags("owner:" + upload.owner()));
        EnqueueResult sync = this.queue.enqueue(SyncDevicesTask.class,
                new SyncDevicesTask.Sync(upload.owner(), "file " + fileId));
        EnqueuedWorkflow publication = this.queue.workflow("upload")
            .add("thumbnail", "generate-thumbnail", new GenerateThumbnailTask.Thumbnail(fileId))
            .add("scan", "scan-file", new ScanFileTask.Scan(fileId))
            .add("publish", "publish-file", new PublishFileTask.Publish(fileId), Workflow.after("thumbnail", "scan"))
            .enqueue();
        // A job of count-upload, in this transaction: the task lists the event (@QueueTask(events)).
        this.events.publishEvent(new CountUploadTask.FileUploaded(fileId, upload.owner()));
        return Map.of("fileId", fileId, "jobs", Map.of("push", push, "sync", sync), "workflow", publication);
    }

    /**
     * Scans a file again and answers with the verdict: the scan runs as a job on whichever instance
     * claims it, and this request awaits its result ("put the task and take its result"). A scan not
     * done within {@code wait} is answered 202 with its job id, to be read later at {@code /jobs/{id}}.
     * A file is scanned at most once per ten minutes: a request within ten minutes of a scan that is
     * waiting, running or completed gets that scan's job and verdict (a unique dedup policy).
     */
    @PostMapping("/files/{fileId}/scan")
    public ResponseEntity<Map<String, Object>> scan(@PathVariable long fileId,
            @RequestParam(defaultValue = "PT10S") Duration wait) {
        long jobId = this.queue.enqueue("scan-file", new ScanFileTask.Scan(fileId), EnqueueOptions.defaults()
            .withDedup("scan-" + fileId, DedupPolicy.unique(Duration.ofMinutes(10), JobState.COMPLETED))).jobId();
        try {
            ScanFileTask.Verdict verdict = this.queue.await(jobId, ScanFileTask.Verdict.class, wait);
            return ResponseEntity.ok(Map.of("jobId", jobId, "clean", verdict.clean()));
        }
        catch (JobNotFinishedException ex) {
            return ResponseEntity.accepted().body(Map.of("jobId", jobId, "state", "running"));
        }
    }

    /** Indexes every file of a folder: a job per file, which the index task takes in chunks. */
    @PostMapping("/folders/{folder}/index")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public Map<String, Object> index(@PathVariable String folder, @RequestParam String owner) {
        List<JobRequest> jobs = this.jdbc.queryForList("SELECT id FROM file WHERE owner = ? AND folder = ? ORDER BY id",
                Long.class, owner, folder).stream()
            .map(id -> JobRequest.of("index-files", new IndexFilesTask.Index(id)))
            .toList();
        return Map.of("jobs", this.queue.enqueueAll(jobs).size());
    }

    /** Creates many files in a folder at once, to give the copy task something to do. */
    @PostMapping("/folders/{folder}/seed")
    @ResponseStatus(HttpStatus.CREATED)
    public Map<String, Object> seed(@PathVariable String folder, @RequestParam String owner,
            @RequestParam(defaultValue = "5000") int count) {
        int created = this.jdbc.update("INSERT INTO file (owner, folder, name, size_bytes) "
                + "SELECT ?, ?, 'photo-' || n || '.jpg', 1000 + n FROM generate_series(1, ?) n", owner, folder, count);
        return Map.of("folder", folder, "created", created);
    }

    /** Copies a folder in the background (slow, reports progress, can be cancelled). */
    @PostMapping("/folders/{folder}/copy")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public EnqueueResult copy(@PathVariable String folder, @RequestParam String owner, @RequestParam String to) {
        return this.queue.enqueue(CopyFolderTask.class, new CopyFolderTask.Copy(owner, folder, to));
    }

    /** Creates a memory and schedules its publication. */
    @PostMapping("/memories")
    @ResponseStatus(HttpStatus.CREATED)
    @Transactional
    public Map<String, Object> memory(@RequestBody NewMemory memory) {
        Duration delay = Duration.parse(memory.publishIn() == null ? "PT30S" : memory.publishIn());
        Long id = this.jdbc.queryForObject("INSERT INTO memory (owner, title) VALUES (?, ?) RETURNING id", Long.class,
                memory.owner(), memory.title());
        EnqueueResult job = this.queue.enqueue(PublishMemoryTask.class, new PublishMemoryTask.Publish(id),
                EnqueueOptions.defaults().withDelay(delay));
        return Map.of("memoryId", id, "job", job);
    }

    /** Records a change on the owner's account: a device sync follows, deduplicated per owner. */
    @PostMapping("/users/{owner}/changes")
    @ResponseStatus(HttpStatus.ACCEPTED)
    public EnqueueResult change(@PathVariable String owner, @RequestParam String change) {
        return this.queue.enqueue(SyncDevicesTask.class, new SyncDevicesTask.Sync(owner, change));
    }

    /** Puts a user in quiet hours for a while: their pushes wait (snooze) until it ends. */
    @PostMapping("/users/{owner}/quiet")
    public Map<String, Object> quiet(@PathVariable String owner, @RequestParam Duration duration) {
        if (duration.isNegative()) {
            throw new IllegalArgumentException("Quiet hours last zero or more, not " + duration);
        }
        this.jdbc.update("INSERT INTO quiet_hours (owner, until) VALUES (?, now() + ? * interval '1 millisecond') "
                + "ON CONFLICT (owner) DO UPDATE SET until = excluded.until", owner, duration.toMillis());
        return Map.of("owner", owner, "quietFor", duration.toString());
    }

    /**
     * An upload.
     * @param owner the owner
     * @param folder the folder
     * @param name the file name
     * @param sizeBytes the size
     */
    public record Upload(String owner, String folder, String name, long sizeBytes) {
    }

    /**
     * A memory to publish later.
     * @param owner the owner
     * @param title the title
     * @param publishIn ISO-8601 delay, e.g. PT30S
     */
    public record NewMemory(String owner, String title, String publishIn) {
    }
}
