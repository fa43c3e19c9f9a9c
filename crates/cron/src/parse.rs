//! The parser: text → [`Schedule`], or a [`CronError`] naming the field and the 1-based
//! character position of the offending token.
//!
//! The grammar is Quartz 2.3's. Where Quartz accepts text and then silently ignores part of
//! it, misreads it, loops or crashes, kairos refuses it; each such case is listed in
//! `docs/cron.md` ("Deliberate divergences").

use crate::schedule::{Days, MAX_YEAR, MIN_YEAR, Schedule, year_bits};
use crate::{CronError, Field};

const MONTHS: [&str; 12] = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// `L-n` offsets Quartz accepts (`L-30` is the 1st of a 31-day month).
const MAX_LAST_OFFSET: u32 = 30;
/// `L-nW` offsets kairos accepts: with a larger one the day before the `W` rule can fall
/// before the 1st of February, where Quartz loops.
const MAX_LAST_WEEKDAY_OFFSET: u32 = 27;

/// Parses a whole expression. `text` is what the caller gave (positions count from its
/// first character); the fields are read from its trimmed form.
pub(crate) fn parse(text: &str) -> Result<Schedule, CronError> {
    let trimmed = text.trim();
    let lead = text[..text.len() - text.trim_start().len()].chars().count();
    let chars: Vec<char> = trimmed.chars().collect();
    let p = Parser { chars: &chars, lead };
    p.expression()
}

struct Parser<'a> {
    chars: &'a [char],
    /// Characters before the trimmed text.
    lead: usize,
}

/// One whitespace-separated field: its characters and the index of the first.
#[derive(Clone, Copy)]
struct Token<'a> {
    chars: &'a [char],
    start: usize,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Second,
    Minute,
    Hour,
    DayOfMonth,
    Month,
    DayOfWeek,
    Year,
}

impl Kind {
    fn field(self) -> Field {
        match self {
            Kind::Second => Field::Second,
            Kind::Minute => Field::Minute,
            Kind::Hour => Field::Hour,
            Kind::DayOfMonth => Field::DayOfMonth,
            Kind::Month => Field::Month,
            Kind::DayOfWeek => Field::DayOfWeek,
            Kind::Year => Field::Year,
        }
    }

    fn range(self) -> (u32, u32) {
        match self {
            Kind::Second | Kind::Minute => (0, 59),
            Kind::Hour => (0, 23),
            Kind::DayOfMonth => (1, 31),
            Kind::Month => (1, 12),
            Kind::DayOfWeek => (1, 7),
            Kind::Year => (MIN_YEAR as u32, MAX_YEAR as u32),
        }
    }

    /// The largest step Quartz accepts after `*` or a single value (it checks none after a
    /// range, nor in the year field).
    fn max_step(self) -> u32 {
        match self {
            Kind::Year => u32::MAX,
            _ => self.range().1,
        }
    }

    /// The cycle a wrapping range (`22-2`, `FRI-MON`) wraps around, as Quartz counts it.
    fn modulus(self) -> Option<u32> {
        match self {
            Kind::Second | Kind::Minute => Some(60),
            Kind::Hour => Some(24),
            Kind::DayOfMonth => Some(31),
            Kind::Month => Some(12),
            Kind::DayOfWeek => Some(7),
            Kind::Year => None,
        }
    }

    fn names(self) -> Option<&'static [&'static str]> {
        match self {
            Kind::Month => Some(&MONTHS),
            Kind::DayOfWeek => Some(&WEEKDAYS),
            _ => None,
        }
    }
}

/// What a day field says on its own, before the two are combined.
enum DaySpec {
    NoSpec,
    Days(Days),
}

/// A parsed value and whether it was written as a name.
#[derive(Clone, Copy)]
struct Value {
    value: u32,
    named: bool,
}

impl<'a> Parser<'a> {
    fn err(&self, kind: Option<Kind>, index: usize, message: impl Into<String>) -> CronError {
        CronError {
            field: kind.map_or(Field::Expression, Kind::field),
            position: self.lead + index + 1,
            message: message.into(),
        }
    }

    fn expression(&self) -> Result<Schedule, CronError> {
        let tokens = self.tokens();
        if tokens.is_empty() {
            return Err(CronError {
                field: Field::Expression,
                position: 1,
                message: "the expression is empty: expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year])".into(),
            });
        }
        if tokens.len() < 6 {
            let message = format!(
                "expected 6 or 7 fields (second minute hour day-of-month month day-of-week [year]), found {}",
                tokens.len()
            );
            return Err(self.err(None, self.chars.len(), message));
        }
        if tokens.len() > 7 {
            return Err(self.err(
                None,
                tokens[7].start,
                format!("expected at most 7 fields (the 7th is the year), found {}", tokens.len()),
            ));
        }
        let seconds = self.list(Kind::Second, tokens[0])?;
        let minutes = self.list(Kind::Minute, tokens[1])?;
        let hours = self.list(Kind::Hour, tokens[2])?;
        let dom = self.day_of_month(tokens[3])?;
        let months = self.list(Kind::Month, tokens[4])?;
        let dow = self.day_of_week(tokens[5])?;
        let years = match tokens.get(6) {
            Some(&t) => self.list(Kind::Year, t)?,
            None => (MIN_YEAR as u32..=MAX_YEAR as u32).collect(),
        };
        let days = match (dom, dow) {
            (DaySpec::Days(days), DaySpec::NoSpec) | (DaySpec::NoSpec, DaySpec::Days(days)) => days,
            (DaySpec::NoSpec, DaySpec::NoSpec) => {
                return Err(self.err(
                    Some(Kind::DayOfWeek),
                    tokens[5].start,
                    "day-of-month and day-of-week are both '?': exactly one of them must be '?'",
                ));
            }
            (DaySpec::Days(_), DaySpec::Days(_)) => {
                return Err(self.err(
                    Some(Kind::DayOfWeek),
                    tokens[5].start,
                    "day-of-month and day-of-week are both given: exactly one of them must be '?' (Quartz supports no combination)",
                ));
            }
        };
        Ok(Schedule {
            seconds: mask64(&seconds),
            minutes: mask64(&minutes),
            hours: mask64(&hours) as u32,
            days,
            months: mask64(&months) as u16,
            years: year_bits(years),
        })
    }

    /// Splits on spaces and tabs, the separators Quartz knows.
    fn tokens(&self) -> Vec<Token<'a>> {
        let mut out = Vec::new();
        let mut i = 0;
        while i < self.chars.len() {
            if is_separator(self.chars[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < self.chars.len() && !is_separator(self.chars[i]) {
                i += 1;
            }
            out.push(Token { chars: &self.chars[start..i], start });
        }
        out
    }

    /// A comma-separated list of `*`, `*/s`, `/s`, `v`, `v/s`, `a-b`, `a-b/s` → the values.
    fn list(&self, kind: Kind, token: Token<'_>) -> Result<Vec<u32>, CronError> {
        let mut values = Vec::new();
        for item in split_list(token) {
            if item.chars.is_empty() {
                return Err(self.err(Some(kind), item.start.saturating_sub(1).max(token.start), "empty list item"));
            }
            if token.chars.contains(&',') {
                self.refuse_special_in_list(kind, item)?;
            }
            values.extend(self.item(kind, item)?);
        }
        Ok(values)
    }

    /// `L`, `W`, `#` and `?` stand alone in their field; Quartz ignores or misreads them in
    /// a list.
    fn refuse_special_in_list(&self, kind: Kind, item: Token<'_>) -> Result<(), CronError> {
        for (i, &c) in item.chars.iter().enumerate() {
            let c = c.to_ascii_uppercase();
            let what = match (c, kind) {
                ('?', Kind::DayOfMonth | Kind::DayOfWeek) => "'?'",
                ('L', Kind::DayOfMonth) => "'L'",
                ('L', Kind::DayOfWeek) => "'L'",
                ('W', Kind::DayOfMonth) => "'W'",
                ('#', Kind::DayOfWeek) => "'#'",
                _ => continue,
            };
            return Err(self.err(
                Some(kind),
                item.start + i,
                format!("{what} cannot be used in a list; it must stand alone in the field"),
            ));
        }
        Ok(())
    }

    fn item(&self, kind: Kind, item: Token<'_>) -> Result<Vec<u32>, CronError> {
        let (min, max) = kind.range();
        let mut cur = Cursor { chars: item.chars, i: 0, base: item.start };
        match cur.peek() {
            Some('*') | Some('/') => {
                if cur.peek() == Some('*') {
                    cur.bump();
                }
                let step = match cur.peek() {
                    None => 1,
                    Some('/') => self.step(kind, &mut cur, true)?,
                    Some(c) => return Err(self.unexpected(kind, &cur, c, "after '*'")),
                };
                self.end(kind, &cur)?;
                Ok(expand(min, max, step))
            }
            Some('?') if matches!(kind, Kind::DayOfMonth | Kind::DayOfWeek) => {
                Err(self.err(Some(kind), cur.pos(), "'?' must stand alone in the field"))
            }
            Some('?') => Err(self.err(
                Some(kind),
                cur.pos(),
                format!("'?' is only allowed in the day-of-month or day-of-week field, not in {}", kind.field()),
            )),
            _ => {
                let start = self.value(kind, &mut cur)?;
                match cur.peek() {
                    None => Ok(vec![start.value]),
                    Some('-') => {
                        cur.bump();
                        let end_at = cur.pos();
                        let end = self.value(kind, &mut cur)?;
                        if end.named != start.named {
                            return Err(self.err(
                                Some(kind),
                                end_at,
                                "a range takes names at both ends or numbers at both ends",
                            ));
                        }
                        let step = match cur.peek() {
                            None => 1,
                            Some('/') if start.named => {
                                return Err(self.err(
                                    Some(kind),
                                    cur.pos(),
                                    "a step cannot follow a named range (Quartz ignores it); use numbers",
                                ));
                            }
                            Some('/') => self.step(kind, &mut cur, false)?,
                            Some(c) => return Err(self.unexpected(kind, &cur, c, "after the range")),
                        };
                        self.end(kind, &cur)?;
                        self.range(kind, start.value, end.value, step, end_at)
                    }
                    Some('/') if start.named => Err(self.err(
                        Some(kind),
                        cur.pos(),
                        "a step cannot follow a name (Quartz ignores it); use a number",
                    )),
                    Some('/') => {
                        let step = self.step(kind, &mut cur, true)?;
                        self.end(kind, &cur)?;
                        Ok(expand(start.value, max, step))
                    }
                    Some(c) => Err(self.unexpected(kind, &cur, c, "after the value")),
                }
            }
        }
    }

    /// `a-b/step`, wrapping past the field's end the way Quartz does (`22-2`, `NOV-FEB`).
    fn range(&self, kind: Kind, start: u32, end: u32, step: u32, end_at: usize) -> Result<Vec<u32>, CronError> {
        if start <= end {
            return Ok(expand(start, end, step));
        }
        let Some(modulus) = kind.modulus() else {
            return Err(self.err(
                Some(kind),
                end_at,
                format!("the year range ends ({end}) before it starts ({start})"),
            ));
        };
        let one_based = kind.range().0 == 1;
        Ok((start..=end + modulus)
            .step_by(step as usize)
            .map(|i| match i % modulus {
                0 if one_based => modulus,
                v => v,
            })
            .collect())
    }

    /// A number or (month, day-of-week) a three-letter name, within the field's range.
    fn value(&self, kind: Kind, cur: &mut Cursor<'_>) -> Result<Value, CronError> {
        let at = cur.pos();
        let (min, max) = kind.range();
        match cur.peek() {
            Some(c) if c.is_ascii_digit() => {
                let value = self.number(kind, cur)?;
                if value < min || value > max {
                    return Err(self.err(
                        Some(kind),
                        at,
                        format!("{value} is out of range: {} values are {min}-{max}", kind.field()),
                    ));
                }
                Ok(Value { value, named: false })
            }
            Some(c) if c.is_ascii_alphabetic() => {
                let word = cur.word();
                let Some(names) = kind.names() else {
                    return Err(self.err(
                        Some(kind),
                        at,
                        format!("unexpected '{word}': {} takes numbers ({min}-{max})", kind.field()),
                    ));
                };
                match names.iter().position(|n| *n == word) {
                    Some(i) => Ok(Value { value: i as u32 + 1, named: true }),
                    None => Err(self.err(
                        Some(kind),
                        at,
                        format!(
                            "unknown name '{word}': {} names are {}-{}",
                            kind.field(),
                            names[0],
                            names[names.len() - 1]
                        ),
                    )),
                }
            }
            Some(c) => Err(self.unexpected(kind, cur, c, "where a value was expected")),
            None => Err(self.err(Some(kind), at, "a value is missing")),
        }
    }

    fn number(&self, kind: Kind, cur: &mut Cursor<'_>) -> Result<u32, CronError> {
        let at = cur.pos();
        let mut value: u32 = 0;
        let mut any = false;
        while let Some(c) = cur.peek().filter(char::is_ascii_digit) {
            any = true;
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(c as u32 - '0' as u32))
                .ok_or_else(|| self.err(Some(kind), at, "number too large"))?;
            cur.bump();
        }
        if !any {
            return Err(self.err(Some(kind), at, "a number is missing"));
        }
        Ok(value)
    }

    /// `/step` (the cursor is on the `/`). Quartz checks the step's size after `*` and after
    /// a single value, not after a range.
    fn step(&self, kind: Kind, cur: &mut Cursor<'_>, checked: bool) -> Result<u32, CronError> {
        let slash = cur.pos();
        cur.bump();
        if !cur.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.err(Some(kind), slash, "'/' must be followed by a step (a positive number)"));
        }
        let at = cur.pos();
        let step = self.number(kind, cur)?;
        if step == 0 {
            return Err(self.err(Some(kind), at, "the step must be at least 1"));
        }
        if checked && step > kind.max_step() {
            return Err(self.err(Some(kind), at, format!("the step {step} is larger than {}", kind.max_step())));
        }
        Ok(step)
    }

    fn end(&self, kind: Kind, cur: &Cursor<'_>) -> Result<(), CronError> {
        match cur.peek() {
            None => Ok(()),
            Some(c) => Err(self.unexpected(kind, cur, c, "at the end of the value")),
        }
    }

    fn unexpected(&self, kind: Kind, cur: &Cursor<'_>, c: char, context: &str) -> CronError {
        self.err(Some(kind), cur.pos(), format!("unexpected character '{c}' {context}"))
    }

    /// `?`, `L`, `L-n`, `LW`, `L-nW`, `nW`, or a list of days.
    fn day_of_month(&self, token: Token<'_>) -> Result<DaySpec, CronError> {
        let kind = Kind::DayOfMonth;
        let upper: Vec<char> = token.chars.iter().map(char::to_ascii_uppercase).collect();
        if upper == ['?'] {
            return Ok(DaySpec::NoSpec);
        }
        if token.chars.contains(&',') {
            return Ok(DaySpec::Days(Days::OfMonth(mask64(&self.list(kind, token)?) as u32)));
        }
        let mut cur = Cursor { chars: &upper, i: 0, base: token.start };
        if cur.peek() == Some('L') {
            cur.bump();
            let mut offset = 0;
            let mut at = cur.pos();
            if cur.peek() == Some('-') {
                cur.bump();
                at = cur.pos();
                if !cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(self.err(Some(kind), at, "'L-' must be followed by a number of days (0-30)"));
                }
                offset = self.number(kind, &mut cur)?;
                if offset > MAX_LAST_OFFSET {
                    return Err(self.err(
                        Some(kind),
                        at,
                        format!("the offset from the last day must be at most {MAX_LAST_OFFSET}, not {offset}"),
                    ));
                }
            }
            let weekday = cur.peek() == Some('W');
            if weekday {
                cur.bump();
                if offset > MAX_LAST_WEEKDAY_OFFSET {
                    return Err(self.err(
                        Some(kind),
                        at,
                        format!("with 'W' the offset from the last day must be at most {MAX_LAST_WEEKDAY_OFFSET}, not {offset} (the day could fall before the 1st)"),
                    ));
                }
            }
            self.end(kind, &cur)?;
            let offset = offset as u8;
            return Ok(DaySpec::Days(if weekday { Days::LastWeekday { offset } } else { Days::Last { offset } }));
        }
        if upper.last() == Some(&'W') && upper.len() > 1 {
            let at = cur.pos();
            if !cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.unexpected(kind, &cur, token.chars[0], "before 'W' (expected a day 1-31)"));
            }
            let day = self.number(kind, &mut cur)?;
            if !(1..=31).contains(&day) {
                return Err(self.err(Some(kind), at, format!("'W' needs a day of the month 1-31, not {day}")));
            }
            if cur.i != upper.len() - 1 {
                return Err(self.unexpected(kind, &cur, token.chars[cur.i], "before 'W'"));
            }
            return Ok(DaySpec::Days(Days::NearestWeekday(day as u8)));
        }
        Ok(DaySpec::Days(Days::OfMonth(mask64(&self.list(kind, token)?) as u32)))
    }

    /// `?`, `L` (Saturday), `nL`, `n#k`, or a list of weekdays.
    fn day_of_week(&self, token: Token<'_>) -> Result<DaySpec, CronError> {
        let kind = Kind::DayOfWeek;
        let upper: Vec<char> = token.chars.iter().map(char::to_ascii_uppercase).collect();
        if upper == ['?'] {
            return Ok(DaySpec::NoSpec);
        }
        if upper == ['L'] {
            // Quartz reads a lone `L` in day-of-week as 7, Saturday.
            return Ok(DaySpec::Days(Days::OfWeek(1 << 7)));
        }
        if !token.chars.contains(&',') {
            if let Some(hash) = upper.iter().position(|&c| c == '#') {
                let mut cur = Cursor { chars: &upper[..hash], i: 0, base: token.start };
                let weekday = self.value(kind, &mut cur)?;
                self.end(kind, &cur)?;
                let mut cur = Cursor { chars: &upper, i: hash + 1, base: token.start };
                let at = cur.pos();
                if !cur.peek().is_some_and(|c| c.is_ascii_digit()) {
                    return Err(self.err(Some(kind), at, "'#' must be followed by a number 1-5"));
                }
                let nth = self.number(kind, &mut cur)?;
                if !(1..=5).contains(&nth) {
                    return Err(self.err(Some(kind), at, format!("'#' must be followed by a number 1-5, not {nth}")));
                }
                self.end(kind, &cur)?;
                return Ok(DaySpec::Days(Days::NthOfWeek { weekday: weekday.value as u8, nth: nth as u8 }));
            }
            if upper.len() > 1 && upper.last() == Some(&'L') {
                let mut cur = Cursor { chars: &upper[..upper.len() - 1], i: 0, base: token.start };
                let weekday = self.value(kind, &mut cur)?;
                self.end(kind, &cur)?;
                return Ok(DaySpec::Days(Days::LastOfWeek(weekday.value as u8)));
            }
        }
        let values = self.list(kind, token)?;
        Ok(DaySpec::Days(Days::OfWeek(mask64(&values) as u8)))
    }
}

fn is_separator(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// The comma-separated items of a field (empty ones included, to be refused).
fn split_list(token: Token<'_>) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, &c) in token.chars.iter().enumerate() {
        if c == ',' {
            out.push(Token { chars: &token.chars[start..i], start: token.start + start });
            start = i + 1;
        }
    }
    out.push(Token { chars: &token.chars[start..], start: token.start + start });
    out
}

fn expand(from: u32, to: u32, step: u32) -> Vec<u32> {
    (from..=to).step_by(step.max(1) as usize).collect()
}

/// Values 0..=63 as bits (years are kept apart; see `year_bits`).
fn mask64(values: &[u32]) -> u64 {
    values.iter().filter(|&&v| v < 64).fold(0, |acc, v| acc | 1 << v)
}

struct Cursor<'a> {
    chars: &'a [char],
    i: usize,
    /// Index of `chars[0]` in the trimmed text.
    base: usize,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).map(char::to_ascii_uppercase)
    }
    fn bump(&mut self) {
        self.i += 1;
    }
    fn pos(&self) -> usize {
        self.base + self.i
    }
    /// Consecutive ASCII letters, upper-cased.
    fn word(&mut self) -> String {
        let mut w = String::new();
        while let Some(c) = self.peek().filter(char::is_ascii_alphabetic) {
            w.push(c);
            self.bump();
        }
        w
    }
}
