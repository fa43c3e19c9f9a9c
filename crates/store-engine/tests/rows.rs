//! [`kairos_store_engine::Rows`] on both backends: a value stored with the wrong type is named,
//! never read as a default.

mod common;

use kairos_store::{ErrorKind, SqlValue, Store};
use kairos_store_engine::Rows;
use std::sync::Arc;

async fn a_bad_value_is_named_by_table_row_and_column(store: Arc<dyn Store>) {
    store
        .sql_execute(
            "INSERT INTO ACT_RE_DEPLOYMENT (ID_, NAME_, DEPLOY_TIME_) VALUES ('d1', 'n', CURRENT_TIMESTAMP)",
            &[],
        )
        .await
        .unwrap();
    let rows = Rows::read(
        &*store,
        "ACT_RE_DEPLOYMENT",
        &["ID_", "NAME_", "DEPLOY_TIME_"],
        "SELECT ID_, NAME_, DEPLOY_TIME_ FROM ACT_RE_DEPLOYMENT WHERE ID_ = ?",
        &[SqlValue::Text("d1".into())],
    )
    .await
    .unwrap();
    let row = rows.first().unwrap();
    assert_eq!(row.text("NAME_").unwrap(), "n");
    assert!(row.instant("DEPLOY_TIME_").is_ok());
    let e = row.int("NAME_").unwrap_err();
    assert_eq!(e.kind, ErrorKind::Unreadable);
    assert!(e.message.contains("ACT_RE_DEPLOYMENT row d1"), "{}", e.message);
}

on_both_backends!(a_bad_value_is_named_by_table_row_and_column);
