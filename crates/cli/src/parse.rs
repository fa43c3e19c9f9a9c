//! Value parsers for the command line, and the payload reader.
//!
//! Durations, instants and cycles use kairos-time's grammar, the same one the engine stores,
//! so `--in 5min` is refused with the position of the mistake instead of being guessed at.

use crate::exit::CliError;
use jiff::{SignedDuration, Timestamp};
use kairos_time::{IsoDuration, RepeatCycle, RetryCycle};
use std::io::Read;

/// A payload file larger than this is refused before it is parsed; the engine's own limit
/// (1 MiB of compact JSON) applies after parsing.
const MAX_PAYLOAD_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// `on` or `off`.
pub fn on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("'{s}' is neither on nor off")),
    }
}

/// An ISO 8601 duration as a length (`PT5M`, `PT0.5S`, `P1D`). Calendar units are measured from
/// now, the only sensible anchor for a setting.
pub fn duration(s: &str) -> Result<SignedDuration, String> {
    let d = IsoDuration::parse(s).map_err(|e| e.to_string())?;
    d.to_signed_duration_at(Timestamp::now()).map_err(|e| e.to_string())
}

/// An ISO 8601 duration that may be zero (`PT0S`, `P0D`): for settings where zero means "off"
/// or "keep everything", which kairos-time's grammar refuses (a zero-length timer would spin).
pub fn duration_or_zero(s: &str) -> Result<SignedDuration, String> {
    duration(s).or_else(|e| match jiff::fmt::temporal::SpanParser::new().parse_span(s.trim()) {
        Ok(span) if span.is_zero() => Ok(SignedDuration::ZERO),
        _ => Err(e),
    })
}

/// An ISO 8601 duration kept as text (the engine resolves it against the database clock).
pub fn duration_text(s: &str) -> Result<String, String> {
    IsoDuration::parse(s).map(|d| d.as_str().to_string()).map_err(|e| e.to_string())
}

/// An RFC 3339 instant with an offset.
pub fn instant(s: &str) -> Result<Timestamp, String> {
    kairos_core::instant::parse_accepted(s)
}

/// A failedJobRetryTimeCycle (`R5/PT10M`, `PT1M,PT5M`).
pub fn retry_cycle(s: &str) -> Result<String, String> {
    RetryCycle::parse(s).map(|c| c.to_string()).map_err(|e| e.to_string())
}

/// A repeating timer cycle (`R3/PT5M`, `R/2026-01-01T08:00:00Z/P1D`).
pub fn repeat_cycle(s: &str) -> Result<String, String> {
    RepeatCycle::parse(s).map(|c| c.to_string()).map_err(|e| e.to_string())
}

/// `HOST:PORT` with a numeric port; the host is resolved when binding.
pub fn listen_addr(s: &str) -> Result<String, String> {
    let Some((host, port)) = s.rsplit_once(':') else {
        return Err("expected HOST:PORT, e.g. 127.0.0.1:8080".into());
    };
    if host.is_empty() {
        return Err("the host is missing: expected HOST:PORT, e.g. 0.0.0.0:8080".into());
    }
    port.parse::<u16>().map_err(|_| format!("port \"{port}\" is not a number from 0 to 65535"))?;
    Ok(s.to_string())
}

/// Reads `--payload`: inline JSON, `@FILE`, or `@-` for stdin. Errors say what was wrong
/// without echoing the document.
pub fn payload(arg: &str) -> Result<serde_json::Value, CliError> {
    let text = match arg.strip_prefix('@') {
        Some("-") => read_limited(std::io::stdin().lock(), "stdin")?,
        Some(path) => {
            let file = std::fs::File::open(path)
                .map_err(|e| CliError::bad_input(format!("invalid payload: cannot read {path}: {e}")))?;
            read_limited(file, path)?
        }
        None => arg.to_string(),
    };
    serde_json::from_str(&text).map_err(|e| CliError::bad_input(format!("invalid payload: {e}")))
}

fn read_limited(r: impl Read, what: &str) -> Result<String, CliError> {
    let mut buf = Vec::new();
    r.take(MAX_PAYLOAD_FILE_BYTES + 1)
        .read_to_end(&mut buf)
        .map_err(|e| CliError::bad_input(format!("invalid payload: cannot read {what}: {e}")))?;
    if buf.len() as u64 > MAX_PAYLOAD_FILE_BYTES {
        return Err(CliError::bad_input(format!(
            "invalid payload: {what} is over {} MiB; a job payload may be 1 MiB at most",
            MAX_PAYLOAD_FILE_BYTES / (1024 * 1024)
        )));
    }
    String::from_utf8(buf).map_err(|_| CliError::bad_input(format!("invalid payload: {what} is not UTF-8 text")))
}

/// `--api-token`: long enough to be a secret, able to travel in a header.
pub fn api_token(s: &str) -> Result<String, String> {
    kairos_server::access::check_token(s)?;
    Ok(s.to_string())
}

/// `--allowed-host`: a host name without scheme or port, lower case; a leading `.` allows
/// the name and its subdomains.
pub fn allowed_host(s: &str) -> Result<String, String> {
    let name = s.trim().trim_end_matches('.').to_ascii_lowercase();
    let bare = name.strip_prefix('.').unwrap_or(&name);
    let ok = !bare.is_empty()
        && bare.split('.').all(|l| !l.is_empty() && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-'));
    if ok {
        Ok(name)
    } else {
        Err(format!(
            "'{s}' is not a host name (such as kairos.example.com, or .example.com for its subdomains too); give no scheme or port"
        ))
    }
}

/// `--allowed-origin`: `http://` or `https://` and a host with an optional port, as browsers
/// send it in `Origin` (no path, no trailing slash); lower case.
pub fn allowed_origin(s: &str) -> Result<String, String> {
    let origin = s.trim().trim_end_matches('/').to_ascii_lowercase();
    let fail = || format!("'{s}' is not an origin such as https://console.example.com or http://localhost:3000");
    let (scheme, authority) = origin.split_once("://").ok_or_else(fail)?;
    if !matches!(scheme, "http" | "https") || authority.contains(['/', '?', '#', '@']) {
        return Err(fail());
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map(|(h, _)| h).ok_or_else(fail)?,
        None => {
            authority.rsplit_once(':').map_or(authority, |(h, port)| if port.parse::<u16>().is_ok() { h } else { "" })
        }
    };
    if host.is_empty() {
        return Err(fail());
    }
    Ok(origin)
}

/// `--map FROM=TO` of `kairos migrate-instance`: two activity ids.
pub fn activity_mapping(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((from, to)) if !from.trim().is_empty() && !to.trim().is_empty() => {
            Ok((from.trim().to_string(), to.trim().to_string()))
        }
        _ => Err(format!("'{s}' is not FROM=TO (two activity ids, such as review=check)")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activity_mappings_are_two_ids() {
        assert_eq!(activity_mapping(" review = check").unwrap(), ("review".into(), "check".into()));
        for bad in ["review", "=check", "review=", ""] {
            assert!(activity_mapping(bad).unwrap_err().contains("FROM=TO"), "{bad}");
        }
    }

    #[test]
    fn durations_follow_iso_8601_only() {
        assert_eq!(duration("PT5M").unwrap(), SignedDuration::from_mins(5));
        assert_eq!(duration("PT0.5S").unwrap(), SignedDuration::from_millis(500));
        assert!(duration("5min").unwrap_err().contains("position"));
        assert!(duration_text("5 minutes").is_err());
        assert_eq!(duration_text("pt5m").unwrap(), "PT5M");
    }

    #[test]
    fn zero_is_a_duration_only_where_it_means_off() {
        assert!(duration("PT0S").is_err());
        for zero in ["PT0S", "P0D", "pt0s", " PT0.0S "] {
            assert_eq!(duration_or_zero(zero), Ok(SignedDuration::ZERO), "{zero}");
        }
        assert_eq!(duration_or_zero("PT1H").unwrap(), SignedDuration::from_hours(1));
        assert!(duration_or_zero("0").unwrap_err().contains("position"));
        assert!(duration_or_zero("-PT1S").is_err());
    }

    #[test]
    fn allowed_hosts_are_names_and_origins_are_scheme_and_authority() {
        assert_eq!(allowed_host("Kairos.Example.com").unwrap(), "kairos.example.com");
        assert_eq!(allowed_host(".example.com").unwrap(), ".example.com");
        for bad in ["", "http://x", "x:8080", "a..b", "a/b"] {
            assert!(allowed_host(bad).is_err(), "{bad}");
        }
        assert_eq!(allowed_origin("https://Console.example.com/").unwrap(), "https://console.example.com");
        assert!(allowed_origin("http://localhost:3000").is_ok());
        assert!(allowed_origin("http://[::1]:3000").is_ok());
        for bad in ["console.example.com", "ftp://x", "https://x/app", "https://", "http://x:port"] {
            assert!(allowed_origin(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn listen_addresses_need_a_numeric_port() {
        assert!(listen_addr("127.0.0.1:0").is_ok());
        assert!(listen_addr("[::1]:8080").is_ok());
        assert!(listen_addr("localhost").is_err());
        assert!(listen_addr("localhost:http").is_err());
        assert!(listen_addr(":8080").is_err());
    }

    #[test]
    fn payload_errors_name_the_position_but_not_the_document() {
        let e = payload("{bad").unwrap_err();
        assert_eq!(e.code, crate::exit::BAD_INPUT);
        assert!(e.message.starts_with("invalid payload: key must be a string at line 1 column 2"), "{}", e.message);
        assert_eq!(payload("{\"a\":1}").unwrap(), serde_json::json!({"a": 1}));
    }

    #[test]
    fn payload_files_are_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("p.json");
        std::fs::write(&p, b"[1,2,3]").unwrap();
        assert_eq!(payload(&format!("@{}", p.display())).unwrap(), serde_json::json!([1, 2, 3]));
        let e = payload(&format!("@{}", dir.path().join("missing").display())).unwrap_err();
        assert!(e.message.contains("cannot read"), "{}", e.message);
    }
}
