package io.pgqueue.sample.tasks;

import io.pgqueue.QueueTask;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskHandler;
import io.pgqueue.schedule.Schedules;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.jdbc.core.JdbcTemplate;

/**
 * Every night at 03:00 Amsterdam time, deletes the files that have been in a trash folder for 30
 * days. A recurring job: the slot fires once across every instance of the app, and a night when
 * every instance was down is caught up once when one comes back.
 */
@QueueTask(name = "empty-trash", cron = "0 0 3 * * *", zone = "Europe/Amsterdam")
public class EmptyTrashTask implements TaskHandler<EmptyTrashTask.EmptyTrash> {

    private static final Logger log = LoggerFactory.getLogger(EmptyTrashTask.class);

    /** A night's run: the schedule's payload is {@code {}}. */
    public record EmptyTrash() {
    }

    private final JdbcTemplate jdbc;

    public EmptyTrashTask(JdbcTemplate jdbc) {
        this.jdbc = jdbc;
    }

    @Override
    public void handle(EmptyTrash run, TaskContext context) {
        int deleted = this.jdbc.update("DELETE FROM file WHERE folder = 'trash' AND uploaded_at < now() - interval '30 days'");
        log.info("Emptied the trash for the night of {}: {} files deleted", context.headers().get(Schedules.SLOT_HEADER),
                deleted);
    }
}
