//! An independent model of what an expression means, a random generator of expressions with
//! their meaning, and a slow brute-force reference of kairos's DST policy.
//!
//! Nothing here uses kairos-cron: the generator knows what each piece of text it writes
//! means, and the reference scans local time second by second (skipping only whole
//! non-matching days, hours and minutes, never across a time-zone transition).
#![allow(dead_code)]

use jiff::civil::{Date, DateTime};
use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::{SignedDuration, Timestamp};

/// SplitMix64: small, seedable, good enough to generate test cases.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next_u64() % (hi - lo + 1) as u64) as i64
    }
    pub fn percent(&mut self, p: u64) -> bool {
        self.next_u64() % 100 < p
    }
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.range(0, xs.len() as i64 - 1) as usize]
    }
}

/// Which days fire (exactly one of the two day fields is given).
#[derive(Clone, Debug)]
pub enum DayModel {
    Dom(Vec<bool>),
    Dow(Vec<bool>),
    Last(u32),
    LastWeekday(u32),
    NearestWeekday(u32),
    LastOfWeek(u32),
    Nth(u32, u32),
}

/// What an expression means, field by field (index = value).
#[derive(Clone, Debug)]
pub struct Model {
    pub seconds: Vec<bool>,
    pub minutes: Vec<bool>,
    pub hours: Vec<bool>,
    pub days: DayModel,
    pub months: Vec<bool>,
    /// None: every year kairos knows (1970-2099).
    pub years: Option<Vec<i16>>,
}

impl Model {
    pub fn all_hours(&self) -> bool {
        self.hours.iter().all(|&h| h)
    }

    pub fn day_matches(&self, d: Date) -> bool {
        if let Some(years) = &self.years
            && !years.contains(&d.year())
        {
            return false;
        }
        if !(1970..=2099).contains(&d.year()) || !self.months[d.month() as usize] {
            return false;
        }
        let day = d.day() as u32;
        let last = d.days_in_month() as u32;
        let wd = |day: u32| d.with().day(day as i8).build().unwrap().weekday().to_sunday_one_offset() as u32;
        let nearest = |t: u32| match wd(t) {
            7 if t == 1 => 3,
            7 => t - 1,
            1 if t == last => t - 2,
            1 => t + 1,
            _ => t,
        };
        match &self.days {
            DayModel::Dom(set) => set[day as usize],
            DayModel::Dow(set) => set[wd(day) as usize],
            DayModel::Last(off) => last > *off && day == last - off,
            DayModel::LastWeekday(off) => last > *off && day == nearest(last - off),
            // A month without day n does not fire.
            DayModel::NearestWeekday(n) => *n <= last && day == nearest(*n),
            DayModel::LastOfWeek(w) => wd(day) == *w && day + 7 > last,
            DayModel::Nth(w, k) => wd(day) == *w && (day - 1) / 7 + 1 == *k,
        }
    }

    pub fn matches(&self, c: DateTime) -> bool {
        self.day_matches(c.date())
            && self.hours[c.hour() as usize]
            && self.minutes[c.minute() as usize]
            && self.seconds[c.second() as usize]
    }
}

// ---------------------------------------------------------------------------------------
// The generator.
// ---------------------------------------------------------------------------------------

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

struct Spec {
    lo: u32,
    hi: u32,
    /// Quartz's wrap-around cycle for `a-b` with a > b.
    modulus: u32,
    names: Option<&'static [&'static str]>,
    /// Quartz's largest step after `*` or a single value.
    max_step: u32,
}

const SECOND: Spec = Spec { lo: 0, hi: 59, modulus: 60, names: None, max_step: 59 };
const HOUR: Spec = Spec { lo: 0, hi: 23, modulus: 24, names: None, max_step: 23 };
const DOM: Spec = Spec { lo: 1, hi: 31, modulus: 31, names: None, max_step: 31 };
const MONTH: Spec = Spec { lo: 1, hi: 12, modulus: 12, names: Some(&MONTHS), max_step: 12 };
const DOW: Spec = Spec { lo: 1, hi: 7, modulus: 7, names: Some(&DAYS), max_step: 7 };

fn name_case(rng: &mut Rng, name: &str) -> String {
    match rng.range(0, 5) {
        0 => name.to_lowercase(),
        1 => {
            let mut c = name.chars();
            c.next().map(|f| f.to_string() + &c.as_str().to_lowercase()).unwrap_or_default()
        }
        _ => name.to_string(),
    }
}

fn value_text(rng: &mut Rng, spec: &Spec, v: u32, named: bool) -> String {
    match spec.names {
        Some(names) if named => name_case(rng, names[(v - spec.lo) as usize]),
        _ => v.to_string(),
    }
}

/// Quartz's meaning of `a-b/step` (wrapping when a > b).
fn expand(spec: &Spec, a: u32, b: u32, step: u32, set: &mut [bool]) {
    if a <= b {
        for v in (a..=b).step_by(step as usize) {
            set[v as usize] = true;
        }
    } else {
        for i in (a..=b + spec.modulus).step_by(step as usize) {
            let mut v = i % spec.modulus;
            if v == 0 && spec.lo == 1 {
                v = spec.modulus;
            }
            set[v as usize] = true;
        }
    }
}

/// One list field: its text and its meaning. `bias` values are chosen more often (e.g. the
/// hours of DST changes).
fn gen_list(rng: &mut Rng, spec: &Spec, bias: &[u32]) -> (String, Vec<bool>) {
    let mut set = vec![false; spec.hi as usize + 1];
    let items = if rng.percent(70) { 1 } else { rng.range(2, 3) };
    let mut parts = Vec::new();
    let value = |rng: &mut Rng| {
        if !bias.is_empty() && rng.percent(40) {
            *rng.pick(bias)
        } else {
            rng.range(spec.lo as i64, spec.hi as i64) as u32
        }
    };
    for _ in 0..items {
        let named = spec.names.is_some() && rng.percent(50);
        let text = match rng.range(0, 9) {
            0 => {
                expand(spec, spec.lo, spec.hi, 1, &mut set);
                "*".to_string()
            }
            1..=3 => {
                let v = value(rng);
                set[v as usize] = true;
                value_text(rng, spec, v, named)
            }
            4 | 5 => {
                let (a, b) = (value(rng), value(rng));
                expand(spec, a, b, 1, &mut set);
                format!("{}-{}", value_text(rng, spec, a, named), value_text(rng, spec, b, named))
            }
            6 => {
                let step = rng.range(1, spec.max_step as i64) as u32;
                expand(spec, spec.lo, spec.hi, step, &mut set);
                if rng.percent(10) { format!("/{step}") } else { format!("*/{step}") }
            }
            7 => {
                let (a, step) = (value(rng), rng.range(1, spec.max_step as i64) as u32);
                expand(spec, a, spec.hi, step, &mut set);
                format!("{a}/{step}")
            }
            _ => {
                let (a, b) = (value(rng), value(rng));
                // Quartz checks no step after a range: any positive one.
                let step = rng.range(1, spec.max_step as i64 + 5) as u32;
                expand(spec, a, b, step, &mut set);
                format!("{a}-{b}/{step}")
            }
        };
        parts.push(text);
    }
    (parts.join(","), set)
}

/// An expression (valid in both Quartz and kairos) and what it means.
pub struct Case {
    pub text: String,
    pub model: Model,
}

/// A random valid expression mixing every feature.
pub fn gen_case(rng: &mut Rng) -> Case {
    let (sec, seconds) = match rng.range(0, 9) {
        0..=3 => ("0".to_string(), single(60, 0)),
        _ => gen_list(rng, &SECOND, &[0, 30, 59]),
    };
    let (min, minutes) = match rng.range(0, 9) {
        0..=2 => ("0".to_string(), single(60, 0)),
        _ => gen_list(rng, &SECOND, &[0, 15, 30, 45]),
    };
    let (hour, hours) = match rng.range(0, 9) {
        // Every hour: interval-like schedules, which keep firing through a repeated hour.
        0..=2 => (rng.pick(&["*", "*", "0-23", "*/1", "0/1"]).to_string(), vec![true; 24]),
        _ => gen_list(rng, &HOUR, &[1, 2, 3]),
    };
    let (month, months) = if rng.percent(40) {
        ("*".to_string(), vec![true; 13])
    } else {
        let (t, mut m) = gen_list(rng, &MONTH, &[3, 4, 10, 11]);
        m[0] = false;
        (t, m)
    };
    let by_week = rng.percent(45);
    let (dom, dow, days) = if by_week {
        let (text, days) = gen_day_of_week(rng);
        ("?".to_string(), text, days)
    } else {
        let (text, days) = gen_day_of_month(rng);
        (text, "?".to_string(), days)
    };
    let (year, years) = if rng.percent(75) { (None, None) } else { gen_year(rng) };
    let mut text = format!("{sec} {min} {hour} {dom} {month} {dow}");
    if let Some(y) = year {
        text.push(' ');
        text.push_str(&y);
    }
    Case { text, model: Model { seconds, minutes, hours, days, months, years } }
}

fn single(len: usize, v: usize) -> Vec<bool> {
    let mut s = vec![false; len];
    s[v] = true;
    s
}

fn gen_day_of_month(rng: &mut Rng) -> (String, DayModel) {
    match rng.range(0, 19) {
        0 | 1 => ("L".into(), DayModel::Last(0)),
        2 => {
            let n = rng.range(0, 30) as u32;
            (format!("L-{n}"), DayModel::Last(n))
        }
        3 => (rng.pick(&["LW", "lw"]).to_string(), DayModel::LastWeekday(0)),
        4 => {
            // kairos refuses L-nW past 27 (Quartz can loop there).
            let n = rng.range(0, 27) as u32;
            (format!("L-{n}W"), DayModel::LastWeekday(n))
        }
        5 | 6 => {
            let n = rng.range(1, 31) as u32;
            (format!("{n}W"), DayModel::NearestWeekday(n))
        }
        _ => {
            let (text, set) = gen_list(rng, &DOM, &[1, 28, 29, 30, 31]);
            (text, DayModel::Dom(set))
        }
    }
}

fn gen_day_of_week(rng: &mut Rng) -> (String, DayModel) {
    let w = rng.range(1, 7) as u32;
    let named = rng.percent(40);
    let wt = |rng: &mut Rng| value_text(rng, &DOW, w, named);
    match rng.range(0, 9) {
        0 | 1 => {
            let t = wt(rng);
            (format!("{t}L"), DayModel::LastOfWeek(w))
        }
        2 | 3 => {
            let k = rng.range(1, 5) as u32;
            let t = wt(rng);
            (format!("{t}#{k}"), DayModel::Nth(w, k))
        }
        4 if rng.percent(30) => ("L".into(), DayModel::Dow(single(8, 7))),
        _ => {
            let (text, set) = gen_list(rng, &DOW, &[1, 7]);
            (text, DayModel::Dow(set))
        }
    }
}

fn gen_year(rng: &mut Rng) -> (Option<String>, Option<Vec<i16>>) {
    let y = rng.range(1990, 2045) as i16;
    match rng.range(0, 4) {
        0 => (Some("*".into()), None),
        1 => (Some(y.to_string()), Some(vec![y])),
        2 => {
            let end = y + rng.range(0, 12) as i16;
            (Some(format!("{y}-{end}")), Some((y..=end).collect()))
        }
        3 => {
            let step = rng.range(1, 7) as i16;
            (Some(format!("{y}/{step}")), Some((y..=2099).step_by(step as usize).collect()))
        }
        _ => {
            let y2 = rng.range(1990, 2045) as i16;
            (Some(format!("{y},{y2}")), Some(vec![y, y2]))
        }
    }
}

// ---------------------------------------------------------------------------------------
// The brute-force reference of the DST policy.
// ---------------------------------------------------------------------------------------

const ONE: SignedDuration = SignedDuration::from_secs(1);

/// Whether the instant `x` (a whole second) fires under kairos's DST policy:
/// * its local time matches and it is that local time's first occurrence, or a second
///   occurrence of an every-hour schedule;
/// * or `x` is the end of a gap in which some local time (or `x`'s own) matches.
pub fn fires(model: &Model, tz: &TimeZone, x: Timestamp) -> bool {
    let c = tz.to_datetime(x);
    let prev = tz.to_datetime(x - ONE);
    let expected = prev.checked_add(ONE).unwrap();
    if c > expected {
        // x ends a gap: the local times expected..c never happened.
        if model.matches(c) {
            return true;
        }
        let mut g = expected;
        while g < c {
            if model.matches(g) {
                return true;
            }
            g = g.checked_add(ONE).unwrap();
        }
        return false;
    }
    if !model.matches(c) {
        return false;
    }
    match tz.to_ambiguous_timestamp(c).offset() {
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(c).unwrap() == x || model.all_hours(),
        _ => true,
    }
}

/// The first `count` firings strictly after the whole second of `after`, looking no further
/// than `until`.
pub fn reference(model: &Model, tz: &TimeZone, after: Timestamp, count: usize, until: Timestamp) -> Vec<Timestamp> {
    let mut out = Vec::new();
    let mut x = Timestamp::from_second(after.as_second() - i64::from(after.subsec_nanosecond() < 0)).unwrap() + ONE;
    while x <= until && out.len() < count {
        let at_transition = tz.preceding(x + SignedDuration::from_nanos(1)).next().is_some_and(|t| t.timestamp() == x);
        let c = tz.to_datetime(x);
        let skip_to = if at_transition {
            None
        } else if !model.day_matches(c.date()) {
            Some(c.date().tomorrow().unwrap().at(0, 0, 0, 0))
        } else if !model.hours[c.hour() as usize] {
            Some(c.with().minute(0).second(0).build().unwrap().checked_add(SignedDuration::from_hours(1)).unwrap())
        } else if !model.minutes[c.minute() as usize] {
            Some(c.with().second(0).build().unwrap().checked_add(SignedDuration::from_mins(1)).unwrap())
        } else {
            None
        };
        match skip_to {
            // Nothing between x and the target fires (its local times do not match), unless
            // a transition lies in between: stop there and look closely.
            Some(target) => {
                let mut next = x + c.duration_until(target);
                if let Some(t) = tz.following(x).next().map(|t| t.timestamp()) {
                    next = next.min(t);
                }
                x = next.max(x + ONE);
            }
            None => {
                if fires(model, tz, x) {
                    out.push(x);
                }
                x += ONE;
            }
        }
    }
    out
}
