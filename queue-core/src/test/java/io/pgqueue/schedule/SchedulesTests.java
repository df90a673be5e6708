package io.pgqueue.schedule;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.IntStream;

import io.pgqueue.Engines;
import io.pgqueue.EnqueueResult;
import io.pgqueue.PgQueue;
import io.pgqueue.TaskContext;
import io.pgqueue.TaskDefinition;
import io.pgqueue.TaskHandler;
import io.pgqueue.TaskRegistry;
import io.pgqueue.UnknownTaskException;
import io.pgqueue.internal.schedule.Scheduler;
import io.pgqueue.internal.store.ScheduleStore;
import io.pgqueue.testing.SettableClock;
import io.pgqueue.testing.TestQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Recurring jobs on a real PostgreSQL, with the schedulers' clock set by the test: one job per
 * slot however many nodes fire at once, no repeat or loss across restarts, the catch-up policies,
 * runtime schedules, and the scheduler thread firing on time.
 */
class SchedulesTests {

    private static final TaskDefinition REPORT = TaskDefinition.builder("report").build();

    private static final TaskDefinition DIGEST = TaskDefinition.builder("digest").build();

    /** A task whose handler reads its payload as a record: a JSON array does not fit. */
    private static final TaskDefinition TYPED = TaskDefinition.builder("typed").handlerType(TypedHandler.class).build();

    record Typed(String name) {
    }

    static final class TypedHandler implements TaskHandler<Typed> {

        @Override
        public void handle(Typed payload, TaskContext context) {
        }
    }

    @RegisterExtension
    static final TestQueue queue = TestQueue.perClass(REPORT, DIGEST, TYPED).withPoolSize(16);

    private static final ZoneId AMSTERDAM = ZoneId.of("Europe/Amsterdam");

    /** How far the clock moves at a time through a day whose clocks change. */
    private static final Duration STEP = Duration.ofMinutes(5);

    private final SettableClock clock = new SettableClock(Instant.parse("2026-11-24T10:00:30Z"));

    @Test
    void manyNodesFiringAtOnceEnqueueOneJobPerSlot() throws Exception {
        Schedule everyMinute = Schedule.of("report-every-minute", "report", "0 * * * * *");
        List<Scheduler> nodes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            nodes.add(node());
        }
        nodes.get(0).configure(List.of(everyMinute), List.of("report"));
        assertThat(info("report-every-minute").nextFire()).isEqualTo(Instant.parse("2026-11-24T10:01:00Z"));

        ExecutorService threads = Executors.newFixedThreadPool(12);
        for (int minute = 1; minute <= 5; minute++) {
            this.clock.set(Instant.parse("2026-11-24T10:00:00Z").plus(Duration.ofMinutes(minute)).plusMillis(5));
            List<Future<List<EnqueueResult>>> fired = new ArrayList<>();
            for (int t = 0; t < 12; t++) {
                Scheduler node = nodes.get(t % nodes.size());
                fired.add(threads.submit(node::fireDue));
            }
            int jobs = 0;
            for (Future<List<EnqueueResult>> each : fired) {
                jobs += each.get().size();
            }
            assertThat(jobs).as("jobs enqueued for the slot of minute %d", minute).isEqualTo(1);
        }
        threads.shutdown();

        List<Job> jobs = jobs("report");
        assertThat(jobs).hasSize(5).allSatisfy(job -> assertThat(job.schedule()).isEqualTo("report-every-minute"))
            .allSatisfy(job -> assertThat(job.scheduleTime()).isEqualTo(Instant.parse(job.slot())));
        assertThat(jobs).extracting(Job::slot).containsExactly("2026-11-24T10:01:00Z", "2026-11-24T10:02:00Z",
                "2026-11-24T10:03:00Z", "2026-11-24T10:04:00Z", "2026-11-24T10:05:00Z");
        ScheduleInfo info = info("report-every-minute");
        assertThat(info.lastFire()).isEqualTo(Instant.parse("2026-11-24T10:05:00Z"));
        assertThat(info.nextFire()).isEqualTo(Instant.parse("2026-11-24T10:06:00Z"));
        assertThat(info.lastJobId()).isNotNull();
        assertThat(info.configured()).isTrue();
    }

    @Test
    void aRestartNeitherRepeatsNorSkipsASlot() {
        Schedule hourly = Schedule.of("digest-hourly", "digest", "0 0 * * * *");
        Scheduler before = node();
        before.configure(List.of(hourly), List.of("digest"));
        this.clock.set(Instant.parse("2026-11-24T11:00:01Z"));
        assertThat(before.fireDue()).hasSize(1);

        // The node restarts (a deploy) a little later, with the same settings: the slot stays fired.
        this.clock.set(Instant.parse("2026-11-24T11:20:00Z"));
        Scheduler after = node();
        after.configure(List.of(hourly), List.of("digest"));
        assertThat(after.fireDue()).isEmpty();
        assertThat(info("digest-hourly").nextFire()).isEqualTo(Instant.parse("2026-11-24T12:00:00Z"));

        // Another expression: the next slot follows it.
        after.configure(List.of(Schedule.of("digest-hourly", "digest", "0 30 * * * *")), List.of("digest"));
        assertThat(info("digest-hourly").nextFire()).isEqualTo(Instant.parse("2026-11-24T11:30:00Z"));

        // Dropped from the settings of a node that runs the task: deleted.
        after.configure(List.of(), List.of("digest"));
        assertThat(after.list()).noneMatch(each -> each.schedule().name().equals("digest-hourly"));
    }

    @Test
    void missedSlotsRunOnceAllOrNotAtAll() {
        Scheduler node = node();
        node.configure(List.of(Schedule.of("once", "report", "0 */10 * * * *").withCatchUp(CatchUp.RUN_ONCE),
                Schedule.of("all", "report", "0 */10 * * * *").withCatchUp(CatchUp.RUN_ALL),
                Schedule.of("skip", "report", "0 */10 * * * *").withCatchUp(CatchUp.SKIP)), List.of("report"));
        // Every node was down from 10:05 until 11:05:30: the slots 10:10 to 11:00 were missed.
        this.clock.set(Instant.parse("2026-11-24T11:05:30Z"));

        List<EnqueueResult> fired = node.fireDue();

        assertThat(slotsOf("once")).containsExactly("2026-11-24T11:00:00Z");
        assertThat(slotsOf("all")).containsExactly("2026-11-24T10:10:00Z", "2026-11-24T10:20:00Z",
                "2026-11-24T10:30:00Z", "2026-11-24T10:40:00Z", "2026-11-24T10:50:00Z", "2026-11-24T11:00:00Z");
        assertThat(slotsOf("skip")).isEmpty();
        assertThat(fired).hasSize(7);
        assertThat(info("skip").nextFire()).isEqualTo(Instant.parse("2026-11-24T11:10:00Z"));

        // On time (less than a minute late), a skipping schedule fires.
        this.clock.set(Instant.parse("2026-11-24T11:10:20Z"));
        node.fireDue();
        assertThat(slotsOf("skip")).containsExactly("2026-11-24T11:10:00Z");
    }

    @Test
    void twoNodesRestartingAfterEveryNodeWasDownRunTheLatestMissedSlotOnce() throws Exception {
        Schedule everyMinute = Schedule.of("report-once", "report", "0 * * * * *").withCatchUp(CatchUp.RUN_ONCE);
        Scheduler before = node();
        before.configure(List.of(everyMinute), List.of("report"));
        this.clock.set(Instant.parse("2026-11-24T10:01:00.100Z"));
        assertThat(before.fireDue()).hasSize(1);

        // Both nodes were down from 10:01:30 and start again at 10:05:30, side by side, each writing its
        // configured schedules and firing what is due, again and again.
        this.clock.set(Instant.parse("2026-11-24T10:05:30Z"));
        List<Scheduler> restarted = List.of(node(), node());
        ExecutorService threads = Executors.newFixedThreadPool(2);
        List<Future<Integer>> fired = new ArrayList<>();
        for (Scheduler node : restarted) {
            fired.add(threads.submit(() -> {
                node.configure(List.of(everyMinute), List.of("report"));
                int jobs = 0;
                for (int i = 0; i < 5; i++) {
                    jobs += node.fireDue().size();
                }
                return jobs;
            }));
        }
        int jobs = 0;
        for (Future<Integer> each : fired) {
            jobs += each.get();
        }
        threads.shutdown();

        assertThat(jobs).isEqualTo(1);
        assertThat(slotsOf("report-once")).containsExactly("2026-11-24T10:01:00Z", "2026-11-24T10:05:00Z");
        assertThat(info("report-once").nextFire()).isEqualTo(Instant.parse("2026-11-24T10:06:00Z"));
    }

    @Test
    void aScheduleWhoseJobCannotBeEnqueuedSkipsItsSlotAndHoldsUpNoOther() {
        Scheduler node = node();
        ScheduleStore store = new ScheduleStore(queue.dataSource(), queue.config());
        // A payload the task's handler cannot read, stored as an older release might have left it.
        store.upsertConfigured(Schedule.of("broken", "typed", "0 * * * * *").withPayload("[1, 2]"),
                Instant.parse("2026-11-24T10:01:00Z"));
        node.configure(List.of(Schedule.of("fine", "report", "0 * * * * *")), List.of());
        this.clock.set(Instant.parse("2026-11-24T10:01:00.100Z"));

        assertThat(node.fireDue()).hasSize(1);

        assertThat(slotsOf("fine")).containsExactly("2026-11-24T10:01:00Z");
        assertThat(info("broken").nextFire()).isEqualTo(Instant.parse("2026-11-24T10:02:00Z"));
        assertThat(info("broken").lastJobId()).isNull();
    }

    @Test
    void catchingUpAllOfManyMissedSlotsFiresThemAll() {
        Scheduler node = node();
        node.configure(List.of(Schedule.of("ticks", "report", "* * * * * *").withCatchUp(CatchUp.RUN_ALL)), List.of());
        this.clock.set(Instant.parse("2026-11-24T10:25:30Z"));

        assertThat(node.fireDue()).hasSize(1500);

        assertThat(info("ticks").nextFire()).isEqualTo(Instant.parse("2026-11-24T10:25:31Z"));
    }

    @Test
    void schedulesAddedAtRuntimeAreSharedAndRemovable() {
        Scheduler a = node();
        Scheduler b = node();
        a.configure(List.of(Schedule.of("configured", "report", "@daily")), List.of("report"));
        a.put(Schedule.of("nightly-digest", "digest", "0 0 3 * * *").withZone(ZoneId.of("Europe/Amsterdam"))
            .withPayload("{\"scope\":\"all\"}"));

        assertThat(b.list()).extracting(each -> each.schedule().name()).contains("configured", "nightly-digest");
        ScheduleInfo nightly = b.list().stream().filter(each -> each.schedule().name().equals("nightly-digest")).findFirst()
            .orElseThrow();
        assertThat(nightly.configured()).isFalse();
        assertThat(nightly.nextFire()).isEqualTo(Instant.parse("2026-11-25T02:00:00Z"));

        this.clock.set(Instant.parse("2026-11-25T02:00:00.200Z"));
        List<EnqueueResult> fired = b.fireDue();
        assertThat(fired).hasSize(2);
        assertThat(jobs("digest")).singleElement().satisfies(job -> assertThat(job.payload()).isEqualTo("{\"scope\": \"all\"}"));

        assertThatThrownBy(() -> b.remove("configured")).isInstanceOf(IllegalStateException.class)
            .hasMessageContaining("is configured with its task");
        assertThatThrownBy(() -> b.put(Schedule.of("configured", "report", "@hourly")))
            .isInstanceOf(IllegalStateException.class).hasMessageContaining("is configured with its task");
        assertThatThrownBy(() -> b.put(Schedule.of("unknown", "no-such-task", "@hourly")))
            .isInstanceOf(UnknownTaskException.class);
        assertThat(b.remove("nightly-digest")).isTrue();
        assertThat(a.list()).extracting(each -> each.schedule().name()).doesNotContain("nightly-digest");
    }

    /**
     * The day clocks go back in Amsterdam (25 October 2026, 03:00 CEST becomes 02:00 CET), the
     * schedulers' clock moved through it five minutes at a time with two nodes firing at each step:
     * the daily 02:30 fires once, at its first occurrence; the hourly schedule fires 25 times, the
     * repeated 02:00 twice.
     */
    @Test
    void onTheDayClocksGoBackTwoNodesFireADailyTimeOnceAndAnHourlySchedule25Times() throws Exception {
        Map<Instant, Instant> firedAt = fireThroughTheDay(LocalDate.of(2026, 10, 25));

        assertThat(slotsOf("daily-0230")).containsExactly("2026-10-25T00:30:00Z");
        assertThat(Instant.parse("2026-10-25T00:30:00Z").atZone(AMSTERDAM).toString())
            .isEqualTo("2026-10-25T02:30+02:00[Europe/Amsterdam]");
        List<String> hourly = slotsOf("hourly");
        assertThat(hourly).hasSize(25).doesNotHaveDuplicates()
            .contains("2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z")
            .containsAll(hourlySlots("2026-10-24T22:00:00Z", 25));
        assertEachSlotFiredOnceAtTheFirstStepReachingIt(firedAt, 26);
    }

    /**
     * The day clocks go forward in Amsterdam (29 March 2026, 02:00 CET becomes 03:00 CEST), moved
     * through as above: the daily 02:30, which does not exist that day, fires once as late as the
     * jump (03:30 CEST); the hourly schedule fires 23 times.
     */
    @Test
    void onTheDayClocksGoForwardTwoNodesFireADailyTimeAtTheJumpAndAnHourlySchedule23Times() throws Exception {
        Map<Instant, Instant> firedAt = fireThroughTheDay(LocalDate.of(2026, 3, 29));

        assertThat(slotsOf("daily-0230")).containsExactly("2026-03-29T01:30:00Z");
        assertThat(Instant.parse("2026-03-29T01:30:00Z").atZone(AMSTERDAM).toString())
            .isEqualTo("2026-03-29T03:30+02:00[Europe/Amsterdam]");
        List<String> hourly = slotsOf("hourly");
        assertThat(hourly).hasSize(23).doesNotHaveDuplicates()
            .containsAll(hourlySlots("2026-03-28T23:00:00Z", 23));
        assertEachSlotFiredOnceAtTheFirstStepReachingIt(firedAt, 24);
    }

    /** {@code count} instants an hour apart from {@code first}, as text. */
    private static List<String> hourlySlots(String first, int count) {
        return IntStream.range(0, count)
            .mapToObj(hour -> Instant.parse(first).plus(Duration.ofHours(hour)).toString())
            .toList();
    }

    @Test
    void theSchedulerThreadFiresEachSlotOnTime() {
        Scheduler node = node(java.time.Clock.systemUTC());
        node.configure(List.of(Schedule.of("every-second", "report", "* * * * * *")), List.of("report"));
        node.start();
        try {
            await().atMost(Duration.ofSeconds(10)).until(() -> jobs("report").size() >= 3);
        }
        finally {
            node.stop();
        }
        // Each job enqueued within a fraction of a second of its slot.
        assertThat(jobs("report")).allSatisfy(job -> assertThat(Duration.between(Instant.parse(job.slot()), job.createdAt()))
            .isLessThan(Duration.ofMillis(900)));
    }

    /**
     * Configures a daily 02:30 and an hourly schedule in Europe/Amsterdam just before a day starts,
     * then moves the clock through the day in steps of {@link #STEP} (a second past each step, so
     * that no step falls on a slot), two nodes firing at once at each step.
     * @return for each slot fired, the clock's time at the step that fired it
     */
    private Map<Instant, Instant> fireThroughTheDay(LocalDate day) throws Exception {
        Instant start = day.atStartOfDay(AMSTERDAM).toInstant();
        Instant end = day.plusDays(1).atStartOfDay(AMSTERDAM).toInstant();
        this.clock.set(start.minus(STEP).plusSeconds(1));
        List<Scheduler> nodes = List.of(node(), node());
        nodes.get(0).configure(List.of(Schedule.of("daily-0230", "report", "0 30 2 * * *").withZone(AMSTERDAM),
                Schedule.of("hourly", "report", "0 0 * * * *").withZone(AMSTERDAM)), List.of("report"));
        Map<Instant, Instant> firedAt = new HashMap<>();
        ExecutorService threads = Executors.newFixedThreadPool(nodes.size());
        try {
            for (Instant now = this.clock.instant().plus(STEP); now.isBefore(end); now = now.plus(STEP)) {
                this.clock.set(now);
                List<Future<List<EnqueueResult>>> fired = new ArrayList<>();
                for (Scheduler node : nodes) {
                    fired.add(threads.submit(node::fireDue));
                }
                for (Future<List<EnqueueResult>> each : fired) {
                    for (EnqueueResult job : each.get()) {
                        Instant slot = Instant.parse(queue.jdbc().queryForObject("SELECT headers ->> ? FROM "
                                + queue.config().schema() + ".job WHERE id = ?", String.class, Schedules.SLOT_HEADER,
                                job.jobId()));
                        assertThat(firedAt.put(slot, now)).as("slot %s fired once", slot).isNull();
                    }
                }
            }
        }
        finally {
            threads.shutdown();
        }
        return firedAt;
    }

    /** Each slot fired at the first step at or after it, with a dedup key of its own. */
    private static void assertEachSlotFiredOnceAtTheFirstStepReachingIt(Map<Instant, Instant> firedAt, int slots) {
        assertThat(firedAt).hasSize(slots).allSatisfy((slot, at) -> assertThat(at).isAfterOrEqualTo(slot)
            .isBefore(slot.plus(STEP)));
        List<Job> jobs = jobs("report");
        assertThat(jobs).hasSize(slots).allSatisfy(job -> assertThat(job.scheduleTime()).isEqualTo(Instant.parse(job.slot())));
        assertThat(queue.jdbc().queryForList("SELECT dedup_key FROM " + queue.config().schema() + ".job WHERE task = 'report'",
                String.class)).hasSize(slots).doesNotHaveDuplicates()
            .allSatisfy(key -> assertThat(key).matches("schedule:(daily-0230|hourly):\\d+"));
    }

    private Scheduler node() {
        return node(this.clock);
    }

    /** A node's scheduler: the engine of a queue on the class's database, with its clock. */
    private static Scheduler node(java.time.Clock clock) {
        return Engines.of(PgQueue.builder(queue.dataSource()).config(queue.config())
            .tasks(TaskRegistry.of(REPORT, DIGEST, TYPED)).clock(clock).build()).scheduler();
    }

    private ScheduleInfo info(String name) {
        return node().list().stream().filter(each -> each.schedule().name().equals(name)).findFirst().orElseThrow();
    }

    private static List<String> slotsOf(String schedule) {
        return jobs("report").stream().filter(job -> schedule.equals(job.schedule())).map(Job::slot).toList();
    }

    /** A scheduled job as stored. */
    private record Job(String schedule, String slot, Instant scheduleTime, Instant createdAt, String payload) {
    }

    /** The task's active jobs, by slot. */
    private static List<Job> jobs(String task) {
        return queue.jdbc().query("SELECT headers ->> 'pgqueue.schedule' AS schedule, headers ->> 'pgqueue.schedule.slot' AS slot, "
                + "schedule_time, created_at, CAST(payload AS text) AS payload FROM " + queue.config().schema()
                + ".job WHERE task = ? ORDER BY 2", (rs, row) -> new Job(rs.getString("schedule"), rs.getString("slot"),
                        rs.getTimestamp("schedule_time").toInstant(), rs.getTimestamp("created_at").toInstant(),
                        rs.getString("payload")), task);
    }
}
