// Quartz 2.3.2 (Debian libquartz2-java, Java 17) on the drain workload, in the driver protocol:
//   java -cp CLASSPATH Driver --workload W --jobs N --concurrency C --url postgres://user:pass@host:port/db
// prints one JSON line on stdout.
//
// Settings (Quartz's configuration reference, "Configure JDBC-JobStoreTX" and "Configure Clustering",
// and its tuning notes for throughput): JobStoreTX with PostgreSQLDelegate, isClustered=true
// (instanceId AUTO, default clusterCheckinInterval), SimpleThreadPool threadCount = C (10),
// org.quartz.scheduler.batchTriggerAcquisitionMaxCount = C (the documented throughput setting:
// acquire and fire up to C triggers per lock round-trip), the data source's maxConnections =
// C + 3 (the docs: at least the thread count plus a few for the scheduler's own threads),
// default c3p0 pool. misfireThreshold is raised to one hour: the triggers of a drain are all due
// when the scheduler starts and must fire, not go through the misfire handler because enqueueing
// N of them took longer than the default 60 s.
// Schema: Quartz's own tables_postgres.sql (read from the quartz jar), with the table prefix
// KB_QRTZ_ in place of QRTZ_. Each job: a durable JobDetail of the no-op job class plus a
// SimpleTrigger firing once now, stored with scheduleJobs() in batches of 1,000 (one transaction
// each) while the scheduler is still in standby. Timed from scheduler.start() until a JobListener has counted N
// completions and the triggers and fired-trigger rows are gone from the database.
import java.io.InputStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

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
    static final int BATCH = 1000;
    static final AtomicLong DONE = new AtomicLong();
    static final AtomicLong FAILED = new AtomicLong();

    public static class Noop implements Job {
        public void execute(JobExecutionContext ctx) throws JobExecutionException {
        }
    }

    static String workload = "drain";
    static long jobs = 100_000;
    static int concurrency = 10;
    static String url;

    static final Map<String, Function<Void, String>> WORKLOADS = new HashMap<>();
    static {
        WORKLOADS.put("drain", v -> {
            try {
                return drain();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        });
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i + 1 < args.length; i += 2) {
            String k = args[i].replaceFirst("^--", ""), v = args[i + 1];
            switch (k) {
                case "workload": workload = v; break;
                case "jobs": jobs = Long.parseLong(v); break;
                case "concurrency": concurrency = Math.max(1, Integer.parseInt(v)); break;
                case "url": url = v; break;
                default: break;
            }
        }
        if (url == null) throw new IllegalArgumentException("--url URL");
        Function<Void, String> f = WORKLOADS.get(workload);
        if (f == null) {
            System.out.println("{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"" + workload
                    + "\", \"error\": \"not yet implemented\"}");
            return;
        }
        System.out.println(f.apply(null));
        System.out.flush();
        System.exit(0);
    }

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
        c.setAutoCommit(true);
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

    static String drain() throws Exception {
        String[] j = jdbc(url);
        Connection c = DriverManager.getConnection(j[0], j[1], j[2]);
        createTables(c);

        Properties p = new Properties();
        p.setProperty("org.quartz.scheduler.instanceName", "kairos-bench");
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
        p.setProperty("org.quartz.jobStore.misfireThreshold", "3600000");
        p.setProperty("org.quartz.dataSource.bench.driver", "org.postgresql.Driver");
        p.setProperty("org.quartz.dataSource.bench.URL", j[0]);
        p.setProperty("org.quartz.dataSource.bench.user", j[1]);
        p.setProperty("org.quartz.dataSource.bench.password", j[2]);
        p.setProperty("org.quartz.dataSource.bench.maxConnections", Integer.toString(concurrency + 3));
        StdSchedulerFactory factory = new StdSchedulerFactory(p);
        Scheduler sched = factory.getScheduler();
        sched.getListenerManager().addJobListener(new JobListenerSupport() {
            public String getName() {
                return "bench-counter";
            }

            public void jobWasExecuted(JobExecutionContext ctx, JobExecutionException e) {
                if (e != null) FAILED.incrementAndGet();
                DONE.incrementAndGet();
            }
        });

        long e0 = System.nanoTime();
        for (long i = 0; i < jobs; i += BATCH) {
            Map<JobDetail, Set<? extends Trigger>> batch = new HashMap<>();
            for (long k = i; k < Math.min(jobs, i + BATCH); k++) {
                JobDetail job = JobBuilder.newJob(Noop.class).withIdentity("j" + k, "bench").storeDurably().build();
                Set<Trigger> ts = new HashSet<>();
                ts.add(TriggerBuilder.newTrigger().withIdentity("t" + k, "bench").forJob(job).startNow()
                        .withSchedule(SimpleScheduleBuilder.simpleSchedule()).build());
                batch.put(job, ts);
            }
            sched.scheduleJobs(batch, false); // one transaction per batch
        }
        double enqueueSecs = (System.nanoTime() - e0) / 1e9;

        long t0 = System.nanoTime();
        sched.start();
        while (DONE.get() < jobs) {
            Thread.sleep(2);
        }
        String pending = "SELECT (SELECT count(*) FROM " + PREFIX + "TRIGGERS) + (SELECT count(*) FROM " + PREFIX
                + "FIRED_TRIGGERS)";
        while (count(c, pending) > 0) {
            Thread.sleep(5);
        }
        double secs = (System.nanoTime() - t0) / 1e9;
        sched.shutdown(false);
        c.close();
        if (FAILED.get() > 0) throw new IllegalStateException(FAILED.get() + " jobs failed");
        long done = DONE.get();
        return "{\"peer\": \"quartz\", \"version\": \"" + VERSION + "\", \"workload\": \"drain\", \"jobs\": " + done
                + ", \"seconds\": " + Math.round(secs * 1000) / 1000.0
                + ", \"jobs_per_s\": " + Math.round(done / secs * 10) / 10.0
                + ", \"enqueue_per_s\": " + Math.round(jobs / enqueueSecs * 10) / 10.0
                + ", \"lateness_p50_ms\": null, \"lateness_p99_ms\": null"
                + ", \"settings\": {\"jobStore\": \"JobStoreTX\", \"driverDelegateClass\": \"PostgreSQLDelegate\""
                + ", \"isClustered\": true, \"threadCount\": " + concurrency
                + ", \"batchTriggerAcquisitionMaxCount\": " + concurrency
                + ", \"maxConnections\": " + (concurrency + 3)
                + ", \"misfireThreshold_ms\": 3600000, \"tablePrefix\": \"" + PREFIX + "\""
                + ", \"connectionProvider\": \"c3p0 (default)\", \"enqueue_batch\": " + BATCH
                + "}}";
    }
}
