//! Mapping sqlx's errors to the seam's [`ErrorKind`]s, once, so callers never see SQLSTATEs.

use kairos_store::{Error, ErrorKind};

/// Converts a sqlx error. The message names the SQLSTATE for operators; the kind is what
/// callers branch on.
pub(crate) fn db(e: sqlx::Error) -> Error {
    let kind = kind_of(&e);
    let message = match &e {
        sqlx::Error::Database(d) => match d.code() {
            Some(code) => format!("database error {code}: {}", d.message()),
            None => format!("database error: {}", d.message()),
        },
        other => other.to_string(),
    };
    Error::new(kind, message).with_source(e)
}

fn kind_of(e: &sqlx::Error) -> ErrorKind {
    match e {
        sqlx::Error::Database(d) => kind_of_sqlstate(d.code().as_deref().unwrap_or("")),
        sqlx::Error::RowNotFound => ErrorKind::NotFound,
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::WorkerCrashed
        | sqlx::Error::Protocol(_) => ErrorKind::Unavailable,
        sqlx::Error::Configuration(_) => ErrorKind::Invalid,
        _ => ErrorKind::Other,
    }
}

/// By SQLSTATE class (PostgreSQL appendix A).
fn kind_of_sqlstate(code: &str) -> ErrorKind {
    match code {
        // unique_violation, foreign_key_violation, exclusion_violation
        "23505" | "23503" | "23P01" => ErrorKind::Conflict,
        // not_null / check violations and data exceptions (value too long, out of range, bad
        // datetime or text representation): the input cannot be stored.
        "23502" | "23514" => ErrorKind::Invalid,
        c if c.starts_with("22") => ErrorKind::Invalid,
        // Wrong password or role, or a database that does not exist: a configuration error that
        // retrying will not cure.
        c if c.starts_with("28") || c == "3D000" => ErrorKind::Invalid,
        // serialization_failure, deadlock_detected: acquisition is designed so these never
        // happen; if one does, it is a bug to look at, not a blip to retry silently.
        "40001" | "40P01" => ErrorKind::Other,
        // query_canceled (statement_timeout), lock_not_available (lock_timeout): the database
        // is busy; retrying later is reasonable.
        "57014" | "55P03" => ErrorKind::Unavailable,
        // admin/crash shutdown, cannot connect now, connection exceptions, too many
        // connections and other resource exhaustion.
        c if c.starts_with("57P") || c.starts_with("08") || c.starts_with("53") => ErrorKind::Unavailable,
        _ => ErrorKind::Other,
    }
}

/// Shorthand for `.map_err(db)` on sqlx results.
pub(crate) trait DbResultExt<T> {
    fn db(self) -> Result<T, Error>;
}

impl<T> DbResultExt<T> for Result<T, sqlx::Error> {
    fn db(self) -> Result<T, Error> {
        self.map_err(db)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sqlstates_map_to_kinds() {
        assert_eq!(kind_of_sqlstate("23505"), ErrorKind::Conflict);
        assert_eq!(kind_of_sqlstate("22001"), ErrorKind::Invalid);
        assert_eq!(kind_of_sqlstate("40001"), ErrorKind::Other);
        assert_eq!(kind_of_sqlstate("40P01"), ErrorKind::Other);
        assert_eq!(kind_of_sqlstate("57P01"), ErrorKind::Unavailable);
        assert_eq!(kind_of_sqlstate("08006"), ErrorKind::Unavailable);
        assert_eq!(kind_of_sqlstate("53300"), ErrorKind::Unavailable);
        assert_eq!(kind_of_sqlstate("42P01"), ErrorKind::Other);
        assert_eq!(kind_of_sqlstate("28P01"), ErrorKind::Invalid);
    }

    #[test]
    fn broken_connections_are_unavailable() {
        let e = db(sqlx::Error::Io(std::io::Error::other("reset")));
        assert_eq!(e.kind, ErrorKind::Unavailable);
        assert_eq!(db(sqlx::Error::PoolTimedOut).kind, ErrorKind::Unavailable);
    }
}
