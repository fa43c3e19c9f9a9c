//! Repeating timer cycles: BPMN `timeCycle`, stored by Activiti as `REPEAT_`.
//!
//! Forms accepted (ISO 8601 repeating intervals plus Activiti's end date):
//! `R3/PT5M`, `R/PT1H`, `R/<start>/P1D`, `R5/<start>/PT1H`, `R3/PT10M/<end>`
//! and `R/<start>/P1D/<end>`.

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;

use crate::duration::{self, IsoDuration};
use crate::error::{Error, Fail, Kind, clip};
use crate::instant;
use crate::scan::{Cursor, parse_u64, split_with_offsets, trim_with_offset};

/// A repeating timer cycle.
///
/// `repetitions` counts the fires still to come, *including* the one whose
/// due instant the engine currently holds: a stored `R1` means "one more fire,
/// then done". That is why [`next_after_fire`](Self::next_after_fire) hands
/// back a decremented copy: the engine persists that copy next to the new due
/// instant, and a crash between fires loses nothing.
///
/// Display prints canonical text that [`parse`](Self::parse) reads back into
/// an equal value (instants as RFC 3339 UTC with `Z`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepeatCycle {
    /// Fires left; `None` repeats forever (or until `end`).
    pub repetitions: Option<u32>,
    /// Anchor of the schedule; without it the first fire is `now + period`.
    pub start: Option<Timestamp>,
    /// Time between fires; always positive, so a cycle can never spin.
    pub period: IsoDuration,
    /// No fire is due after this instant (a fire exactly at `end` still happens).
    pub end: Option<Timestamp>,
}

impl RepeatCycle {
    /// Parses a repeating interval. Rejects `R0` (it could never fire), a
    /// missing period, instants without a UTC offset, and an end before the
    /// start. Surrounding whitespace, also around each `/`, is ignored.
    pub fn parse(s: &str) -> Result<Self, Error> {
        let (lead, trimmed) = trim_with_offset(s);
        parse_piece(trimmed).map_err(|f| f.shift(lead).into_error(Kind::Cycle, s))
    }

    /// Due instant of the first fire given the current instant.
    ///
    /// Without a start the first fire is `now + period`. With a start in the
    /// future (or now) it is the start; with a start in the past it is the
    /// first `start + k × period` at or after `now`, so a cycle deployed late
    /// keeps its phase (a daily 08:00 timer stays at 08:00) instead of firing
    /// for every missed slot. Missed slots do not use up repetitions.
    /// `None` when that instant is after `end`: the cycle can never fire.
    pub fn first_due(&self, now: Timestamp) -> Result<Option<Timestamp>, Error> {
        let due = match self.start {
            None => self.period.add_times(now, 1),
            Some(start) if start >= now => Some(start),
            Some(start) => self.step_to(start, now, 0, false)?,
        };
        self.bounded(due)
    }

    /// Called after the fire that was due at `fired_due`; returns the cycle to
    /// store for the remaining fires and the next due instant, or `None` when
    /// the cycle is finished (repetitions used up, or next due after `end`).
    ///
    /// The next due is normally `fired_due + period`. **Missed fires policy:**
    /// if that is not after `now` (the engine was down, or the job ran late),
    /// the schedule skips forward to the first `fired_due + k × period` that is
    /// strictly after `now`, and only *one* repetition is consumed. Firing every
    /// missed slot would unleash a catch-up storm after an outage, and counting
    /// the skipped slots would make a bounded cycle silently end early; what
    /// callers want is "resume on the original grid, as if nothing happened".
    ///
    /// The returned cycle keeps `start`, `period` and `end` unchanged (so its
    /// grid stays the same) and has `repetitions` decremented: R3 → R2 → R1 →
    /// `None`. Unbounded cycles stay unbounded.
    ///
    /// Errors only when the next instant cannot be represented (past year
    /// 9999) and there is no end date that would have finished the cycle.
    pub fn next_after_fire(
        &self,
        fired_due: Timestamp,
        now: Timestamp,
    ) -> Result<Option<(RepeatCycle, Timestamp)>, Error> {
        let repetitions = match self.repetitions {
            Some(n) if n <= 1 => return Ok(None),
            Some(n) => Some(n - 1),
            None => None,
        };
        let due = self.step_to(fired_due, now, 1, true)?;
        let Some(due) = self.bounded(due)? else {
            return Ok(None);
        };
        let rest = RepeatCycle { repetitions, ..self.clone() };
        Ok(Some((rest, due)))
    }

    /// Applies `end` to a candidate due instant; `None` means "overflowed".
    fn bounded(&self, due: Option<Timestamp>) -> Result<Option<Timestamp>, Error> {
        match (due, self.end) {
            (Some(due), Some(end)) if due > end => Ok(None),
            (Some(due), _) => Ok(Some(due)),
            // Past the representable range is certainly past any end date.
            (None, Some(_)) => Ok(None),
            (None, None) => Err(Error::Overflow {
                what: format!("the next fire of {self} is after the latest representable instant"),
            }),
        }
    }

    /// The first `base + k × period` (with `k >= min_k`) at or after `target`,
    /// or strictly after it when `strict`. `Ok(None)` if it is unrepresentable.
    fn step_to(
        &self,
        base: Timestamp,
        target: Timestamp,
        min_k: i64,
        strict: bool,
    ) -> Result<Option<Timestamp>, Error> {
        let reached = |t: Timestamp| if strict { t > target } else { t >= target };
        if let Some(len) = self.period.fixed_nanos() {
            // Exact arithmetic: the answer is floor(diff / len) or one more.
            let diff = target.as_nanosecond() - base.as_nanosecond();
            let mut k = (diff.max(0) / len).max(i128::from(min_k));
            if !reached(step_fixed(base, len, k)) {
                k += 1;
            }
            let ns = base.as_nanosecond() + k * len;
            return Ok(Timestamp::from_nanosecond(ns).ok());
        }
        // Calendar periods have no fixed length: search on k instead. The
        // predicate is monotonic in k, and an unrepresentable instant counts as
        // reached (it lies past every target), so doubling then bisecting
        // needs at most ~2 × log2(k) additions.
        let sat = |k: i64| self.period.add_times(base, k).is_none_or(reached);
        if sat(min_k) {
            return Ok(self.period.add_times(base, min_k));
        }
        let (mut lo, mut step) = (min_k, 1i64);
        let mut hi = loop {
            let Some(hi) = lo.checked_add(step) else {
                return Ok(None);
            };
            if sat(hi) {
                break hi;
            }
            lo = hi;
            step = step.saturating_mul(2);
        };
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if sat(mid) { hi = mid } else { lo = mid }
        }
        Ok(self.period.add_times(base, hi))
    }
}

/// `base + k × len` compared as nanoseconds; saturates rather than failing
/// because it only feeds a comparison.
fn step_fixed(base: Timestamp, len: i128, k: i128) -> Timestamp {
    let ns = base.as_nanosecond().saturating_add(k.saturating_mul(len));
    Timestamp::from_nanosecond(ns).unwrap_or(Timestamp::MAX)
}

fn parse_piece(s: &str) -> Result<RepeatCycle, Fail> {
    if s.is_empty() {
        return Err(Fail::new(0, "empty repeating interval (expected e.g. R3/PT5M)"));
    }
    // Checked before splitting: `[Europe/Paris]` would otherwise be cut at its '/'.
    if let Some(at) = s.find('[') {
        let msg = "time zone annotations like [Europe/Paris] are not supported; the offset already fixes the instant";
        return Err(Fail::new(at, msg));
    }
    let parts: Vec<(usize, &str)> = split_with_offsets(s, '/').collect();
    let repetitions = parse_repetitions(parts[0].1)?;
    if parts.len() == 1 {
        return Err(Fail::new(s.len(), "missing period after the repetitions (e.g. R3/PT5M)"));
    }
    if let Some(&(at, _)) = parts.get(4) {
        let msg = "too many '/'-separated parts (at most R/start/period/end)";
        return Err(Fail::new(at - 1, msg));
    }
    // Trim each part and classify it: durations start with 'P' (or '-P').
    let mut rest = Vec::with_capacity(3);
    for &(at, raw) in &parts[1..] {
        let (lead, piece) = trim_with_offset(raw);
        if piece.is_empty() {
            return Err(Fail::new(at, "empty part between '/' separators"));
        }
        let upper = piece.to_ascii_uppercase();
        let is_duration = upper.starts_with('P') || upper.starts_with("-P");
        rest.push((at + lead, piece, is_duration));
    }
    let duration = |(at, piece, _): (usize, &str, bool)| {
        duration::parse_piece(piece)
            .map_err(|f| Fail::new(f.at, format!("period {:?}: {}", clip(piece), f.reason)).shift(at))
    };
    // An instant beyond the date library's years is refused in the words every instant field
    // uses (years 1970 through 9998), not the library's range.
    let instant = |(at, piece, _): (usize, &str, bool), role: &str| {
        instant::parse_piece(piece).map_err(|f| {
            let reason = if f.out_of_range { instant::outside_accepted_years(piece) } else { f.reason };
            Fail::new(f.at, format!("{role} {:?}: {reason}", clip(piece))).shift(at)
        })
    };
    let kinds: Vec<bool> = rest.iter().map(|r| r.2).collect();
    let (start, period, end) = match kinds.as_slice() {
        [true] => (None, duration(rest[0])?, None),
        [false, true] => (Some(instant(rest[0], "start")?), duration(rest[1])?, None),
        [true, false] => (None, duration(rest[0])?, Some(instant(rest[1], "end")?)),
        [true, true] => {
            let msg = "expected an end instant after the period, found another duration";
            return Err(Fail::new(rest[1].0, msg));
        }
        [false, true, false] => (Some(instant(rest[0], "start")?), duration(rest[1])?, Some(instant(rest[2], "end")?)),
        _ => {
            // Point at the first part that is not what the full form expects.
            let expect = [false, true, false];
            let i = kinds.iter().zip(expect).position(|(k, e)| *k != e).unwrap_or(0);
            let msg = match (i, kinds.len()) {
                (0, 1) => "missing period: expected a duration such as PT1H",
                (_, 2) => "missing period: start/end intervals are not supported; write R/start/period or R/period/end",
                (0, _) => "expected a start instant (or use R/period/end)",
                (1, _) => "expected the period duration after the start instant",
                _ => "expected an end instant after the period",
            };
            return Err(Fail::new(rest[i].0, msg));
        }
    };
    if let (Some(start), Some(end)) = (start, end)
        && end < start
    {
        let at = rest.last().map_or(0, |r| r.0);
        return Err(Fail::new(at, format!("end {end} is before start {start}")));
    }
    Ok(RepeatCycle { repetitions, start, period, end })
}

/// Parses `R`, `R<n>` (n >= 1). `None` means unbounded.
fn parse_repetitions(head: &str) -> Result<Option<u32>, Fail> {
    // The whole text is trimmed already; allow spaces before the first '/'.
    let mut c = Cursor::new(head.trim_end());
    if !c.eat(b'R') {
        return Err(c.unexpected("'R' to start a repeating interval (e.g. R3/PT5M)"));
    }
    let digits = c.digits();
    if !c.at_end() {
        return Err(c.unexpected("a repetition count or '/'"));
    }
    if digits.is_empty() {
        return Ok(None);
    }
    match parse_u64(digits).and_then(|n| u32::try_from(n).ok()) {
        None => Err(Fail::new(1, format!("repetition count {digits} is too large (at most {})", u32::MAX))),
        Some(0) => Err(Fail::new(1, "R0 would never fire: use R1 or more, or R for unbounded")),
        Some(n) => Ok(Some(n)),
    }
}

impl FromStr for RepeatCycle {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        RepeatCycle::parse(s)
    }
}

impl fmt::Display for RepeatCycle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("R")?;
        if let Some(n) = self.repetitions {
            write!(f, "{n}")?;
        }
        if let Some(start) = self.start {
            write!(f, "/{start}")?;
        }
        write!(f, "/{}", self.period)?;
        if let Some(end) = self.end {
            write!(f, "/{end}")?;
        }
        Ok(())
    }
}
