//! A parsed expression as sets of local wall-clock values, and the searches over civil
//! (time-zone-free) datetimes: the next matching one, and the end of a run of matching seconds.
//!
//! Everything here is on civil time; `zone.rs` maps civil times to instants (the DST policy).
//! The searches advance field by field (year → month → day → hour → minute → second), never
//! second by second, and stop after [`MAX_YEAR`].

use jiff::civil::DateTime;

/// The first year an expression can fire in (Quartz: 1970).
pub(crate) const MIN_YEAR: i16 = 1970;
/// The last year an expression can fire in. Quartz stops at the current year + 100, which
/// depends on the wall clock; kairos fixes the bound at Quartz's documented 2099.
pub(crate) const MAX_YEAR: i16 = 2099;

const ALL_SECONDS: u64 = (1 << 60) - 1;
const ALL_HOURS: u32 = (1 << 24) - 1;

/// Which days of a month fire. Quartz lets exactly one of day-of-month and day-of-week
/// choose the days (the other is `?`); each variant is one of its forms.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Days {
    /// Days of the month (bits 1..=31): `*`, lists, ranges, steps.
    OfMonth(u32),
    /// `L` / `L-n`: the last day of the month, minus `n`.
    Last { offset: u8 },
    /// `LW` / `L-nW`: the weekday nearest to the last day minus `n`.
    LastWeekday { offset: u8 },
    /// `nW`: the weekday nearest to day `n`, without leaving the month.
    NearestWeekday(u8),
    /// Days of the week (bits 1..=7, 1 = Sunday): `*`, lists, ranges, steps, `L` alone (7).
    OfWeek(u8),
    /// `nL`: the last given weekday of the month.
    LastOfWeek(u8),
    /// `n#k`: the k-th given weekday of the month.
    NthOfWeek { weekday: u8, nth: u8 },
}

/// The seven fields as sets (bit `v` set = value `v` fires; years are bits `y - 1970`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Schedule {
    pub seconds: u64,
    pub minutes: u64,
    pub hours: u32,
    pub days: Days,
    pub months: u16,
    pub years: [u64; 3],
}

/// A time of day.
type Hms = (u8, u8, u8);
const MIDNIGHT: Hms = (0, 0, 0);

impl Schedule {
    /// Whether the hour field is every hour of the day: such a schedule is interval-like and
    /// keeps firing through a repeated (fall-back) hour.
    pub fn all_hours(&self) -> bool {
        self.hours == ALL_HOURS
    }

    fn has_year(&self, year: i16) -> bool {
        year_index(year).is_some_and(|i| self.years[i / 64] >> (i % 64) & 1 == 1)
    }

    /// The first year in the set at or after `year`.
    fn next_year(&self, year: i16) -> Option<i16> {
        let from = year.max(MIN_YEAR);
        (from..=MAX_YEAR).find(|&y| self.has_year(y))
    }

    /// The days of `month` in `year` that fire, as bits 1..=31.
    pub fn month_days(&self, year: i16, month: u8) -> u32 {
        let last = days_in_month(year, month);
        let bit = |d: u8| if (1..=last).contains(&d) { 1u32 << d } else { 0 };
        match self.days {
            Days::OfMonth(mask) => mask & month_mask(last),
            Days::Last { offset } => bit(last.saturating_sub(offset)),
            Days::LastWeekday { offset } => match last.checked_sub(offset) {
                Some(d) if d >= 1 => bit(nearest_weekday(year, month, d, last)),
                _ => 0,
            },
            // A month without day n has no nearest weekday to it (as `31` skips short months).
            // Quartz's answer there depends on where its search enters the month: see
            // docs/cron.md, "Deliberate divergences".
            Days::NearestWeekday(n) if (1..=last).contains(&n) => bit(nearest_weekday(year, month, n, last)),
            Days::NearestWeekday(_) => 0,
            Days::OfWeek(mask) => {
                let first = weekday(year, month, 1);
                (1..=last).filter(|d| mask >> ((first - 1 + (d - 1)) % 7 + 1) & 1 == 1).fold(0, |acc, d| acc | 1 << d)
            }
            Days::LastOfWeek(w) => {
                let back = (weekday(year, month, last) + 7 - w) % 7;
                bit(last - back)
            }
            Days::NthOfWeek { weekday: w, nth } => {
                let first = 1 + (w + 7 - weekday(year, month, 1)) % 7;
                bit(first + 7 * nth.saturating_sub(1))
            }
        }
    }

    fn day_matches(&self, year: i16, month: u8, day: u8) -> bool {
        self.has_year(year) && self.months >> month & 1 == 1 && self.month_days(year, month) >> day & 1 == 1
    }

    /// Whether a civil datetime matches every field.
    pub fn matches(&self, at: DateTime) -> bool {
        let (y, mo, d) = (at.year(), at.month() as u8, at.day() as u8);
        self.day_matches(y, mo, d)
            && self.hours >> at.hour() & 1 == 1
            && self.minutes >> at.minute() & 1 == 1
            && self.seconds >> at.second() & 1 == 1
    }

    /// The first matching civil datetime at or after `from`, or None past [`MAX_YEAR`].
    pub fn next_match(&self, from: DateTime) -> Option<DateTime> {
        let (mut year, mut month, mut day) = (from.year(), from.month() as u8, from.day() as u8);
        let mut time: Hms = (from.hour() as u8, from.minute() as u8, from.second() as u8);
        if year < MIN_YEAR {
            (year, month, day, time) = (MIN_YEAR, 1, 1, MIDNIGHT);
        }
        loop {
            let next_year = self.next_year(year)?;
            if next_year != year {
                (year, month, day, time) = (next_year, 1, 1, MIDNIGHT);
            }
            match next_bit(u64::from(self.months), u32::from(month)) {
                None => {
                    (year, month, day, time) = (year + 1, 1, 1, MIDNIGHT);
                    continue;
                }
                Some(m) if m as u8 != month => (month, day, time) = (m as u8, 1, MIDNIGHT),
                Some(_) => {}
            }
            let mut days = self.month_days(year, month) & (u32::MAX << day);
            while days != 0 {
                let d = days.trailing_zeros() as u8;
                let lower = if d == day { time } else { MIDNIGHT };
                if let Some((h, mi, s)) = self.next_time(lower) {
                    return DateTime::new(year, month as i8, d as i8, h as i8, mi as i8, s as i8, 0).ok();
                }
                days &= days - 1;
            }
            (month, day, time) = (month + 1, 1, MIDNIGHT);
            if month > 12 {
                (year, month) = (year + 1, 1);
            }
        }
    }

    /// The first matching time of day at or after `lower`, on any matching day.
    fn next_time(&self, (lh, lm, ls): Hms) -> Option<Hms> {
        let mut hour = next_bit(u64::from(self.hours), u32::from(lh))?;
        loop {
            let same_hour = hour == u32::from(lh);
            let mut minute = next_bit(self.minutes, if same_hour { u32::from(lm) } else { 0 });
            while let Some(m) = minute {
                let from = if same_hour && m == u32::from(lm) { u32::from(ls) } else { 0 };
                if let Some(s) = next_bit(self.seconds, from) {
                    return Some((hour as u8, m as u8, s as u8));
                }
                minute = next_bit(self.minutes, m + 1);
            }
            hour = next_bit(u64::from(self.hours), hour + 1)?;
        }
    }

    /// Given a matching civil datetime `at`, the first later civil datetime that does not
    /// match, or `bound` if every second before `bound` matches. Jumps by whole minutes,
    /// hours and days where the fields allow it.
    pub fn run_end(&self, at: DateTime, bound: DateTime) -> DateTime {
        let end = self.run_end_unbounded(at, bound).unwrap_or(bound);
        end.min(bound)
    }

    fn run_end_unbounded(&self, at: DateTime, bound: DateTime) -> Option<DateTime> {
        let date = at.date();
        let (h, m, s) = (at.hour() as u32, at.minute() as u32, at.second() as u32);
        let at_hms = |d: jiff::civil::Date, h: u32, m: u32, s: u32| d.at(h as i8, m as i8, s as i8, 0);
        if self.seconds != ALL_SECONDS {
            if let Some(s2) = next_zero(self.seconds, s + 1, 60) {
                return Some(at_hms(date, h, m, s2));
            }
            let next = at.date().at(h as i8, m as i8, 0, 0).checked_add(jiff::SignedDuration::from_mins(1)).ok()?;
            return Some(if self.matches(next) {
                next.with().second(next_zero(self.seconds, 0, 60)? as i8).build().ok()?
            } else {
                next
            });
        }
        if self.minutes != ALL_SECONDS {
            if let Some(m2) = next_zero(self.minutes, m + 1, 60) {
                return Some(at_hms(date, h, m2, 0));
            }
            let next = at.date().at(h as i8, 0, 0, 0).checked_add(jiff::SignedDuration::from_hours(1)).ok()?;
            return Some(if self.matches(next) {
                next.with().minute(next_zero(self.minutes, 0, 60)? as i8).build().ok()?
            } else {
                next
            });
        }
        if self.hours != ALL_HOURS {
            if let Some(h2) = next_zero(u64::from(self.hours), h + 1, 24) {
                return Some(at_hms(date, h2, 0, 0));
            }
            let next = date.tomorrow().ok()?.at(0, 0, 0, 0);
            return Some(if self.matches(next) {
                next.with().hour(next_zero(u64::from(self.hours), 0, 24)? as i8).build().ok()?
            } else {
                next
            });
        }
        // Every second of a matching day matches: walk whole days.
        let mut day = date.tomorrow().ok()?;
        while day <= bound.date() && self.day_matches(day.year(), day.month() as u8, day.day() as u8) {
            day = day.tomorrow().ok()?;
        }
        Some(day.at(0, 0, 0, 0))
    }
}

fn year_index(year: i16) -> Option<usize> {
    (MIN_YEAR..=MAX_YEAR).contains(&year).then(|| (year - MIN_YEAR) as usize)
}

/// Builds the year bit set from the years a field names (each in MIN_YEAR..=MAX_YEAR).
pub(crate) fn year_bits(years: impl IntoIterator<Item = u32>) -> [u64; 3] {
    let mut bits = [0u64; 3];
    for y in years {
        if let Some(i) = i16::try_from(y).ok().and_then(year_index) {
            bits[i / 64] |= 1 << (i % 64);
        }
    }
    bits
}

/// The lowest set bit at or above `from`.
fn next_bit(mask: u64, from: u32) -> Option<u32> {
    if from >= 64 {
        return None;
    }
    let rest = mask & (u64::MAX << from);
    (rest != 0).then(|| rest.trailing_zeros())
}

/// The lowest clear bit in `from..limit`.
fn next_zero(mask: u64, from: u32, limit: u32) -> Option<u32> {
    next_bit(!mask, from).filter(|&b| b < limit)
}

fn month_mask(last: u8) -> u32 {
    // Bits 1..=last.
    (u32::MAX >> (31 - last)) & !1
}

pub(crate) fn days_in_month(year: i16, month: u8) -> u8 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

fn is_leap(year: i16) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

const SUNDAY: u8 = 1;
const SATURDAY: u8 = 7;

/// Quartz's day-of-week numbering: 1 = Sunday … 7 = Saturday.
pub(crate) fn weekday(year: i16, month: u8, day: u8) -> u8 {
    // Days since 1970-01-01 (a Thursday), by the civil-from-days inverse (H. Hinnant).
    let (y, m, d) = (i64::from(year) - i64::from(month <= 2), i64::from(month), i64::from(day));
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days + 4).rem_euclid(7) + 1) as u8
}

/// Quartz's `W` rule: the weekday nearest `day`, never leaving the month (a Saturday 1st
/// moves to Monday the 3rd, a Sunday last day to Friday).
fn nearest_weekday(year: i16, month: u8, day: u8, last: u8) -> u8 {
    match weekday(year, month, day) {
        SATURDAY if day == 1 => 3,
        SATURDAY => day - 1,
        SUNDAY if day == last => day - 2,
        SUNDAY => day + 1,
        _ => day,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weekday_matches_jiff() {
        for (y, m, d) in [(1970, 1, 1), (2000, 2, 29), (2024, 3, 10), (2099, 12, 31), (1999, 12, 31)] {
            let ours = weekday(y, m, d);
            let jiffs = jiff::civil::date(y, m as i8, d as i8).weekday().to_sunday_one_offset() as u8;
            assert_eq!(ours, jiffs, "{y}-{m}-{d}");
        }
    }

    #[test]
    fn month_mask_covers_the_month() {
        assert_eq!(month_mask(31).count_ones(), 31);
        assert_eq!(month_mask(28).count_ones(), 28);
        assert_eq!(month_mask(28) & 1, 0);
    }
}
