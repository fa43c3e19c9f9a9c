//! Instants as callers send them: RFC 3339 text, in the years every field accepts.
//!
//! A request's instant fields (`dueDate`, a trigger's `startTime` and `endTime`) are read with
//! [`accepted`], so an instant outside [`kairos_time::ACCEPTED_YEARS`] gets the same message in
//! every field (naming the field: the JSON extractor adds it) instead of a date library's
//! overflow text, and year 0000 is refused everywhere alike.

use jiff::Timestamp;
use serde::{Deserialize, Deserializer};

/// Reads an optional RFC 3339 instant and refuses it outside the accepted years.
pub fn accepted<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Timestamp>, D::Error> {
    let Some(text) = Option::<String>::deserialize(d)? else { return Ok(None) };
    parse_accepted(&text).map(Some).map_err(serde::de::Error::custom)
}

/// [`kairos_time::parse_instant`], refusing instants outside the accepted years with one
/// message whatever the year (beyond jiff's range too).
pub fn parse_accepted(text: &str) -> Result<Timestamp, String> {
    let year = text.trim().get(..4).and_then(|y| y.parse::<i16>().ok());
    match kairos_time::parse_instant(text) {
        Ok(t) => kairos_time::check_accepted_instant(t).map(|()| t),
        Err(_) if year.is_some_and(|y| !kairos_time::ACCEPTED_YEARS.contains(&y)) => {
            Err(kairos_time::outside_accepted_years(text.trim()))
        }
        Err(e) => Err(e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_message_for_every_year_outside_the_range() {
        for bad in ["9999-12-31T23:59:59Z", "0000-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "9999-01-01T00:00:00Z"] {
            let e = parse_accepted(bad).unwrap_err();
            assert!(e.contains("years 1970 through 9998"), "{bad}: {e}");
        }
        assert!(parse_accepted("1970-01-01T00:00:00Z").is_ok());
        assert!(parse_accepted("9998-12-31T23:59:59Z").is_ok());
        assert!(parse_accepted("2026-13-01T00:00:00Z").unwrap_err().contains("month"));
    }
}
