//! Store URLs (API.md): `sqlite://PATH` (the default, `sqlite://kairos.db`) or
//! `postgres://USER:PASS@HOST:PORT/DB`.

use crate::Error;
use kairos_store::Store;
use std::sync::Arc;

/// Opens the store a URL names. The schema is not touched; call `migrate()`.
pub async fn open_store(url: &str) -> Result<Arc<dyn Store>, Error> {
    if url.starts_with("sqlite:") {
        Ok(Arc::new(kairos_store_sqlite::SqliteStore::connect(url).await?))
    } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(Arc::new(kairos_store_postgres::PgStore::connect(url).await?))
    } else {
        Err(Error::Config(format!(
            "store URL \"{}\" is not understood: use sqlite://PATH or postgres://USER:PASS@HOST:PORT/DB",
            redact(url)
        )))
    }
}

/// Opens the store a URL names, and keeps its pool when it is PostgreSQL (the two-phase commit
/// works on that pool's connections directly).
pub(crate) async fn open_store_with_pool(url: &str) -> Result<(Arc<dyn Store>, Option<sqlx::PgPool>), Error> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        let store = kairos_store_postgres::PgStore::connect(url).await?;
        let pool = store.pool().clone();
        return Ok((Arc::new(store), Some(pool)));
    }
    Ok((open_store(url).await?, None))
}

/// The URL without a password, for messages.
pub(crate) fn redact(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(s), Some(at)) if at > s => {
            let userinfo = &url[s + 3..at];
            match userinfo.find(':') {
                Some(c) => format!("{}{}:***{}", &url[..s + 3], &userinfo[..c], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_are_not_shown() {
        assert_eq!(super::redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(super::redact("sqlite://x.db"), "sqlite://x.db");
    }
}
