//! Calendar-interval and daily-time-interval triggers around DST folds, against the real
//! Quartz 2.3.2 (Debian's libquartz2-java; `quartz/DstOracle.java`).
//!
//! Starts in, before and after the fall-back folds of 2025 and 2026 in three zones (New York,
//! Berlin, and Lord Howe, whose fold is half an hour), every unit. kairos must agree with
//! Quartz except where docs/scheduler-model.md says it differs: a wall time in a fold is its
//! first occurrence in kairos, while Quartz takes the second (daily time interval: always;
//! calendar interval: when the previous fire time carried the standard offset). So every fire
//! time only one of them has must lie in a fold, kairos's being first occurrences and
//! Quartz's second ones; and both kinds of difference must show, or the table is out of date.
//!
//! Without Java or the jar the test prints "skipped: …" and passes, unless
//! `KAIROS_REQUIRE_QUARTZ=1` (set by scripts/test.sh) makes that a failure.

mod common;

use jiff::civil::DateTime;
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};
use kairos_schedule::{
    DailyTimeIntervalSchedule, IntervalUnit, JobKey, Schedule, TimeOfDay, Trigger, TriggerKey, Zone,
};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const QUARTZ_JAR: &str = "/usr/share/java/quartz2.jar";
const CLASSPATH_EXTRAS: [&str; 2] = ["/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar"];
const ZONES: [&str; 3] = ["America/New_York", "Europe/Berlin", "Australia/Lord_Howe"];
const FIRES: usize = 8;

/// The compiled oracle's classpath (its directory is kept alive by the caller), or why not.
fn oracle() -> Result<(tempfile::TempDir, String), String> {
    if !Path::new(QUARTZ_JAR).exists() {
        return Err(format!("{QUARTZ_JAR} is missing (apt-get install libquartz2-java)"));
    }
    for tool in ["javac", "java"] {
        if Command::new(tool).arg("-version").output().is_err() {
            return Err(format!("{tool} is not on PATH (apt-get install openjdk-17-jdk-headless)"));
        }
    }
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut cp = vec![QUARTZ_JAR.to_string()];
    cp.extend(CLASSPATH_EXTRAS.iter().filter(|p| Path::new(p).exists()).map(|p| p.to_string()));
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/quartz/DstOracle.java");
    let out = Command::new("javac")
        .arg("-cp")
        .arg(cp.join(":"))
        .arg("-d")
        .arg(dir.path())
        .arg(&source)
        .output()
        .map_err(|e| format!("javac: {e}"))?;
    assert!(out.status.success(), "javac failed: {}", String::from_utf8_lossy(&out.stderr));
    cp.push(dir.path().display().to_string());
    let cp = cp.join(":");
    Ok((dir, cp))
}

/// Quartz's fire times for each line, in one JVM.
fn ask_quartz(cp: &str, lines: &[String]) -> Vec<Result<Vec<Timestamp>, String>> {
    let mut child = Command::new("java")
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp, "DstOracle", &FIRES.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("java starts");
    child.stdin.take().unwrap().write_all((lines.join("\n") + "\n").as_bytes()).unwrap();
    let out = child.wait_with_output().expect("java answers");
    assert!(out.status.success(), "the oracle failed");
    let text = String::from_utf8(out.stdout).unwrap();
    let answers: Vec<_> = text
        .lines()
        .map(|l| match l.strip_prefix("ERR ") {
            Some(e) => Err(e.to_string()),
            None => {
                Ok(l.split_whitespace().map(|ms| Timestamp::from_millisecond(ms.parse().unwrap()).unwrap()).collect())
            }
        })
        .collect();
    assert_eq!(answers.len(), lines.len(), "one answer a line");
    answers
}

/// One case: the oracle's line, kairos's trigger, the fold it is about, and for a daily window
/// its start time of day.
struct Case {
    line: String,
    trigger: Trigger,
    tz: TimeZone,
    fold: Timestamp,
    window_start: Option<(i8, i8)>,
}

fn trigger(start: Timestamp, schedule: Schedule) -> Trigger {
    Trigger::new(TriggerKey::new("t", "DEFAULT"), JobKey::new("j", "DEFAULT"), start, schedule)
}

/// The fall-back transitions of `zone` in 2025 and 2026: (the instant, how much the clock
/// goes back).
fn folds(tz: &TimeZone) -> Vec<(Timestamp, SignedDuration)> {
    let from: Timestamp = "2025-01-01T00:00:00Z".parse().unwrap();
    let to: Timestamp = "2027-01-01T00:00:00Z".parse().unwrap();
    tz.following(from)
        .take_while(|t| t.timestamp() < to)
        .filter_map(|t| {
            let before = tz.to_offset(t.timestamp() - SignedDuration::from_secs(1));
            let back = before.duration_since(t.offset());
            (back > SignedDuration::ZERO).then_some((t.timestamp(), back))
        })
        .collect()
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    let units = [
        (IntervalUnit::Day, 1),
        (IntervalUnit::Day, 7),
        (IntervalUnit::Week, 1),
        (IntervalUnit::Week, 52),
        (IntervalUnit::Month, 1),
        (IntervalUnit::Month, 12),
        (IntervalUnit::Year, 1),
    ];
    for zone in ZONES {
        let tz = TimeZone::get(zone).unwrap();
        for (at, back) in folds(&tz) {
            // the middle of the fold, both occurrences, and the same wall time a day, a week,
            // a month, 52 weeks and a year before (outside the fold)
            let first = at - back / 2;
            let second = at + back / 2;
            let wall = tz.to_datetime(first);
            let mut starts = vec![first, second];
            for span in [
                jiff::Span::new().days(1),
                jiff::Span::new().weeks(1),
                jiff::Span::new().months(1),
                jiff::Span::new().weeks(52),
                jiff::Span::new().years(1),
            ] {
                let earlier = wall.checked_sub(span).unwrap();
                starts.push(tz.to_ambiguous_timestamp(earlier).compatible().unwrap());
            }
            for start in starts {
                for (unit, interval) in units {
                    // Month-end starts drift in Quartz (a documented difference of its own).
                    if unit == IntervalUnit::Month && tz.to_datetime(start).day() > 28 {
                        continue;
                    }
                    cases.push(Case {
                        line: format!("cal\t{zone}\t{}\t{}\t{interval}", start.as_millisecond(), unit.quartz_name()),
                        trigger: trigger(start, Schedule::calendar_interval(interval, unit, zone)),
                        tz: tz.clone(),
                        fold: at,
                        window_start: None,
                    });
                }
            }
            // Daily windows starting before, at, inside and at the end of the fold.
            let day_before = tz.to_datetime(at).date().yesterday().unwrap();
            let midnight = tz.to_ambiguous_timestamp(day_before.at(0, 0, 0, 0)).compatible().unwrap();
            let fold_start = tz.to_datetime(at - back).time();
            let mut tods = BTreeSet::new();
            for minutes in [-30i64, 0, 15, 30, 60, 90] {
                let t = fold_start.checked_add(SignedDuration::from_mins(minutes)).unwrap();
                tods.insert((t.hour() as u8, t.minute() as u8));
            }
            for &(h, m) in &tods {
                for (end, unit, interval) in [
                    ((h, m), IntervalUnit::Hour, 1),
                    ((4, 0), IntervalUnit::Hour, 1),
                    ((4, 0), IntervalUnit::Minute, 30),
                    ((4, 0), IntervalUnit::Minute, 45),
                ] {
                    let schedule = DailyTimeIntervalSchedule {
                        start_time_of_day: TimeOfDay::new(h, m, 0),
                        end_time_of_day: TimeOfDay::new(end.0, end.1, 0),
                        ..DailyTimeIntervalSchedule::new(interval, unit, Zone::new(zone))
                    };
                    cases.push(Case {
                        line: format!(
                            "daily\t{zone}\t{}\t{h}:{m}\t{}:{}\t{}\t{interval}",
                            midnight.as_millisecond(),
                            end.0,
                            end.1,
                            unit.quartz_name()
                        ),
                        trigger: trigger(midnight, Schedule::DailyTimeInterval(schedule)),
                        tz: tz.clone(),
                        fold: at,
                        window_start: Some((h as i8, m as i8)),
                    });
                }
            }
        }
    }
    cases
}

/// Whether `t` is the first (`Some(true)`) or second (`Some(false)`) occurrence of a wall time
/// in a fold of `tz`, or not in a fold (`None`).
fn occurrence(tz: &TimeZone, t: Timestamp) -> Option<bool> {
    let wall: DateTime = tz.to_datetime(t);
    match tz.to_ambiguous_timestamp(wall).offset() {
        AmbiguousOffset::Fold { before, .. } => Some(before.to_timestamp(wall).ok() == Some(t)),
        _ => None,
    }
}

/// Whether kairos's fire times `k` and Quartz's `q` differ only as docs/scheduler-model.md says.
///
/// Calendar interval: every time only one of them has is in the fold, kairos's the first
/// occurrence of its wall time, Quartz's the second. Daily time interval: only on the day of
/// the fold and only when the window starts inside it: there kairos starts the window at the
/// first occurrence of its start time and Quartz at the second (each then counts elapsed time
/// from its own start); every other day agrees.
fn documented(case: &Case, k: &BTreeSet<Timestamp>, q: &BTreeSet<Timestamp>) -> bool {
    let tz = &case.tz;
    let Some((h, m)) = case.window_start else {
        return k.difference(q).all(|t| occurrence(tz, *t) == Some(true))
            && q.difference(k).all(|t| occurrence(tz, *t) == Some(false));
    };
    let fold_day = tz.to_datetime(case.fold).date();
    let on = |set: &BTreeSet<Timestamp>, inside: bool| -> BTreeSet<Timestamp> {
        set.iter().copied().filter(|t| (tz.to_datetime(*t).date() == fold_day) == inside).collect()
    };
    if on(k, false) != on(q, false) {
        return false;
    }
    let (kd, qd) = (on(k, true), on(q, true));
    if kd == qd {
        return true;
    }
    let wall = fold_day.at(h, m, 0, 0);
    let AmbiguousOffset::Fold { before, after } = tz.to_ambiguous_timestamp(wall).offset() else {
        return false;
    };
    let (first, second) = (before.to_timestamp(wall).unwrap(), after.to_timestamp(wall).unwrap());
    kd.first() == Some(&first) && qd.first().is_none_or(|t| *t == second)
}

#[test]
fn fold_times_differ_from_quartz_only_as_documented() {
    let (_dir, cp) = match oracle() {
        Ok(o) => o,
        Err(why) if std::env::var("KAIROS_REQUIRE_QUARTZ").as_deref() == Ok("1") => {
            panic!("KAIROS_REQUIRE_QUARTZ=1 but the Quartz oracle cannot run: {why}")
        }
        Err(why) => {
            println!("skipped: {why}");
            return;
        }
    };
    let cases = cases();
    let answers = ask_quartz(&cp, &cases.iter().map(|c| c.line.clone()).collect::<Vec<_>>());
    let (mut cal_differs, mut daily_differs, mut failures) = (0, 0, Vec::new());
    for (case, quartz) in cases.iter().zip(answers) {
        let quartz = quartz.unwrap_or_else(|e| panic!("{}: Quartz refused it: {e}", case.line));
        let kairos = case.trigger.fire_times(None, FIRES);
        // Compare up to the earlier of the two last answers (a difference shifts the rest).
        let horizon = quartz.last().copied().min(kairos.last().copied());
        let cut =
            |v: &[Timestamp]| -> BTreeSet<Timestamp> { v.iter().copied().filter(|t| Some(*t) <= horizon).collect() };
        let (k, q) = (cut(&kairos), cut(&quartz));
        if k == q {
            continue;
        }
        let documented = documented(case, &k, &q);
        if !documented {
            failures.push(format!("{}\n  kairos {kairos:?}\n  quartz {quartz:?}", case.line));
        } else if case.line.starts_with("cal") {
            cal_differs += 1;
        } else {
            daily_differs += 1;
        }
    }
    println!("{} cases; differing as documented: {cal_differs} calendar-interval, {daily_differs} daily", cases.len());
    assert!(failures.is_empty(), "undocumented differences from Quartz:\n{}", failures.join("\n"));
    assert!(cal_differs > 0 && daily_differs > 0, "the documented differences no longer show: update the docs");
}
