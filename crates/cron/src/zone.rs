//! From civil matches to instants: kairos's DST policy (`docs/cron.md`).
//!
//! * A matching local time that does not exist (spring-forward gap) fires once, at the gap's
//!   end; every matching time in one gap, and the gap's end itself, collapse into that firing.
//! * A matching local time that occurs twice (fall-back fold) fires at its first occurrence;
//!   when the hour field is every hour the schedule is interval-like and fires at both.
//!
//! Every other local time maps to its one instant, as in Quartz.

use jiff::tz::{AmbiguousOffset, Offset, TimeZone};
use jiff::{SignedDuration, Timestamp};

use crate::schedule::Schedule;

const SECOND: SignedDuration = SignedDuration::from_secs(1);
/// Bounds the segments `next_invalid_after` walks (two transitions a year up to 2099).
const MAX_SEGMENTS: usize = 10_000;

/// A fall-back transition: at `at` the offset drops from `before` to `after`, so the civil
/// times `[at + after, at + before)` occur twice.
#[derive(Clone, Copy, Debug)]
struct Fold {
    at: Timestamp,
    before: Offset,
    after: Offset,
}

impl Fold {
    fn length(&self) -> SignedDuration {
        SignedDuration::from_secs(i64::from(self.before.seconds() - self.after.seconds()))
    }
    /// Whether `t` is a second occurrence (it lies in `[at, at + length)`).
    fn repeats(&self, t: Timestamp) -> bool {
        t >= self.at && self.at.checked_add(self.length()).is_ok_and(|end| t < end)
    }
}

/// What the zone does around an instant.
struct Around {
    /// `t` is exactly the end of a spring-forward gap; the civil time the gap starts at.
    gap_end: Option<jiff::civil::DateTime>,
    /// The fold whose first or second occurrences contain `t`.
    fold: Option<Fold>,
}

fn offset_before(tz: &TimeZone, at: Timestamp) -> Offset {
    at.checked_sub(SignedDuration::from_nanos(1)).map_or_else(|_| tz.to_offset(at), |t| tz.to_offset(t))
}

fn around(tz: &TimeZone, t: Timestamp) -> Around {
    let mut out = Around { gap_end: None, fold: None };
    let just_after = t.checked_add(SignedDuration::from_nanos(1)).unwrap_or(t);
    if let Some(prev) = tz.preceding(just_after).next() {
        let (before, after) = (offset_before(tz, prev.timestamp()), prev.offset());
        if after > before && prev.timestamp() == t {
            out.gap_end = Some(before.to_datetime(t));
        }
        let fold = Fold { at: prev.timestamp(), before, after };
        if before > after && fold.repeats(t) {
            out.fold = Some(fold);
        }
    }
    if out.fold.is_none()
        && let Some(next) = tz.following(t).next()
    {
        let fold = Fold { at: next.timestamp(), before: tz.to_offset(t), after: next.offset() };
        // `t` is a first occurrence of a civil time the fold repeats.
        if fold.before > fold.after && next.timestamp().checked_sub(fold.length()).is_ok_and(|s| t >= s) {
            out.fold = Some(fold);
        }
    }
    out
}

/// The instant a matching civil time fires at: its only instant, its first occurrence in a
/// fold, or the end of the gap it falls in.
fn first_instant(tz: &TimeZone, civil: jiff::civil::DateTime) -> Option<Timestamp> {
    match tz.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset.to_timestamp(civil).ok(),
        AmbiguousOffset::Fold { before, .. } => before.to_timestamp(civil).ok(),
        AmbiguousOffset::Gap { after, .. } => {
            // `civil - after` lies just before the transition that opened the gap.
            let inside = after.to_timestamp(civil).ok()?;
            tz.following(inside).next().map(|tr| tr.timestamp())
        }
    }
}

/// Truncates to the whole second (towards the past), as Quartz drops milliseconds.
pub(crate) fn floor_second(t: Timestamp) -> Option<Timestamp> {
    let secs = t.as_second() - i64::from(t.subsec_nanosecond() < 0);
    Timestamp::from_second(secs).ok()
}

/// The first firing strictly after the whole second containing `after`.
pub(crate) fn next_after(schedule: &Schedule, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
    let start = floor_second(after)?.checked_add(SECOND).ok()?;
    let civil = tz.to_datetime(start);
    let around = around(tz, start);
    // The civil times at or after `lower` are exactly those whose first firing is at or
    // after `start` (the map from civil time to first firing never goes backwards).
    let mut lower = civil;
    if let Some(gap_start) = around.gap_end {
        lower = gap_start;
    }
    if let Some(fold) = around.fold.filter(|f| f.repeats(start)) {
        lower = fold.before.to_datetime(fold.at);
    }
    let first = schedule.next_match(lower).and_then(|c| first_instant(tz, c));
    // Second occurrences fire only for every-hour schedules, and only the fold around
    // `start` can hold one earlier than `first`.
    let second = match around.fold {
        Some(fold) if schedule.all_hours() => {
            let from = if start >= fold.at { civil } else { fold.after.to_datetime(fold.at) };
            let until = fold.before.to_datetime(fold.at);
            schedule.next_match(from).filter(|&c| c < until).and_then(|c| fold.after.to_timestamp(c).ok())
        }
        _ => None,
    };
    match (first, second) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// Whether the whole second `t` (already truncated) fires.
fn fires(schedule: &Schedule, t: Timestamp, tz: &TimeZone) -> bool {
    t.checked_sub(SECOND).ok().and_then(|before| next_after(schedule, before, tz)) == Some(t)
}

pub(crate) fn is_satisfied_by(schedule: &Schedule, t: Timestamp, tz: &TimeZone) -> bool {
    floor_second(t).is_some_and(|t| fires(schedule, t, tz))
}

/// The first whole second after `after` that does not fire. Runs of firing seconds are
/// skipped field by field within each stretch of constant offset.
pub(crate) fn next_invalid_after(schedule: &Schedule, after: Timestamp, tz: &TimeZone) -> Option<Timestamp> {
    let mut t = floor_second(after)?.checked_add(SECOND).ok()?;
    for _ in 0..MAX_SEGMENTS {
        if !fires(schedule, t, tz) {
            return Some(t);
        }
        let around = around(tz, t);
        let offset = tz.to_offset(t);
        let civil = offset.to_datetime(t);
        if around.gap_end.is_some() || !schedule.matches(civil) {
            // A gap's end can fire for the gap's civil times: step over it.
            t = t.checked_add(SECOND).ok()?;
            continue;
        }
        // Until the next transition (or the end of the repeated stretch) a second fires
        // exactly when its civil time matches.
        let mut segment_end = tz.following(t).next().map(|tr| tr.timestamp());
        if let Some(fold) = around.fold.filter(|f| f.repeats(t)) {
            let end = fold.at.checked_add(fold.length()).ok()?;
            segment_end = Some(segment_end.map_or(end, |s| s.min(end)));
        }
        let bound = match segment_end {
            Some(end) => offset.to_datetime(end),
            None => jiff::civil::date(crate::schedule::MAX_YEAR + 1, 1, 2).at(0, 0, 0, 0),
        };
        let run_end = schedule.run_end(civil, bound);
        let next = offset.to_timestamp(run_end).ok()?;
        match segment_end {
            Some(end) if next >= end => t = end,
            _ => return Some(next),
        }
    }
    None
}
