// The Quartz side of kairos-cron's differential test (crates/cron/tests/quartz_diff.rs).
//
// Reads lines "expr<TAB>zone<TAB>start_epoch_ms" on stdin and answers each with one line:
//   OK<TAB>t1,t2,...   the next fire times (epoch ms), getTimeAfter chained from start, with
//                      the expression's time zone set; fewer when getTimeAfter returns null
//   ERR<TAB>message    the constructor threw ParseException
//   CRASH<TAB>what     getTimeAfter threw (Quartz accepted an expression it cannot evaluate)
//   HANG<TAB>          no answer within the timeout (Quartz loops on some accepted expressions)
// Arguments: [count (default 5)] [timeout ms per line (default 2000)].
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.text.ParseException;
import java.util.Date;
import java.util.TimeZone;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.quartz.CronExpression;

public final class CronOracle {
    public static void main(String[] args) throws Exception {
        int count = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long timeoutMs = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, "UTF-8");
        ExecutorService pool = newPool();
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split("\t", -1);
            if (parts.length != 3) {
                out.println("ERR\tbad input line");
                continue;
            }
            Future<String> answer = pool.submit(() -> answer(parts[0], parts[1], Long.parseLong(parts[2]), count));
            String result;
            try {
                result = answer.get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                // The looping thread cannot be stopped; abandon it (a daemon) and go on.
                answer.cancel(true);
                pool.shutdownNow();
                pool = newPool();
                result = "HANG\t";
            } catch (ExecutionException e) {
                result = "CRASH\t" + oneLine(String.valueOf(e.getCause()));
            }
            out.println(result);
        }
        out.flush();
        System.exit(0);
    }

    private static String answer(String expr, String zone, long start, int count) {
        CronExpression cron;
        try {
            cron = new CronExpression(expr);
        } catch (ParseException e) {
            return "ERR\t" + oneLine(e.getMessage());
        }
        cron.setTimeZone(TimeZone.getTimeZone(zone));
        StringBuilder sb = new StringBuilder("OK\t");
        Date at = new Date(start);
        for (int i = 0; i < count; i++) {
            at = cron.getTimeAfter(at);
            if (at == null) {
                break;
            }
            if (i > 0) {
                sb.append(',');
            }
            sb.append(at.getTime());
        }
        return sb.toString();
    }

    private static ExecutorService newPool() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "cron-oracle");
            t.setDaemon(true);
            return t;
        });
    }

    private static String oneLine(String s) {
        return s == null ? "" : s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }
}
