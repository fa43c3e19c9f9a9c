//! `sqlx::migrate!` embeds `migrations/` at compile time, and cargo does not watch a directory
//! it was not told about: without this, a new migration file is left out of an incremental
//! build (sqlx's documented build script).
fn main() {
    println!("cargo:rerun-if-changed=migrations");
}
