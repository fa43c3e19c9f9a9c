//! Rows kairos cannot read back ([`crate::Unreadable`]): one never stops the good rows beside
//! it. Acquisition sets it aside (to the dead letters, as stored, saying why) and takes the
//! rest; listings return it apart, naming table, id, column and stored text; a get of it says
//! the same as an error; a delete removes it.
//!
//! What can be bad differs by backend, so the fixtures do: SQLite keeps any value in any column
//! (text in RETRIES_, garbage in DUEDATE_); PostgreSQL's types hold, but an UPDATE can leave an
//! unknown TYPE_ or an instant jiff cannot represent (`infinity`).

use super::*;
use crate::{Backend, ErrorKind, JobFilter};

/// A corruption of one job row: the statement (`?` is the id) and the column it breaks.
type Corruption = (&'static str, &'static str);

/// Corruptions of rows acquisition would take (due now, unlocked, retries left).
fn due_corruptions(backend: Backend) -> Vec<Corruption> {
    match backend {
        Backend::Sqlite => vec![
            ("UPDATE ACT_RU_JOB SET DUEDATE_ = '0000-garbage' WHERE ID_ = ?", "DUEDATE_"),
            ("UPDATE ACT_RU_JOB SET DUEDATE_ = 12345 WHERE ID_ = ?", "DUEDATE_"),
            ("UPDATE ACT_RU_JOB SET TYPE_ = 'bogus' WHERE ID_ = ?", "TYPE_"),
            ("UPDATE ACT_RU_JOB SET RETRIES_ = 'abc' WHERE ID_ = ?", "RETRIES_"),
            ("UPDATE ACT_RU_JOB SET CREATE_TIME_ = 'yesterday' WHERE ID_ = ?", "CREATE_TIME_"),
        ],
        Backend::Postgres => vec![
            ("UPDATE ACT_RU_JOB SET DUEDATE_ = '-infinity' WHERE ID_ = ?", "DUEDATE_"),
            ("UPDATE ACT_RU_JOB SET CREATE_TIME_ = 'infinity' WHERE ID_ = ?", "CREATE_TIME_"),
        ],
    }
}

/// A corruption that leaves the row where acquisition never looks (not due / not a type it
/// runs), so only listings meet it.
fn idle_corruption(backend: Backend) -> Corruption {
    match backend {
        Backend::Sqlite => ("UPDATE ACT_RU_JOB SET DUEDATE_ = 'zzzz' WHERE ID_ = ?", "DUEDATE_"),
        Backend::Postgres => ("UPDATE ACT_RU_JOB SET TYPE_ = 'bogus' WHERE ID_ = ?", "TYPE_"),
    }
}

/// A job due a second before `t0`, then corrupted.
async fn corrupt(store: &dyn Store, t0: Timestamp, (sql, _): Corruption) -> String {
    let id = insert(store, due_at("work", t0 - secs(1))).await.id;
    assert_eq!(fixture(store, sql, &[text(&id)]).await, 1, "{sql}");
    id
}

fn unreadable_of(e: crate::Error) -> crate::Unreadable {
    assert_eq!(e.kind, ErrorKind::Unreadable, "{e:?}");
    *e.unreadable.expect("an Unreadable error names its row")
}

pub async fn acquire_sets_unreadable_rows_aside_and_takes_the_rest(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let mut healthy = Vec::new();
    for _ in 0..10 {
        healthy.push(insert(store, due_at("work", t0 - secs(1))).await.id);
    }
    let mut bad = Vec::new();
    for c in due_corruptions(store.backend()) {
        bad.push((corrupt(store, t0, c).await, c.1));
    }
    let mut taken = Vec::new();
    let mut set_aside = Vec::new();
    for _ in 0..4 {
        let a = acquire(store, "n1", Some(t0), 20, LOCK).await;
        taken.extend(ids(&a));
        set_aside.extend(a.set_aside);
    }
    assert_eq!(sorted(taken), sorted(healthy), "every healthy job is taken despite the bad rows");
    let mut aside: Vec<(String, String)> = set_aside.iter().map(|u| (u.id.clone(), u.column.clone())).collect();
    aside.sort();
    let mut want: Vec<(String, String)> = bad.iter().map(|(id, c)| (id.clone(), c.to_string())).collect();
    want.sort();
    assert_eq!(aside, want, "each bad row is set aside once, naming its column: {set_aside:?}");
    for u in &set_aside {
        assert_eq!(u.table, "ACT_RU_JOB");
        assert!(u.raw.is_some(), "the stored text is given: {u:?}");
    }

    // Set aside in the dead letters, as stored, saying why; acquisition never meets them again.
    assert!(acquire(store, "n2", Some(t0 + secs(600)), 20, LOCK).await.set_aside.is_empty());
    let listed = store.job_unreadable(100).await.expect("job_unreadable");
    for (id, column) in &bad {
        let u = listed.iter().find(|u| &u.id == id).unwrap_or_else(|| panic!("{id} listed in {listed:?}"));
        assert_eq!((u.table.as_str(), u.column.as_str()), ("ACT_RU_DEADLETTER_JOB", *column));
        let msg = scalar_text(store, "SELECT EXCEPTION_MSG_ FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = ?", id).await;
        assert!(msg.contains(column) && msg.contains("set aside"), "EXCEPTION_MSG_ says why: {msg}");
        let e = store.job_get(JobTable::DeadLetter, id).await.expect_err("an unreadable row cannot be got");
        assert_eq!(unreadable_of(e).column, *column);
    }
    let page = store.job_list(&JobFilter { table: JobTable::DeadLetter, ..JobFilter::default() }).await.unwrap();
    assert!(page.data.is_empty(), "no dead letter can be read: {:?}", page.data);
    assert_eq!(page.unreadable.len(), bad.len(), "listed apart, beside the good rows");
    for (id, _) in &bad {
        store.job_delete(JobTable::DeadLetter, id, false).await.expect("an unreadable row can be deleted");
    }
    assert!(store.job_unreadable(100).await.unwrap().is_empty());
}

async fn scalar_text(store: &dyn Store, sql: &str, id: &str) -> String {
    let rows = store.sql_query(sql, &[text(id)]).await.expect(sql);
    rows.first().and_then(|r| r.first()).and_then(|v| v.as_str()).unwrap_or_default().to_string()
}

pub async fn unreadable_rows_are_listed_got_and_deleted_by_name(store: &dyn Store) {
    let good = insert(store, message("work")).await;
    let c = idle_corruption(store.backend());
    let id = corrupt(store, ms(now(store).await), c).await;

    let page = store.job_list(&JobFilter::default()).await.expect("a list with a bad row still answers");
    assert_eq!(page.data.iter().map(|j| j.id.clone()).collect::<Vec<_>>(), vec![good.id.clone()]);
    assert_eq!(page.total, 2);
    assert_eq!(page.unreadable.len(), 1);
    let u = &page.unreadable[0];
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_JOB", id.as_str(), c.1));
    let raw = match store.backend() {
        Backend::Sqlite => "zzzz",
        Backend::Postgres => "bogus",
    };
    assert_eq!(u.raw.as_deref(), Some(raw), "the stored text");
    assert!(u.describe().contains(&id) && u.describe().contains(c.1));

    assert_eq!(store.job_unreadable(10).await.unwrap(), vec![u.clone()]);
    assert_eq!(unreadable_of(store.job_get(JobTable::Runtime, &id).await.unwrap_err()), u.clone());
    assert!(store.job_get(JobTable::Runtime, &good.id).await.unwrap().is_some(), "its neighbours read fine");
    store.job_next_due().await.expect("the next due date with a bad row");
    store.job_diagnostics(10).await.expect("diagnostics with a bad row");

    store.job_delete(JobTable::Runtime, &id, true).await.expect("a forced delete of an unreadable row");
    assert!(store.job_get(JobTable::Runtime, &id).await.unwrap().is_none());
    assert!(store.job_unreadable(10).await.unwrap().is_empty());
}

/// A dead letter that cannot be read is not moved back: the move is refused with the
/// unreadable-row error naming it, and nothing changes (it stays a dead letter, as stored).
pub async fn deadletter_move_of_an_unreadable_dead_letter_changes_nothing(store: &dyn Store) {
    let t0 = ms(now(store).await);
    let c = due_corruptions(store.backend())[0];
    let id = corrupt(store, t0, c).await;
    let a = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(a.set_aside.iter().map(|u| u.id.clone()).collect::<Vec<_>>(), vec![id.clone()]);
    let rev = scalar(store, "SELECT REV_ FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = ?", &[text(&id)]).await;

    let e = store.deadletter_move(&id, 3).await.expect_err("an unreadable dead letter is not moved");
    let u = unreadable_of(e);
    assert_eq!((u.table.as_str(), u.id.as_str(), u.column.as_str()), ("ACT_RU_DEADLETTER_JOB", id.as_str(), c.1));
    assert_eq!(scalar(store, "SELECT COUNT(*) FROM ACT_RU_JOB WHERE ID_ = ?", &[text(&id)]).await, 0, "not moved");
    assert_eq!(
        scalar(store, "SELECT REV_ FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = ?", &[text(&id)]).await,
        rev,
        "still a dead letter, unchanged"
    );
    let listed = store.job_unreadable(10).await.unwrap();
    assert_eq!(
        listed.iter().map(|u| (u.table.as_str(), u.id.as_str())).collect::<Vec<_>>(),
        [("ACT_RU_DEADLETTER_JOB", id.as_str())]
    );
}

/// SQLite keeps a BLOB in any column (`UPDATE ACT_RU_JOB SET RETRIES_ = X'01'`): such a row is
/// an unreadable row like any other, its stored value shown as the SQL literal (`x'01'`):
/// acquisition sets it aside and takes the rest, listings and gets name it. (PostgreSQL's
/// column types refuse a bytea, so there is nothing to check there.)
pub async fn a_blob_in_a_job_column_is_an_unreadable_row(store: &dyn Store) {
    if store.backend() != Backend::Sqlite {
        return;
    }
    let t0 = ms(now(store).await);
    let healthy = insert(store, due_at("work", t0 - secs(1))).await.id;
    let retries = corrupt(store, t0, ("UPDATE ACT_RU_JOB SET RETRIES_ = X'01' WHERE ID_ = ?", "RETRIES_")).await;
    let lock = corrupt(store, t0, ("UPDATE ACT_RU_JOB SET LOCK_TIME_ = X'00ff' WHERE ID_ = ?", "LOCK_TIME_")).await;
    let idle = corrupt(store, t0, ("UPDATE ACT_RU_JOB SET DUEDATE_ = X'00ff' WHERE ID_ = ?", "DUEDATE_")).await;

    let page = store.job_list(&JobFilter::default()).await.expect("a list with a BLOB in a row still answers");
    assert_eq!(page.data.iter().map(|j| j.id.clone()).collect::<Vec<_>>(), vec![healthy.clone()]);
    let mut named: Vec<(String, String, Option<String>)> =
        page.unreadable.iter().map(|u| (u.id.clone(), u.column.clone(), u.raw.clone())).collect();
    named.sort();
    let mut want = vec![
        (retries.clone(), "RETRIES_".to_string(), Some("x'01'".to_string())),
        (lock.clone(), "LOCK_TIME_".to_string(), Some("x'00ff'".to_string())),
        (idle.clone(), "DUEDATE_".to_string(), Some("x'00ff'".to_string())),
    ];
    want.sort();
    assert_eq!(named, want, "each named with its column and the stored bytes");
    let u = unreadable_of(store.job_get(JobTable::Runtime, &idle).await.unwrap_err());
    assert_eq!((u.column.as_str(), u.raw.as_deref()), ("DUEDATE_", Some("x'00ff'")));
    assert_eq!(store.job_unreadable(10).await.unwrap().len(), 3, "the scan finds all three");
    store.job_counts().await.expect("counts with a BLOB in a row");
    store.job_next_due().await.expect("the next due date with a BLOB in a row");
    store.job_diagnostics(10).await.expect("diagnostics with a BLOB in a row");

    let a = acquire(store, "n1", Some(t0), 10, LOCK).await;
    assert_eq!(ids(&a), vec![healthy], "the healthy job is taken");
    let mut aside: Vec<String> = a.set_aside.iter().map(|u| u.id.clone()).collect();
    aside.sort();
    let mut due = vec![retries.clone(), lock.clone()];
    due.sort();
    assert_eq!(aside, due, "the due ones are set aside: {:?}", a.set_aside);
    let page = store.job_list(&JobFilter { table: JobTable::DeadLetter, ..JobFilter::default() }).await.unwrap();
    // As stored, but unlocked: the bad LOCK_TIME_ is cleared with the lock, so that one reads.
    assert_eq!(page.unreadable.iter().map(|u| u.id.clone()).collect::<Vec<_>>(), vec![retries.clone()]);
    assert_eq!(page.data.iter().map(|j| j.id.clone()).collect::<Vec<_>>(), vec![lock.clone()]);
    for id in [&retries, &lock] {
        store.job_delete(JobTable::DeadLetter, id, false).await.expect("a BLOB row can be deleted");
    }
    store.job_delete(JobTable::Runtime, &idle, true).await.expect("a forced delete of a BLOB row");
    assert!(store.job_unreadable(10).await.unwrap().is_empty());
}
