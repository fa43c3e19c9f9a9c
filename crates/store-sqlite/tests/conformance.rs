//! The storage seam's conformance suite against SQLite: every case on a fresh database file.

mod common;

kairos_store::conformance_suite!(async {
    Some(Box::new(common::TempStore::new().await) as Box<dyn kairos_store::Store>)
});
