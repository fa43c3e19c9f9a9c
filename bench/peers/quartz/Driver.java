// Quartz 2.3.2 (Debian libquartz2-java, Java 17) in the driver protocol (bench/README.md):
//   java -cp CLASSPATH Driver --workload W --jobs N --concurrency C --url postgres://user:pass@host:port/db
//        [--deadline S] [--rate R] [--spread S --lead L --pending P] [--batch B]
// prints one JSON line on stdout. Unknown arguments are ignored.
//
// Settings (Quartz's configuration reference, "Configure JDBC-JobStoreTX" and "Configure Clustering",
// and its tuning notes for throughput): JobStoreTX with PostgreSQLDelegate, isClustered=true
// (instanceId AUTO, default clusterCheckinInterval), SimpleThreadPool threadCount = C (10),
// org.quartz.scheduler.batchTriggerAcquisitionMaxCount = C (the documented throughput setting:
// acquire and fire up to C triggers per lock round-trip), the data source's maxConnections =
// C + 3 (the docs: at least the thread count plus a few for the scheduler's own threads),
// default c3p0 pool, every other setting at its default (idleWaitTime 30 s, batchTriggerAcquisition-
// FireAheadTimeWindow 0, lockOnInsert true).
// misfireThreshold: drain raises it to one hour, because its triggers are all due when the
// scheduler starts and must fire, not go through the misfire handler because enqueueing N of them
// took longer than 60 s. steady and timers keep Quartz's default (60 s): a trigger more than 60 s
// late goes through the misfire handler (SimpleTrigger's smart policy = fire now); lateness is
// measured against the trigger's start time (the due instant it was scheduled for), which the
// misfire handler does not change, so such a trigger's lateness is still start - due.
// Schema: Quartz's own tables_postgres.sql (read from the quartz jar), with the table prefix
// KB_QRTZ_ in place of QRTZ_.
//
// Jobs and triggers use Quartz's DEFAULT group (no group given), as plain API use does.
//
// Workloads (WORKLOADS below):
//   drain  — one durable JobDetail of the no-op job class shared by N SimpleTriggers firing once
//            now, stored while the scheduler is in standby as the pending timers are (the first
//            by scheduleJob, the rest by a checked INSERT ... SELECT, see insertTriggers(), then
//            ANALYZE); timed from scheduler.start() until a
//            JobListener has counted N completions and the trigger and fired-trigger rows are gone,
//            or until --deadline.
//   steady — scheduler started first; one enqueuer thread, every 10 ms, stores all triggers whose
//            due time (t0 + i/R) has come with one scheduleJobs call (SimpleTrigger startAt = due,
//            one shared durable JobDetail), ANALYZE once 1,000 are stored (see analyze());
//            lateness = handler start - trigger start time (= due).
//   timers — P pending SimpleTriggers due now + 24 h + i ms on one durable JobDetail whose job
//            class fails the run if it ever executes: the first through scheduleJob(), the other
//            P - 1 by INSERT ... SELECT generate_series into KB_QRTZ_TRIGGERS and
//            KB_QRTZ_SIMPLE_TRIGGERS writing the columns scheduleJob wrote for the first (compared
//            column by column first; the driver fails on a difference), bulk-loaded (see
//            insertPending()), then ANALYZE; then scheduler.start(); then N triggers due
//            T0 + i*spread/N (T0 = start of this insertion + lead) stored in due order by
//            scheduleJobs calls of --batch triggers (default 1,000) on one shared durable JobDetail.
//
// What Quartz 2.3.2 does on PostgreSQL, seen here: its trigger acquisition
// (StdJDBCDelegate.selectTriggerToAcquire) binds the NEXT_FIRE_TIME bounds with setBigDecimal, so
// PostgreSQL compares NEXT_FIRE_TIME::numeric and no index on NEXT_FIRE_TIME applies: every
// acquisition reads and sorts all WAITING triggers (quartz-scheduler/quartz#612), under the
// TRIGGER_ACCESS row lock that every store, fire and completion also takes. Its cost grows with
// the triggers waiting — the N of a drain, the 1,000,000 pending of timers.
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Date;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

import org.quartz.Job;
import org.quartz.JobBuilder;
import org.quartz.JobDetail;
import org.quartz.JobExecutionContext;
import org.quartz.JobExecutionException;
import org.quartz.Scheduler;
import org.quartz.SimpleScheduleBuilder;
import org.quartz.Trigger;
import org.quartz.TriggerBuilder;
import org.quartz.impl.StdSchedulerFactory;
import org.quartz.listeners.JobListenerSupport;

public class Driver {
    static final String VERSION = "2.3.2";
    static final String PREFIX = "KB_QRTZ_";
    static final String SCHED_NAME = "kairos-bench";
    static final long DEFAULT_MISFIRE_MS = 60_000; // Quartz's default org.quartz.jobStore.misfireThreshold
    static final long DRAIN_MISFIRE_MS = 3_600_000;
    static final AtomicLong DONE = new AtomicLong();
    static final AtomicLong FAILED = new AtomicLong();
    static final AtomicLong LAST_DONE_MS = new AtomicLong();
    static final AtomicLong PENDING_RAN = new AtomicLong();
    static final AtomicLong DUPLICATES = new AtomicLong();
    static final AtomicLong MISFIRED = new AtomicLong(); // fired at a time other than the one scheduled
    // Per recorded job i: handler start (epoch ms), 0 = not started. Set only before the deadline.
    static AtomicLongArray starts;
    static long[] due; // per recorded job i: its due instant (epoch ms), the trigger's startAt
    static final AtomicLong WRONG_DUE = new AtomicLong();
    static volatile long recordUntilMs = Long.MAX_VALUE;

    public static class Noop implements Job {
        public void execute(JobExecutionContext ctx) throws JobExecutionException {
        }
    }

    // steady / timers: trigger name = the job's index i; records the handler start.
    public static class Rec implements Job {
        public void execute(JobExecutionContext ctx) throws JobExecutionException {
            long now = System.currentTimeMillis();
            if (now > recordUntilMs) return;
            Trigger t = ctx.getTrigger();
            int i = Integer.parseInt(t.getKey().getName());
            if (!starts.compareAndSet(i, 0, now)) DUPLICATES.incrementAndGet();
            if (t.getStartTime().getTime() != due[i]) WRONG_DUE.incrementAndGet();
            if (ctx.getScheduledFireTime().getTime() != t.getStartTime().getTime()) MISFIRED.incrementAndGet();
        }
    }

    // timers: the job of the pending triggers, which must never run.
    public static class Pending implements Job {
        public void execute(JobExecutionContext ctx) throws JobExecutionException {
            PENDING_RAN.incrementAndGet();
            System.err.println("quartz driver: a pending timer ran: " + ctx.getTrigger().getKey());
        }
    }

    static String workload = "drain";
    static long jobs = 100_000;
    static int concurrency = 10;
    static String url;
    static double deadline = -1; // seconds; < 0 = workload default
    static double rate = 1000;
    static double spread = 60, lead = 10;
    static long pending = 1_000_000;
    static int batch = -1; // scheduleJobs batch for timers; < 0 = default

    static final Map<String, Callable<String>> WORKLOADS = new LinkedHashMap<>();
    static {
        WORKLOADS.put("drain", Driver::drain);
        WORKLOADS.put("steady", Driver::steady);
        WORKLOADS.put("timers", Driver::timers);
        // The scheduler workload is the timers one without pending triggers: N one-shot
        // SimpleTriggers due over the spread (bench/README.md).
        WORKLOADS.put("scheduler", Driver::timers);
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < args.length; i++) {
            if (!args[i].startsWith("--")) continue;
            String k = args[i].substring(2);
            String v = (i + 1 < args.length && !args[i + 1].startsWith("--")) ? args[++i] : "";
            switch (k) {
                case "workload": workload = v; break;
                case "jobs": jobs = Long.parseLong(v); break;
                case "concurrency": concurrency = Math.max(1, Integer.parseInt(v)); break;
                case "url": url = v; break;
                case "deadline": deadline = Double.parseDouble(v); break;
                case "rate": rate = Double.parseDouble(v); break;
                case "spread": spread = Double.parseDouble(v); break;
                case "lead": lead = Double.parseDouble(v); break;
                case "pending": pending = Long.parseLong(v); break;
                case "batch": batch = Integer.parseInt(v); break;
                default: break; // unknown arguments are ignored
            }
        }
        if (url == null) throw new IllegalArgumentException("--url URL");
        Callable<String> f = WORKLOADS.get(workload);
        if (f == null) {
            System.out.println("{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"" + workload
                    + "\", \"error\": \"not yet implemented\"}");
            return;
        }
        String out;
        try {
            out = f.call();
        } catch (Throwable e) {
            e.printStackTrace();
            System.err.flush();
            System.exit(1); // Quartz's threads would keep the JVM alive
            return;
        }
        System.out.println(out);
        System.out.flush();
        System.exit(0);
    }

    // ---------------------------------------------------------------------------------------------
    // Common: connection, schema, scheduler.
    // ---------------------------------------------------------------------------------------------

    // postgres://user:pass@host:port/db -> {jdbc url, user, password}
    static String[] jdbc(String u) {
        URI uri = URI.create(u);
        String user = "", pass = "";
        if (uri.getUserInfo() != null) {
            String[] up = uri.getUserInfo().split(":", 2);
            user = up[0];
            pass = up.length > 1 ? up[1] : "";
        }
        int port = uri.getPort() < 0 ? 5432 : uri.getPort();
        return new String[]{"jdbc:postgresql://" + uri.getHost() + ":" + port + uri.getPath(), user, pass};
    }

    static Connection connect() throws Exception {
        String[] j = jdbc(url);
        Connection c = DriverManager.getConnection(j[0], j[1], j[2]);
        c.setAutoCommit(true);
        return c;
    }

    static void createTables(Connection c) throws Exception {
        String sql;
        try (InputStream in = Scheduler.class.getResourceAsStream("/org/quartz/impl/jdbcjobstore/tables_postgres.sql")) {
            if (in == null) throw new IllegalStateException("tables_postgres.sql not found in the quartz jar");
            sql = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        StringBuilder b = new StringBuilder();
        for (String line : sql.split("\n")) {
            if (!line.trim().startsWith("--")) b.append(line).append('\n');
        }
        try (Statement s = c.createStatement()) {
            for (String stmt : b.toString().replace("QRTZ_", PREFIX).split(";")) {
                String t = stmt.trim();
                if (t.isEmpty() || t.equalsIgnoreCase("commit")) continue;
                s.execute(t);
            }
        }
    }

    static long count(Connection c, String sql) throws Exception {
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            return r.getLong(1);
        }
    }

    static Scheduler scheduler(long misfireMs) throws Exception {
        String[] j = jdbc(url);
        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", SCHED_NAME);
        p.setProperty("org.quartz.scheduler.instanceId", "AUTO");
        p.setProperty("org.quartz.scheduler.skipUpdateCheck", "true");
        p.setProperty("org.quartz.scheduler.batchTriggerAcquisitionMaxCount", Integer.toString(concurrency));
        p.setProperty("org.quartz.threadPool.class", "org.quartz.simpl.SimpleThreadPool");
        p.setProperty("org.quartz.threadPool.threadCount", Integer.toString(concurrency));
        p.setProperty("org.quartz.jobStore.class", "org.quartz.impl.jdbcjobstore.JobStoreTX");
        p.setProperty("org.quartz.jobStore.driverDelegateClass", "org.quartz.impl.jdbcjobstore.PostgreSQLDelegate");
        p.setProperty("org.quartz.jobStore.dataSource", "bench");
        p.setProperty("org.quartz.jobStore.tablePrefix", PREFIX);
        p.setProperty("org.quartz.jobStore.isClustered", "true");
        p.setProperty("org.quartz.jobStore.misfireThreshold", Long.toString(misfireMs));
        p.setProperty("org.quartz.dataSource.bench.driver", "org.postgresql.Driver");
        p.setProperty("org.quartz.dataSource.bench.URL", j[0]);
        p.setProperty("org.quartz.dataSource.bench.user", j[1]);
        p.setProperty("org.quartz.dataSource.bench.password", j[2]);
        p.setProperty("org.quartz.dataSource.bench.maxConnections", Integer.toString(concurrency + 3));
        Scheduler sched = new StdSchedulerFactory(p).getScheduler();
        sched.getListenerManager().addJobListener(new JobListenerSupport() {
            public String getName() {
                return "bench-counter";
            }

            public void jobWasExecuted(JobExecutionContext ctx, JobExecutionException e) {
                if (e != null) FAILED.incrementAndGet();
                if (System.currentTimeMillis() > recordUntilMs) return;
                LAST_DONE_MS.accumulateAndGet(System.currentTimeMillis(), Math::max);
                DONE.incrementAndGet();
            }
        });
        return sched;
    }

    static String settings(long misfireMs, String extra) {
        return "{\"jobStore\": \"JobStoreTX\", \"driverDelegateClass\": \"PostgreSQLDelegate\""
                + ", \"isClustered\": true, \"threadCount\": " + concurrency
                + ", \"batchTriggerAcquisitionMaxCount\": " + concurrency
                + ", \"maxConnections\": " + (concurrency + 3)
                + ", \"misfireThreshold_ms\": " + misfireMs + ", \"tablePrefix\": \"" + PREFIX + "\""
                + ", \"connectionProvider\": \"c3p0 (default)\"" + extra + "}";
    }

    static double r3(double x) {
        return Math.round(x * 1000) / 1000.0;
    }

    static double r1(double x) {
        return Math.round(x * 10) / 10.0;
    }

    static String deadlineJson(double d) {
        return Double.isInfinite(d) ? "null" : Double.toString(d);
    }

    // Lateness of job i = its handler start - due[i]; a job not started by the deadline counts
    // deadline - due[i]. Returns the JSON fields lateness_p50/p99/max_ms and lateness_hist.
    static final long[] UPPERS = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000};

    static String lateness(long[] due, long deadlineMs, long[] notStarted) {
        int n = due.length;
        long[] late = new long[n];
        long missing = 0;
        for (int i = 0; i < n; i++) {
            long s = starts.get(i);
            if (s == 0 || s > deadlineMs) {
                missing++;
                s = deadlineMs;
            }
            late[i] = s - due[i];
        }
        notStarted[0] = missing;
        if (n == 0) return "\"lateness_p50_ms\": null, \"lateness_p99_ms\": null, \"lateness_max_ms\": null, \"lateness_hist\": []";
        long[] sorted = late.clone();
        Arrays.sort(sorted);
        long[] counts = new long[UPPERS.length + 1];
        for (long l : sorted) {
            int b = 0;
            while (b < UPPERS.length && l > UPPERS[b]) b++;
            counts[b]++;
        }
        StringBuilder h = new StringBuilder("[");
        for (int b = 0; b <= UPPERS.length; b++) {
            if (b > 0) h.append(", ");
            h.append('[').append(b < UPPERS.length ? Long.toString(UPPERS[b]) : "null").append(", ").append(counts[b]).append(']');
        }
        h.append(']');
        return "\"lateness_p50_ms\": " + pct(sorted, 0.50) + ", \"lateness_p99_ms\": " + pct(sorted, 0.99)
                + ", \"lateness_max_ms\": " + sorted[n - 1] + ", \"lateness_hist\": " + h;
    }

    static long pct(long[] sorted, double q) { // nearest rank
        int k = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, k))];
    }

    static SimpleScheduleBuilder once() {
        return SimpleScheduleBuilder.simpleSchedule(); // repeat count 0, default (smart) misfire policy
    }

    static void sleepUntil(long epochMs) throws InterruptedException {
        long d = epochMs - System.currentTimeMillis();
        if (d > 0) Thread.sleep(d);
    }

    // ANALYZE of Quartz's tables. On a fresh schema PostgreSQL has no statistics for them, and its
    // planner then serves Quartz's by-name lookups (`... WHERE SCHED_NAME = ? AND TRIGGER_NAME = ?
    // AND TRIGGER_GROUP = ?`, the foreign-key checks of KB_QRTZ_SIMPLE_TRIGGERS) from
    // IDX_QRTZ_T_N_G_STATE (SCHED_NAME, TRIGGER_GROUP, TRIGGER_STATE), reading every trigger of the
    // group to filter it by name: each lookup costs O(triggers in the group), so storing N triggers
    // in one transaction is quadratic (20,000 took 207 s on the 2-core machine). A Quartz database
    // in service has been analyzed by autovacuum, after which the planner uses the primary key; the
    // driver does it at a fixed point instead of whenever autovacuum wakes up (it cannot see rows
    // of a transaction still open, and analyzing an empty table does not help).
    static void analyze(Connection c) throws Exception {
        try (Statement s = c.createStatement()) {
            s.execute("ANALYZE " + PREFIX + "JOB_DETAILS, " + PREFIX + "TRIGGERS, " + PREFIX + "SIMPLE_TRIGGERS");
        }
    }

    static final long WARMUP = 1000;

    // ---------------------------------------------------------------------------------------------
    // drain
    // ---------------------------------------------------------------------------------------------
    static String drain() throws Exception {
        double dl = deadline > 0 ? deadline : Double.POSITIVE_INFINITY;
        Connection c = connect();
        createTables(c);
        Scheduler sched = scheduler(DRAIN_MISFIRE_MS);

        long e0 = System.nanoTime();
        JobDetail job = JobBuilder.newJob(Noop.class).withIdentity("drain").storeDurably().build();
        sched.addJob(job, false);
        // All N due now, written the way the timers' pending triggers are (insertTriggers: the
        // first by the API, the rest by a checked INSERT ... SELECT): scheduleJobs took 77 s for
        // 100,000 here, which only lengthened the run (the drain is timed from start()).
        insertTriggers(c, sched, job, "t", System.currentTimeMillis(), 0, jobs);
        double enqueueSecs = (System.nanoTime() - e0) / 1e9;
        System.err.printf("quartz drain: enqueued %d in %.1f s%n", jobs, enqueueSecs);

        long t0 = System.nanoTime();
        long deadlineNs = Double.isInfinite(dl) ? Long.MAX_VALUE : t0 + (long) (dl * 1e9);
        sched.start();
        boolean partial = false;
        while (DONE.get() < jobs) {
            if (System.nanoTime() >= deadlineNs) {
                partial = true;
                break;
            }
            Thread.sleep(2);
        }
        String left = "SELECT (SELECT count(*) FROM " + PREFIX + "TRIGGERS) + (SELECT count(*) FROM " + PREFIX
                + "FIRED_TRIGGERS)";
        while (!partial && count(c, left) > 0) {
            if (System.nanoTime() >= deadlineNs) {
                partial = true;
                break;
            }
            Thread.sleep(5);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        long done = DONE.get();
        if (partial) {
            recordUntilMs = 0; // completions after the deadline are not counted
            done = DONE.get();
            secs = Math.min(secs, dl);
        }
        sched.standby();
        c.close();
        if (FAILED.get() > 0) throw new IllegalStateException(FAILED.get() + " jobs failed");
        return "{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"drain\", \"jobs\": " + jobs
                + ", \"completed\": " + done + ", \"partial\": " + partial
                + ", \"seconds\": " + r3(secs)
                + ", \"jobs_per_s\": " + r1(done / secs)
                + ", \"enqueue_per_s\": " + r1(jobs / enqueueSecs)
                + ", \"lateness_p50_ms\": null, \"lateness_p99_ms\": null"
                + ", \"settings\": " + settings(DRAIN_MISFIRE_MS,
                ", \"deadline_s\": " + deadlineJson(dl)
                        + ", \"enqueue\": \"" + pendingPath + " (all due now), before start()\"")
                + "}";
    }

    // ---------------------------------------------------------------------------------------------
    // steady
    // ---------------------------------------------------------------------------------------------
    static String steady() throws Exception {
        int n = (int) jobs;
        double dl = deadline > 0 ? deadline : n / rate + 10;
        starts = new AtomicLongArray(n);
        due = new long[n];
        Connection c = connect();
        createTables(c);
        Scheduler sched = scheduler(DEFAULT_MISFIRE_MS);
        JobDetail job = JobBuilder.newJob(Rec.class).withIdentity("steady").storeDurably().build();
        sched.addJob(job, false);

        long w0 = System.currentTimeMillis();
        sched.start();
        long deadlineMs = w0 + (long) (dl * 1000);
        long t0 = System.currentTimeMillis();
        for (int i = 0; i < n; i++) due[i] = t0 + (long) Math.floor(i * 1000.0 / rate);

        AtomicReference<Throwable> enqErr = new AtomicReference<>();
        AtomicLong enqueued = new AtomicLong();
        AtomicLong maxEnqLag = new AtomicLong();
        AtomicLong batches = new AtomicLong();
        Thread enq = new Thread(() -> {
            try {
                int next = 0;
                long tick = t0;
                boolean analyzed = false;
                while (next < n && System.currentTimeMillis() < deadlineMs) {
                    long now = System.currentTimeMillis();
                    Set<Trigger> ts = new LinkedHashSet<>();
                    int first = next;
                    while (next < n && due[next] <= now) {
                        ts.add(TriggerBuilder.newTrigger().withIdentity(Integer.toString(next)).forJob(job)
                                .startAt(new Date(due[next])).withSchedule(once()).build());
                        next++;
                    }
                    if (!ts.isEmpty()) {
                        Map<JobDetail, Set<? extends Trigger>> m = new HashMap<>();
                        m.put(job, ts);
                        sched.scheduleJobs(m, true); // replace=true: the shared job already exists
                        enqueued.set(next);
                        batches.incrementAndGet();
                        if (!analyzed && next >= Math.min(n, WARMUP)) {
                            analyze(c); // see analyze()
                            analyzed = true;
                        }
                        maxEnqLag.accumulateAndGet(System.currentTimeMillis() - due[first], Math::max);
                    }
                    tick += 10;
                    if (tick < System.currentTimeMillis() - 10) tick = System.currentTimeMillis();
                    sleepUntil(tick);
                }
            } catch (Throwable e) {
                enqErr.set(e);
            }
        }, "enqueuer");
        enq.setDaemon(true);
        enq.start();

        while (DONE.get() < n && System.currentTimeMillis() < deadlineMs && enqErr.get() == null) Thread.sleep(2);
        boolean partial = DONE.get() < n;
        if (partial) recordUntilMs = deadlineMs;
        long end = partial ? deadlineMs : LAST_DONE_MS.get();
        long done = DONE.get();
        if (enqErr.get() != null) throw new RuntimeException("enqueue failed", enqErr.get());
        sched.standby();
        long[] notStarted = new long[1];
        String late = lateness(due, deadlineMs, notStarted);
        c.close();
        if (FAILED.get() > 0) throw new IllegalStateException(FAILED.get() + " jobs failed");
        if (DUPLICATES.get() > 0) throw new IllegalStateException(DUPLICATES.get() + " triggers fired twice");
        if (WRONG_DUE.get() > 0) throw new IllegalStateException(WRONG_DUE.get() + " triggers fired with a start time not their due");
        double secs = (end - t0) / 1000.0;
        return "{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"steady\", \"jobs\": " + n
                + ", \"completed\": " + done + ", \"partial\": " + partial
                + ", \"seconds\": " + r3(secs)
                + ", \"jobs_per_s\": " + r1(done / secs)
                + ", " + late
                + ", \"not_started\": " + notStarted[0] + ", \"enqueued\": " + enqueued.get()
                + ", \"enqueue_lag_max_ms\": " + maxEnqLag.get()
                + ", \"settings\": " + settings(DEFAULT_MISFIRE_MS,
                ", \"rate\": " + rate + ", \"deadline_s\": " + dl
                        + ", \"enqueue\": \"every 10 ms one scheduleJobs(Map, replace=true) call with the SimpleTriggers due by then (startAt = due), all on one shared durable JobDetail\""
                        + ", \"enqueue_calls\": " + batches.get()
                        + ", \"lateness\": \"handler start - trigger start time (= due), epoch ms\""
                        + ", \"jobs_per_s\": \"completed / (last completion, or the deadline, - t0)\"")
                + "}";
    }

    // ---------------------------------------------------------------------------------------------
    // timers
    // ---------------------------------------------------------------------------------------------
    // The columns of trigger i (name prefix, job name, fire time base + i * step ms).
    static final String TRIGGER_COLS_SQL =
            "'" + SCHED_NAME + "', '%1$s' || lpad(i::text, 7, '0'), 'DEFAULT', '%2$s', 'DEFAULT', NULL::varchar, %3$d + i * %4$d, -1::bigint, 5, 'WAITING', "
                    + "'SIMPLE', %3$d + i * %4$d, 0::bigint, NULL::varchar, 0::smallint, ''::bytea";
    // Zero-padded names ("p0000000"): generate_series order is then the primary keys' order, and
    // the rows append to the right of the indexes instead of landing all over them.
    static final String SIMPLE_COLS_SQL = "'" + SCHED_NAME + "', '%1$s' || lpad(i::text, 7, '0'), 'DEFAULT', 0::bigint, 0::bigint, 0::bigint";

    static String pendingPath = "none";
    static long stageT0 = System.nanoTime();

    static void stage(String what) {
        System.err.printf("quartz %s: %s at %.1f s%n", workload, what, (System.nanoTime() - stageT0) / 1e9);
    }

    static String rowsOf(Connection c, String sql) throws Exception {
        StringBuilder b = new StringBuilder();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            ResultSetMetaData md = r.getMetaData();
            while (r.next()) {
                b.append('(');
                for (int k = 1; k <= md.getColumnCount(); k++) {
                    if (k > 1) b.append(", ");
                    b.append(md.getColumnName(k)).append('=').append(r.getString(k));
                }
                b.append(')');
            }
        }
        return b.toString();
    }

    static List<String[]> rows(Connection c, String sql) throws Exception {
        List<String[]> out = new ArrayList<>();
        try (Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            int n = r.getMetaData().getColumnCount();
            while (r.next()) {
                String[] row = new String[n];
                for (int k = 0; k < n; k++) row[k] = r.getString(k + 1);
                out.add(row);
            }
        }
        return out;
    }

    static boolean same(List<String[]> a, List<String[]> b) {
        if (a.size() != b.size()) return false;
        for (int k = 0; k < a.size(); k++) if (!Arrays.equals(a.get(k), b.get(k))) return false;
        return true;
    }

    // The pending timers (job "pending", triggers p0000000… due base + i ms, a day ahead).
    static double insertPending(Connection c, Scheduler sched, long base) throws Exception {
        JobDetail pj = JobBuilder.newJob(Pending.class).withIdentity("pending").storeDurably().build();
        sched.addJob(pj, false);
        return insertTriggers(c, sched, pj, "p", base, 1, pending);
    }

    // `count` one-shot SimpleTriggers of `job`, named prefix + 7 digits, trigger i firing at
    // base + i * step ms: the first through the API, then a check that the INSERT ... SELECT
    // writes exactly that row for i = 0, then the others by SQL (PostgreSQL's bulk-loading
    // advice, below). Returns seconds taken.
    static double insertTriggers(Connection c, Scheduler sched, JobDetail pj, String prefix, long base, long step,
                                 long count) throws Exception {
        long p0 = System.nanoTime();
        stageT0 = p0;
        if (count <= 0) return 0;
        if (count > 10_000_000) throw new IllegalArgumentException("more than 10,000,000 triggers (7-digit names)");
        String job = pj.getKey().getName();
        sched.scheduleJob(TriggerBuilder.newTrigger().withIdentity(prefix + "0000000").forJob(pj)
                .startAt(new Date(base)).withSchedule(once()).build());
        String trig = String.format(TRIGGER_COLS_SQL, prefix, job, base, step);
        String simple = String.format(SIMPLE_COLS_SQL, prefix);
        String[][] checks = {
                {"SELECT * FROM " + PREFIX + "TRIGGERS WHERE JOB_NAME = '" + job + "'",
                        "SELECT " + trig + " FROM generate_series(0, 0) i"},
                {"SELECT * FROM " + PREFIX + "SIMPLE_TRIGGERS WHERE TRIGGER_NAME = '" + prefix + "0000000'",
                        "SELECT " + simple + " FROM generate_series(0, 0) i"}};
        for (String[] chk : checks) {
            String diff = "(" + chk[0] + " EXCEPT " + chk[1] + ") UNION ALL (" + chk[1] + " EXCEPT " + chk[0] + ")";
            if (!rowsOf(c, diff).isEmpty()) {
                throw new IllegalStateException("the SQL insert would not write what scheduleJob wrote: API row "
                        + rowsOf(c, chk[0]) + " vs SQL row " + rowsOf(c, chk[1]));
            }
        }
        // PostgreSQL's bulk-loading advice ("Populating a Database"): the secondary indexes of the
        // two tables are dropped, the rows inserted, and the same indexes created again from their
        // own definitions (inserting 1,000,000 rows into KB_QRTZ_TRIGGERS's 12 indexes one by one
        // took 63 s; building them takes a few); the foreign-key checks are skipped the way
        // pg_restore --disable-triggers does it (session_replication_role = replica, superuser
        // only; otherwise the foreign keys are dropped and added again, which validates them). One
        // transaction, while the scheduler is in standby: nothing else touches the tables.
        String tables = "('" + (PREFIX + "TRIGGERS").toLowerCase() + "'::regclass, '"
                + (PREFIX + "SIMPLE_TRIGGERS").toLowerCase() + "'::regclass)";
        String idxSql = "SELECT indexrelid::regclass::text, pg_get_indexdef(indexrelid) FROM pg_index"
                + " WHERE indrelid IN " + tables + " AND NOT indisprimary ORDER BY 1";
        String fkSql = "SELECT conrelid::regclass::text, conname, pg_get_constraintdef(oid), convalidated FROM pg_constraint"
                + " WHERE contype = 'f' AND conrelid IN " + tables + " ORDER BY 1, 2";
        List<String[]> indexes = rows(c, idxSql), fks = rows(c, fkSql);
        boolean superuser = count(c, "SELECT count(*) FROM pg_roles WHERE rolname = current_user AND rolsuper") > 0;
        long ins1, ins2;
        c.setAutoCommit(false);
        try (Statement s = c.createStatement()) {
            if (superuser) {
                s.execute("SET LOCAL session_replication_role = replica");
            } else {
                for (String[] fk : fks) s.execute("ALTER TABLE " + fk[0] + " DROP CONSTRAINT " + fk[1]);
            }
            for (String[] ix : indexes) s.execute("DROP INDEX " + ix[0]);
            String range = " FROM generate_series(1, " + (count - 1) + ") i";
            ins1 = s.executeUpdate("INSERT INTO " + PREFIX + "TRIGGERS SELECT " + trig + range);
            ins2 = s.executeUpdate("INSERT INTO " + PREFIX + "SIMPLE_TRIGGERS SELECT " + simple + range);
            stage("rows inserted");
            for (String[] ix : indexes) s.execute(ix[1]);
            stage("indexes built");
            if (!superuser) {
                for (String[] fk : fks) s.execute("ALTER TABLE " + fk[0] + " ADD CONSTRAINT " + fk[1] + " " + fk[2]);
            }
        }
        c.commit();
        c.setAutoCommit(true);
        if (ins1 != count - 1 || ins2 != count - 1) {
            throw new IllegalStateException("bulk insert wrote " + ins1 + " + " + ins2 + " rows, not 2 x " + (count - 1));
        }
        if (!same(indexes, rows(c, idxSql)) || !same(fks, rows(c, fkSql))) {
            throw new IllegalStateException("the bulk insert left the schema changed");
        }
        analyze(c);
        stage("analyzed");
        pendingPath = "1 trigger by scheduleJob(), " + (count - 1) + " by INSERT ... SELECT generate_series into "
                + PREFIX + "TRIGGERS + " + PREFIX + "SIMPLE_TRIGGERS writing the columns of the API row (checked), in one"
                + " transaction with the tables' secondary indexes dropped before and built again after, "
                + (superuser ? "foreign-key checks off (session_replication_role = replica)" : "foreign keys dropped and added again")
                + ", then ANALYZE; one shared durable JobDetail; state WAITING, trigger i due at base + i * step ms";
        return (System.nanoTime() - p0) / 1e9;
    }

    static String timers() throws Exception {
        int n = (int) jobs;
        double dl = deadline > 0 ? deadline : lead + spread + 10;
        int b = batch > 0 ? batch : 1000;
        starts = new AtomicLongArray(n);
        due = new long[n];
        Connection c = connect();
        createTables(c);
        Scheduler sched = scheduler(DEFAULT_MISFIRE_MS);

        long base = System.currentTimeMillis() + 24L * 3600 * 1000;
        double pendingSecs = insertPending(c, sched, base);
        System.err.printf("quartz timers: %d pending inserted in %.1f s%n", pending, pendingSecs);

        JobDetail job = JobBuilder.newJob(Rec.class).withIdentity("timers").storeDurably().build();
        sched.addJob(job, false);

        long w0 = System.currentTimeMillis();
        sched.start();
        long deadlineMs = w0 + (long) (dl * 1000);
        long i0 = System.currentTimeMillis();
        long bigT0 = i0 + (long) (lead * 1000);
        long spreadMs = (long) (spread * 1000);
        for (int i = 0; i < n; i++) due[i] = bigT0 + (long) i * spreadMs / n;

        AtomicReference<Throwable> enqErr = new AtomicReference<>();
        AtomicLong enqueued = new AtomicLong();
        AtomicLong enqEnd = new AtomicLong();
        Thread enq = new Thread(() -> {
            try {
                for (int k = 0; k < n && System.currentTimeMillis() < deadlineMs; k += b) {
                    Set<Trigger> ts = new LinkedHashSet<>();
                    for (int i = k; i < Math.min(n, k + b); i++) {
                        ts.add(TriggerBuilder.newTrigger().withIdentity(Integer.toString(i)).forJob(job)
                                .startAt(new Date(due[i])).withSchedule(once()).build());
                    }
                    Map<JobDetail, Set<? extends Trigger>> m = new HashMap<>();
                    m.put(job, ts);
                    sched.scheduleJobs(m, true); // replace=true: the shared job already exists
                    enqueued.set(Math.min(n, k + b));
                }
                enqEnd.set(System.currentTimeMillis());
            } catch (Throwable e) {
                enqErr.set(e);
            }
        }, "enqueuer");
        enq.setDaemon(true);
        enq.start();

        while (DONE.get() < n && System.currentTimeMillis() < deadlineMs && enqErr.get() == null
                && PENDING_RAN.get() == 0) {
            Thread.sleep(2);
        }
        boolean partial = DONE.get() < n;
        if (partial) recordUntilMs = deadlineMs;
        long end = partial ? deadlineMs : LAST_DONE_MS.get();
        long done = DONE.get();
        if (enqErr.get() != null) throw new RuntimeException("enqueue failed", enqErr.get());
        sched.standby();
        long[] notStarted = new long[1];
        String late = lateness(due, deadlineMs, notStarted);
        long left = count(c, "SELECT count(*) FROM " + PREFIX + "TRIGGERS WHERE JOB_NAME = 'pending' AND TRIGGER_STATE = 'WAITING'");
        c.close();
        if (PENDING_RAN.get() > 0) throw new IllegalStateException(PENDING_RAN.get() + " pending timers ran");
        if (left != pending) throw new IllegalStateException("pending timers WAITING: " + left + ", expected " + pending);
        if (FAILED.get() > 0) throw new IllegalStateException(FAILED.get() + " jobs failed");
        if (DUPLICATES.get() > 0) throw new IllegalStateException(DUPLICATES.get() + " triggers fired twice");
        if (WRONG_DUE.get() > 0) throw new IllegalStateException(WRONG_DUE.get() + " triggers fired with a start time not their due");
        long ee = enqEnd.get();
        double enqSecs = ((ee > 0 ? ee : deadlineMs) - i0) / 1000.0;
        double secs = (end - bigT0) / 1000.0;
        return "{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"timers\", \"jobs\": " + n
                + ", \"completed\": " + done + ", \"partial\": " + partial
                + ", \"seconds\": " + r3(secs)
                + ", \"jobs_per_s\": " + r1(done / secs)
                + ", " + late
                + ", \"not_started\": " + notStarted[0] + ", \"misfired\": " + MISFIRED.get()
                + ", \"enqueued\": " + enqueued.get()
                + ", \"enqueue_per_s\": " + r1(enqueued.get() / enqSecs)
                + ", \"timers_insert_s\": " + (ee > 0 ? Double.toString(r3(enqSecs)) : "null")
                + ", \"pending_insert_s\": " + r3(pendingSecs)
                + ", \"settings\": " + settings(DEFAULT_MISFIRE_MS,
                ", \"spread_s\": " + spread + ", \"lead_s\": " + lead + ", \"pending\": " + pending
                        + ", \"deadline_s\": " + dl
                        + ", \"pending_insert\": \"" + pendingPath + "\""
                        + ", \"enqueue\": \"scheduleJobs(Map, replace=true) calls of " + b
                        + " SimpleTriggers (startAt = due) in due order on one shared durable JobDetail, after start()\""
                        + ", \"lateness\": \"handler start - trigger start time (= due), epoch ms\""
                        + ", \"jobs_per_s\": \"completed / (last completion, or the deadline, - T0)\"")
                + "}";
    }
}
