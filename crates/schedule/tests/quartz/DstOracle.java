// Quartz 2.3.2's fire times for calendar-interval and daily-time-interval triggers, for
// tests/quartz_dst.rs. One case a line on stdin, tab-separated:
//   cal    ZONE START_MS UNIT INTERVAL
//   daily  ZONE START_MS START_HH:MM END_HH:MM UNIT INTERVAL
// (a daily time interval trigger has no zone in 2.3.2: it runs in the JVM's default zone, set
// per line). Answers one line each: the first N fire times as epoch ms, space-separated, or
// "ERR message".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.Date;
import java.util.TimeZone;
import org.quartz.DateBuilder.IntervalUnit;
import org.quartz.TimeOfDay;
import org.quartz.impl.triggers.CalendarIntervalTriggerImpl;
import org.quartz.impl.triggers.DailyTimeIntervalTriggerImpl;
import org.quartz.spi.OperableTrigger;

public class DstOracle {
    public static void main(String[] args) throws Exception {
        int n = Integer.parseInt(args[0]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        String line;
        while ((line = in.readLine()) != null) {
            try {
                System.out.println(answer(line.split("\t"), n));
            } catch (Exception e) {
                System.out.println("ERR " + e);
            }
            System.out.flush();
        }
    }

    static String answer(String[] f, int n) {
        TimeZone zone = TimeZone.getTimeZone(f[1]);
        Date start = new Date(Long.parseLong(f[2]));
        OperableTrigger t;
        if (f[0].equals("cal")) {
            CalendarIntervalTriggerImpl c = new CalendarIntervalTriggerImpl();
            c.setName("t");
            c.setTimeZone(zone);
            c.setStartTime(start);
            c.setRepeatIntervalUnit(IntervalUnit.valueOf(f[3]));
            c.setRepeatInterval(Integer.parseInt(f[4]));
            t = c;
        } else {
            TimeZone.setDefault(zone);
            DailyTimeIntervalTriggerImpl d = new DailyTimeIntervalTriggerImpl();
            d.setName("t");
            d.setStartTime(start);
            d.setStartTimeOfDay(tod(f[3]));
            d.setEndTimeOfDay(tod(f[4]));
            d.setRepeatIntervalUnit(IntervalUnit.valueOf(f[5]));
            d.setRepeatInterval(Integer.parseInt(f[6]));
            t = d;
        }
        StringBuilder out = new StringBuilder();
        Date next = t.computeFirstFireTime(null);
        for (int i = 0; i < n && next != null; i++) {
            out.append(i == 0 ? "" : " ").append(next.getTime());
            next = t.getFireTimeAfter(next);
        }
        return out.toString();
    }

    static TimeOfDay tod(String hhmm) {
        String[] p = hhmm.split(":");
        return TimeOfDay.hourAndMinuteOfDay(Integer.parseInt(p[0]), Integer.parseInt(p[1]));
    }
}
