//! The engine's own SQL primitives ([`Sql::read`], [`Sql::write_all`]): what the process
//! engine builds on, so both backends must agree on them exactly.

use super::*;
use crate::{ErrorKind, Write};

fn task_insert(id: &str, created: Timestamp) -> Write {
    Write::new(
        "INSERT INTO ACT_RU_TASK (ID_, REV_, NAME_, PRIORITY_, CREATE_TIME_, SUSPENSION_STATE_, TENANT_ID_) VALUES (?, 1, ?, 50, ?, 1, '')",
        vec![SqlValue::Text(id.into()), SqlValue::Text(format!("task {id}")), SqlValue::Timestamp(created)],
    )
    .expect(1)
}

pub async fn write_all_commits_every_statement_and_read_decodes_them(store: &dyn Store) {
    let t = ms(now(store).await);
    let exec = Write::new(
        "INSERT INTO ACT_RU_EXECUTION (ID_, REV_, PROC_INST_ID_, IS_ACTIVE_, IS_SCOPE_, SUSPENSION_STATE_, TENANT_ID_, START_TIME_, SUPER_EXEC_) VALUES (?, 1, ?, ?, ?, 1, '', ?, ?)",
        vec![
            SqlValue::Text("e-1".into()),
            SqlValue::Text("e-1".into()),
            SqlValue::Bool(false),
            SqlValue::Bool(true),
            SqlValue::Timestamp(t),
            SqlValue::Text("caller".into()),
        ],
    )
    .expect(1);
    let affected = store.write_all(&[exec, task_insert("t-1", t)]).await.expect("write_all");
    assert_eq!(affected, vec![1, 1]);
    let rows = store
        .read(
            "SELECT ID_, IS_ACTIVE_, IS_SCOPE_, START_TIME_, REV_, SUPER_EXEC_ID_ FROM ACT_RU_EXECUTION WHERE ID_ = ?",
            &[SqlValue::Text("e-1".into())],
        )
        .await
        .expect("read");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert_eq!(r[0].as_str(), Some("e-1"));
    assert_eq!(r[1].as_bool(), Some(false), "IS_ACTIVE_ reads back as a boolean: {:?}", r[1]);
    assert_eq!(r[2].as_bool(), Some(true));
    assert_eq!(r[3].as_timestamp(), Some(t), "START_TIME_ round-trips: {:?}", r[3]);
    assert_eq!(r[4].as_i64(), Some(1));
    assert_eq!(r[5].as_str(), Some("caller"), "SUPER_EXEC_ID_ mirrors SUPER_EXEC_ (seed 003 §3.3)");
}

pub async fn write_all_rolls_back_everything_on_an_unexpected_row_count(store: &dyn Store) {
    let t = ms(now(store).await);
    store.write_all(&[task_insert("t-1", t)]).await.expect("fixture");
    // A REV_-checked update of a row whose REV_ moved on: nothing of the batch may stay.
    let stale = Write::new(
        "UPDATE ACT_RU_TASK SET REV_ = REV_ + 1, NAME_ = ? WHERE ID_ = ? AND REV_ = ?",
        vec![SqlValue::Text("renamed".into()), SqlValue::Text("t-1".into()), SqlValue::Int(7)],
    )
    .expect(1);
    let err = store.write_all(&[task_insert("t-2", t), stale]).await.expect_err("a stale REV_ must conflict");
    assert_eq!(err.kind, ErrorKind::Conflict, "{err}");
    assert!(err.message.contains("statement 1"), "the message names the statement: {err}");
    let rows = store.read("SELECT ID_, NAME_ FROM ACT_RU_TASK ORDER BY ID_", &[]).await.expect("read");
    assert_eq!(rows.len(), 1, "t-2 was rolled back: {rows:?}");
    assert_eq!(rows[0][1].as_str(), Some("task t-1"), "t-1 unchanged");
    // A duplicate key is a conflict too, and also rolls back.
    let err = store.write_all(&[task_insert("t-3", t), task_insert("t-1", t)]).await.expect_err("duplicate id");
    assert_eq!(err.kind, ErrorKind::Conflict, "{err}");
    let n = store.read("SELECT COUNT(*) FROM ACT_RU_TASK", &[]).await.expect("read");
    assert_eq!(n[0][0].as_i64(), Some(1));
}

/// Lists of plain inserts from concurrent commands (process starts): PostgreSQL commits those
/// that arrive together in one statement, which must look exactly like one commit each.
pub async fn concurrent_insert_lists_each_commit_and_a_bad_one_fails_alone(store: &dyn Store) {
    let t = ms(now(store).await);
    store.write_all(&[task_insert("taken", t)]).await.expect("fixture");
    let list = |i: usize| {
        // Unchecked inserts (as a start writes them); list 27 repeats a taken id.
        let id = if i == 27 { "taken".to_string() } else { format!("t-{i}") };
        let mut one = task_insert(&id, t);
        one.expect = None;
        let two = Write::new(
            "INSERT INTO ACT_RU_IDENTITYLINK (ID_, REV_, TYPE_, USER_ID_, TASK_ID_) VALUES (?, 1, 'candidate', ?, ?), (?, 1, 'candidate', ?, ?)",
            ["a", "b"]
                .iter()
                .flat_map(|u| [format!("l-{i}-{u}"), (*u).to_string(), id.clone()])
                .map(SqlValue::Text)
                .collect(),
        );
        vec![one, two]
    };
    let lists: Vec<Vec<Write>> = (0..40).map(list).collect();
    // Two rounds: good lists only (written together), then one bad list among good ones.
    for round in [&lists[..20], &lists[20..]] {
        let results = futures::future::join_all(round.iter().map(|l| store.write_all(l))).await;
        for (r, l) in results.iter().zip(round) {
            let i = l[0].binds[0].as_str().map(str::to_owned);
            match r {
                Ok(counts) => {
                    assert_ne!(i.as_deref(), Some("taken"), "a list repeating a taken id must fail");
                    assert_eq!(counts, &vec![1, 2], "list {i:?}: the rows each statement wrote");
                }
                Err(e) => {
                    assert_eq!(i.as_deref(), Some("taken"), "only the list repeating a taken id fails: {e}");
                    assert_eq!(e.kind, ErrorKind::Conflict, "{e}");
                }
            }
        }
    }
    let n = |sql| async move { store.read(sql, &[]).await.expect("read")[0][0].as_i64() };
    assert_eq!(n("SELECT COUNT(*) FROM ACT_RU_TASK").await, Some(1 + 39), "each good list's task, the fixture's");
    assert_eq!(
        n("SELECT COUNT(*) FROM ACT_RU_IDENTITYLINK").await,
        Some(2 * 39),
        "the failed list left none of its rows"
    );
}
