//! The engine's own tables as typed operations over the storage seam.
//!
//! The job tables have a method each on [`kairos_store::Store`], implemented per backend. The
//! process runtime's, the history's, the scheduler's and the doctor's tables are read and written
//! with one statement text for both backends, through [`Sql::read`] and [`Sql::write_all`]
//! (the [`kairos_store::Dialect`] covers the few spellings that differ). Those texts live here,
//! behind typed functions, so that nothing in `kairos` or `kairos-server` writes SQL and every
//! statement is pinned by this crate's tests on both backends (`tests/`).
//!
//! Rows are decoded by column name ([`Row`]): a value that cannot be read is an error naming the
//! table, the column and the row ([`kairos_store::ErrorKind::Unreadable`]), never a default.
//!
//! [`Sql::read`]: kairos_store::Sql::read
//! [`Sql::write_all`]: kairos_store::Sql::write_all

pub mod business;
mod row;

pub mod commands;
pub mod doctor;
pub mod identity;
pub mod incidents;
pub mod outbox;
pub mod process;
pub mod reconcile;
pub mod saga;
pub mod scheduler;
pub mod tenants;

pub use row::{Row, Rows};
