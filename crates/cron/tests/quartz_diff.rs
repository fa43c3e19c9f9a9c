//! Differential test against the real Quartz 2.3.2 (Debian's libquartz2-java).
//!
//! Thousands of random expressions mixing every feature, with random start instants in
//! 1990-2040, in UTC, America/New_York, Europe/Berlin and Australia/Lord_Howe, go in one batch
//! to `quartz/CronOracle.java` (getTimeAfter chained five times). kairos must agree: both
//! reject or both accept, and the fire times are equal. A difference is allowed only where a
//! DST transition of the zone lies between the start and the later of the two answers, and
//! then kairos's answer must equal the brute-force reference of the DST policy
//! (`support/model.rs`). Quartz's answers past 2099 are cut (kairos's year range ends there).
//!
//! The seed is printed; `KAIROS_CRON_SEED=N` replays a run, `KAIROS_CRON_CASES=N` changes the
//! number of cases. Without Java or the jar the test prints "skipped: …" and passes, unless
//! `KAIROS_REQUIRE_QUARTZ=1` (set by scripts/test.sh) makes that a failure.
//!
//! Run: `cargo test -p kairos-cron --test quartz_diff -- --nocapture`

mod support;

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use kairos_cron::CronExpr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};
use support::model::{Case, DayModel, Rng, gen_case, reference};

const QUARTZ_JAR: &str = "/usr/share/java/quartz2.jar";
/// What libquartz2-java may need besides itself (CronExpression needs none of it today).
const CLASSPATH_EXTRAS: [&str; 2] = ["/usr/share/java/slf4j-api.jar", "/usr/share/java/slf4j-nop.jar"];
const ZONES: [&str; 4] = ["UTC", "America/New_York", "Europe/Berlin", "Australia/Lord_Howe"];
const FIRES: usize = 5;
const DEFAULT_CASES: usize = 5000;
/// Quartz answers each line within this, or the oracle reports HANG.
const PER_CASE_TIMEOUT_MS: u64 = 2000;
const BATCH_TIMEOUT: Duration = Duration::from_secs(180);

/// The compiled oracle's class directory, or why the test cannot run.
fn oracle() -> &'static Result<(tempfile::TempDir, String), String> {
    static ORACLE: OnceLock<Result<(tempfile::TempDir, String), String>> = OnceLock::new();
    ORACLE.get_or_init(|| {
        if !Path::new(QUARTZ_JAR).exists() {
            return Err(format!("{QUARTZ_JAR} is missing (apt-get install libquartz2-java)"));
        }
        for tool in ["javac", "java"] {
            if Command::new(tool).arg("-version").output().is_err() {
                return Err(format!("{tool} is not on PATH (apt-get install openjdk-17-jdk-headless)"));
            }
        }
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let mut cp: Vec<String> = vec![QUARTZ_JAR.to_string()];
        cp.extend(CLASSPATH_EXTRAS.iter().filter(|p| Path::new(p).exists()).map(|p| p.to_string()));
        let source = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/quartz/CronOracle.java");
        let out = Command::new("javac")
            .arg("-cp")
            .arg(cp.join(":"))
            .arg("-d")
            .arg(dir.path())
            .arg(&source)
            .output()
            .map_err(|e| format!("javac: {e}"))?;
        if !out.status.success() {
            panic!("javac failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        cp.push(dir.path().display().to_string());
        Ok((dir, cp.join(":")))
    })
}

/// The oracle, or None when the test is to be skipped (and may not be).
fn classpath() -> Option<String> {
    match oracle() {
        Ok((_, cp)) => Some(cp.clone()),
        Err(why) if std::env::var("KAIROS_REQUIRE_QUARTZ").as_deref() == Ok("1") => {
            panic!("KAIROS_REQUIRE_QUARTZ=1 but the Quartz oracle cannot run: {why}")
        }
        Err(why) => {
            println!("skipped: {why}");
            None
        }
    }
}

/// Quartz's answer to one line.
#[derive(Debug, Clone, PartialEq)]
enum Answer {
    Ok(Vec<Timestamp>),
    Err(String),
    Crash(String),
    Hang,
}

/// Runs lines `expr<TAB>zone<TAB>start_ms` through Quartz in one JVM.
fn ask_quartz(cp: &str, lines: &[String]) -> Vec<Answer> {
    let mut child = Command::new("java")
        .args(["-Xshare:auto", "-XX:TieredStopAtLevel=1", "-cp", cp, "CronOracle"])
        .arg(FIRES.to_string())
        .arg(PER_CASE_TIMEOUT_MS.to_string())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("java starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = lines.join("\n") + "\n";
    let writer = std::thread::spawn(move || {
        stdin.write_all(input.as_bytes()).unwrap();
    });
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stdout.read_to_string(&mut text).unwrap();
        text
    });
    let started = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if started.elapsed() > BATCH_TIMEOUT {
            let _ = child.kill();
            let _ = child.wait();
            panic!("the Quartz oracle did not finish within {BATCH_TIMEOUT:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    writer.join().unwrap();
    let text = reader.join().unwrap();
    let answers: Vec<Answer> = text.lines().map(parse_answer).collect();
    assert_eq!(answers.len(), lines.len(), "one answer per line");
    answers
}

fn parse_answer(line: &str) -> Answer {
    let (kind, rest) = line.split_once('\t').unwrap_or((line, ""));
    match kind {
        "OK" if rest.is_empty() => Answer::Ok(Vec::new()),
        "OK" => {
            Answer::Ok(rest.split(',').map(|ms| Timestamp::from_millisecond(ms.parse().unwrap()).unwrap()).collect())
        }
        "ERR" => Answer::Err(rest.to_string()),
        "CRASH" => Answer::Crash(rest.to_string()),
        "HANG" => Answer::Hang,
        other => panic!("unexpected oracle line {other:?}"),
    }
}

fn ours(text: &str, tz: &TimeZone, start: Timestamp) -> Result<Vec<Timestamp>, kairos_cron::CronError> {
    let cron = CronExpr::parse(text)?;
    Ok(std::iter::successors(cron.next_after(start, tz), |t| cron.next_after(*t, tz)).take(FIRES).collect())
}

/// Quartz's fire times up to the end of 2099 (local), where kairos's year range ends.
fn within_years(times: &[Timestamp], tz: &TimeZone) -> Vec<Timestamp> {
    times.iter().copied().take_while(|t| t.to_zoned(tz.clone()).year() <= 2099).collect()
}

fn seed() -> u64 {
    match std::env::var("KAIROS_CRON_SEED") {
        Ok(s) => s.parse().expect("KAIROS_CRON_SEED is a number"),
        Err(_) => std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos() as u64,
    }
}

fn line(text: &str, zone: &str, start: Timestamp) -> String {
    format!("{text}\t{zone}\t{}", start.as_millisecond())
}

/// A start instant: anywhere in 1990-2040, or (in DST zones) within two days of a transition.
fn gen_start(rng: &mut Rng, tz: &TimeZone) -> Timestamp {
    let lo = Timestamp::from_second(631_152_000).unwrap(); // 1990-01-01
    let hi = Timestamp::from_second(2_240_611_199).unwrap(); // 2040-12-31
    let t = Timestamp::from_second(rng.range(lo.as_second(), hi.as_second())).unwrap();
    if rng.percent(40)
        && let Some(tr) = tz.following(t).next()
    {
        return tr.timestamp() + SignedDuration::from_secs(rng.range(-2 * 86_400, 2 * 86_400));
    }
    t
}

/// Expressions both Quartz and kairos refuse, as (field index, replacement).
const BOTH_REFUSE: &[(usize, &str)] = &[
    (0, "60"),
    (0, "5-60"),
    (0, "*/60"),
    (0, "0/60"),
    (0, "?"),
    (0, "X"),
    (0, "5-"),
    (0, "/"),
    (1, "-5"),
    (1, "61"),
    (2, "24"),
    (2, "0-24"),
    (2, "*/24"),
    (3, "0"),
    (3, "32"),
    (3, "1-32"),
    (3, "32W"),
    (3, "L-31"),
    (3, "5L"),
    (3, "W"),
    (3, "1,L"),
    (3, "0/5"),
    (4, "0"),
    (4, "13"),
    (4, "FOO"),
    (4, "JAN-FOO"),
    (4, "*/13"),
    (4, "JAN-3"),
    (5, "0"),
    (5, "8"),
    (5, "MON-FOO"),
    (5, "6#6"),
    (5, "6#0"),
    (5, "*/8"),
    (5, "SAT,L"),
    (5, "2#1,3#2"),
    (6, "2020-2010"),
];

/// Replaces field `index` of a valid expression; day fields keep exactly one '?'.
fn mutate(case: &Case, index: usize, token: &str) -> String {
    let mut fields: Vec<String> = case.text.split(' ').map(str::to_string).collect();
    if fields.len() < 7 {
        fields.push("*".into());
    }
    fields[index] = token.to_string();
    match index {
        3 => fields[5] = "?".into(),
        5 => fields[3] = "?".into(),
        _ => {}
    }
    fields.join(" ")
}

#[derive(Default, Debug)]
struct Summary {
    cases: usize,
    both_refused: usize,
    compared: usize,
    equal: usize,
    dst_intended: usize,
    /// `nW` with day n missing from a month: Quartz's answer depends on its search path
    /// (docs/cron.md, "Deliberate divergences"); kairos's is checked against the reference.
    past_month_end: usize,
    failures: Vec<String>,
}

#[test]
fn kairos_agrees_with_quartz_outside_dst_changes() {
    let Some(cp) = classpath() else { return };
    let seed = seed();
    let cases: usize = std::env::var("KAIROS_CRON_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(DEFAULT_CASES);
    println!("quartz_diff: seed {seed} (replay with KAIROS_CRON_SEED={seed}), {cases} cases");
    let mut rng = Rng::new(seed);
    let zones: Vec<TimeZone> = ZONES.iter().map(|z| TimeZone::get(z).unwrap()).collect();

    // (text, zone index, start, the model when valid)
    let mut batch = Vec::new();
    for _ in 0..cases {
        let z = rng.range(0, ZONES.len() as i64 - 1) as usize;
        let start = gen_start(&mut rng, &zones[z]);
        let case = gen_case(&mut rng);
        if rng.percent(8) {
            let (index, token) = *rng.pick(BOTH_REFUSE);
            batch.push((mutate(&case, index, token), z, start, None));
        } else {
            batch.push((case.text.clone(), z, start, Some(case)));
        }
    }
    let lines: Vec<String> = batch.iter().map(|(text, z, start, _)| line(text, ZONES[*z], *start)).collect();
    let started = Instant::now();
    let answers = ask_quartz(&cp, &lines);
    let quartz_time = started.elapsed();

    let mut s = Summary { cases, ..Default::default() };
    for ((text, z, start, case), answer) in batch.iter().zip(answers) {
        let tz = &zones[*z];
        let what = format!("{text:?} in {} from {start}", ZONES[*z]);
        let mine = ours(text, tz, *start);
        match (&mine, &answer, case) {
            (Err(_), Answer::Err(_), None) => s.both_refused += 1,
            (Ok(mine), Answer::Ok(theirs), Some(case)) => {
                s.compared += 1;
                let theirs = within_years(theirs, tz);
                if *mine == theirs {
                    s.equal += 1;
                    continue;
                }
                let span_end = mine.iter().chain(&theirs).max().copied().unwrap();
                // A change shortly before the start counts: the start may lie in a repeated hour.
                let since = *start - SignedDuration::from_hours(3);
                let transition = tz.following(since).next().is_some_and(|t| t.timestamp() <= span_end);
                let past_month_end = matches!(case.model.days, DayModel::NearestWeekday(n) if n >= 29);
                if !transition && !past_month_end {
                    s.failures.push(format!("{what}: kairos {mine:?}, Quartz {theirs:?} (no DST change between)"));
                    continue;
                }
                let until = mine.last().copied().unwrap_or(span_end).max(span_end);
                let expected = reference(&case.model, tz, *start, FIRES, until);
                // Fewer than five: both must have run out (a year list), or it is `nW` past a
                // month's end (`31W 4` never fires).
                let complete = mine.len() == FIRES || theirs.len() < FIRES || past_month_end;
                if *mine == expected && complete {
                    if past_month_end {
                        s.past_month_end += 1;
                    } else {
                        s.dst_intended += 1;
                    }
                } else {
                    s.failures.push(format!(
                        "{what}: kairos {mine:?} differs from Quartz {theirs:?} across a DST change, and from the reference {expected:?}"
                    ));
                }
            }
            _ => s.failures.push(format!("{what}: kairos {mine:?}, Quartz {answer:?}")),
        }
    }
    println!(
        "quartz_diff: {} cases in {:.1}s of Quartz: {} compared, {} equal, {} DST-intended (verified against the reference), {} nW past a month's end (documented; verified), {} refused by both, {} failures",
        s.cases,
        quartz_time.as_secs_f64(),
        s.compared,
        s.equal,
        s.dst_intended,
        s.past_month_end,
        s.both_refused,
        s.failures.len()
    );
    for f in s.failures.iter().take(10) {
        println!("  FAIL {f}");
    }
    assert!(
        s.failures.is_empty(),
        "{} of {} cases disagree (seed {seed}); first: {}",
        s.failures.len(),
        s.cases,
        s.failures[0]
    );
    assert!(s.compared > cases / 2, "too few valid cases: {s:?}");
}

/// Each deliberate refusal (docs/cron.md "Deliberate divergences") is text Quartz accepts:
/// kairos refuses it, naming the field. Cases that make Quartz loop are not sent to it.
#[test]
fn deliberate_refusals_are_accepted_by_quartz_and_refused_here() {
    let Some(cp) = classpath() else { return };
    let sent: &[(&str, kairos_cron::Field)] = &[
        ("*/0 * * * * ?", kairos_cron::Field::Second),
        ("0 5/0 * * * ?", kairos_cron::Field::Minute),
        ("0 0 1-5/0 * * ?", kairos_cron::Field::Hour),
        ("0 0 0 ? * */-1", kairos_cron::Field::DayOfWeek),
        ("*5 * * * * ?", kairos_cron::Field::Second),
        ("5X * * * * ?", kairos_cron::Field::Second),
        ("0 1-5X * * * ?", kairos_cron::Field::Minute),
        ("0 0 1-2-3 * * ?", kairos_cron::Field::Hour),
        ("0 0 0 1 JANUARY ?", kairos_cron::Field::Month),
        ("0 0 0 ? * MONDAY", kairos_cron::Field::DayOfWeek),
        ("0 0 0 ?X * MON", kairos_cron::Field::DayOfMonth),
        ("0 0 0 ? * 6LX", kairos_cron::Field::DayOfWeek),
        ("0 0 0 15WX * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 1-5W * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 1 JAN/2 ?", kairos_cron::Field::Month),
        ("0 0 0 1 JAN-JUN/2 ?", kairos_cron::Field::Month),
        ("0 0 0 ? * MON-FRI/2", kairos_cron::Field::DayOfWeek),
        ("0 0 0 15W,20 * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 ? * 2#1,3", kairos_cron::Field::DayOfWeek),
        ("0 0 0 ?,5 * MON", kairos_cron::Field::DayOfMonth),
        ("L,5 * * * * ?", kairos_cron::Field::Second),
        ("0 0 0 ? * L-2", kairos_cron::Field::DayOfWeek),
        ("0 0 0 ? * LW", kairos_cron::Field::DayOfWeek),
        ("0 0 0 L-W * ?", kairos_cron::Field::DayOfMonth),
        ("1,,2 * * * * ?", kairos_cron::Field::Second),
        (",5 * * * * ?", kairos_cron::Field::Second),
        ("99 * * * * ?", kairos_cron::Field::Second),
        ("0 0 0 98 * MON", kairos_cron::Field::DayOfMonth),
        ("0 0 0 5-0 * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 1 3-0 ?", kairos_cron::Field::Month),
        ("0 0 0 ? * 3-0", kairos_cron::Field::DayOfWeek),
        ("0 0 0 * * ? 2100", kairos_cron::Field::Year),
        ("0 0 0 * * ? 1969", kairos_cron::Field::Year),
        ("0 0 0 * * ? 2030 extra", kairos_cron::Field::Expression),
        // Accepted, then getTimeAfter throws (CRASH) / never fires / means 7#1.
        ("L 30 * * * ?", kairos_cron::Field::Second),
        ("0 0 0 ? * 8#1", kairos_cron::Field::DayOfWeek),
        ("0 0 0 ? * 0#1", kairos_cron::Field::DayOfWeek),
    ];
    // Quartz loops forever on these (its oracle answers HANG, leaving a spinning thread):
    // only kairos sees them.
    let not_sent: &[(&str, kairos_cron::Field)] = &[
        ("0 0 0 0W * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 L-28W * ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 L-29W 2,3 ?", kairos_cron::Field::DayOfMonth),
        ("0 0 0 L-30W * ?", kairos_cron::Field::DayOfMonth),
    ];
    let start = Timestamp::from_second(1_700_000_000).unwrap();
    let lines: Vec<String> = sent.iter().map(|(text, _)| line(text, "UTC", start)).collect();
    let answers = ask_quartz(&cp, &lines);
    let mut problems = Vec::new();
    for ((text, field), answer) in sent.iter().zip(&answers) {
        if matches!(answer, Answer::Err(_)) {
            problems.push(format!("{text:?}: Quartz refuses it too ({answer:?}): not a divergence"));
        }
        match CronExpr::parse(text) {
            Ok(_) => problems.push(format!("{text:?}: kairos accepts it")),
            Err(e) if e.field != *field => problems.push(format!("{text:?}: {e} (expected the {field} field)")),
            Err(_) => {}
        }
        println!("  {text:<28} Quartz: {answer:?}");
    }
    for (text, field) in not_sent {
        match CronExpr::parse(text) {
            Ok(_) => problems.push(format!("{text:?}: kairos accepts it")),
            Err(e) if e.field != *field => problems.push(format!("{text:?}: {e} (expected the {field} field)")),
            Err(_) => {}
        }
    }
    assert!(problems.is_empty(), "{problems:#?}");
}
