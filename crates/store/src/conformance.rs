//! The conformance suite: every behaviour of [`Store`], pinned once and run against every
//! backend. "The store does X" means "a case here checks X".
//!
//! A backend's test harness expands [`conformance_suite!`](crate::conformance_suite) with a
//! factory that returns a fresh, migrated store (or `None` when its database is unavailable):
//!
//! ```ignore
//! kairos_store::conformance_suite!(async {
//!     let store = make_a_fresh_store().await?;
//!     Some(Box::new(store) as Box<dyn kairos_store::Store>)
//! });
//! ```
//!
//! Each case is a `pub async fn name(store: &dyn Store)` that panics with a message saying what
//! the store did wrong. Cases use only the [`Store`] trait; fixtures go through
//! [`Store::sql_execute`] with `?` placeholders and SQL that SQLite and PostgreSQL both accept
//! (TRUE/FALSE literals, instants bound as [`SqlValue::Timestamp`]). Nothing sleeps: time is
//! pinned through the params' `now`, or fixtures are placed relative to [`Sql::db_now`].

mod acquire;
mod admin;
mod complete;
mod diagnostics;
mod engine_sql;
mod jobs;
mod lifecycle;
mod nodes;
mod seeds;
mod unreadable;

pub use acquire::*;
pub use admin::*;
pub use complete::*;
pub use diagnostics::*;
pub use engine_sql::*;
pub use jobs::*;
pub use lifecycle::*;
pub use nodes::*;
pub use seeds::*;
pub use unreadable::*;

use crate::{Acquired, JobAcquireParams, JobCompletion, JobEffect, JobLogFilter, SqlValue, Store};
use jiff::{SignedDuration, Timestamp, Unit};
use kairos_core::enqueue::Due;
use kairos_core::{Completion, Job, JobLogEntry, JobTable, JobType, NewJob, new_id};

/// Expands to one `#[tokio::test]` per conformance case. `$factory` is an expression of type
/// `impl Future<Output = Option<Box<dyn Store>>>`, evaluated afresh for every test; `None` means
/// the backend is unavailable and the test prints "skipped" and passes. This is the one list of
/// cases, so every backend runs all of them.
#[macro_export]
macro_rules! conformance_suite {
    ($factory:expr) => {
        $crate::conformance_suite!(@cases $factory;
            migrate_is_idempotent_and_db_now_moves_forward,
            job_insert_round_trips_every_field,
            job_insert_resolves_due_by_the_database_clock,
            job_insert_refuses_a_duplicate_id,
            job_insert_refuses_a_value_its_column_cannot_hold_naming_the_field,
            job_insert_many_inserts_every_job_in_one_go,
            job_get_answers_none_for_absent_jobs,
            job_list_filters_pages_and_counts,
            acquire_sets_unreadable_rows_aside_and_takes_the_rest,
            unreadable_rows_are_listed_got_and_deleted_by_name,
            deadletter_move_of_an_unreadable_dead_letter_changes_nothing,
            a_blob_in_a_job_column_is_an_unreadable_row,
            counts_leave_out_the_jobs_acquisition_would_not_take,
            acquire_takes_due_jobs_in_due_order_up_to_the_limit,
            acquire_takes_jobs_due_together_by_priority,
            acquire_leaves_future_jobs_alone,
            acquire_takes_due_timers_ahead_of_an_async_backlog,
            acquire_with_a_lookahead_takes_jobs_due_within_it,
            acquire_leaves_jobs_of_suspended_instances_alone,
            acquire_leaves_jobs_without_retries_alone,
            acquire_leaves_external_worker_jobs_alone,
            acquire_takes_over_an_expired_lease,
            acquire_dead_letters_an_expired_lease_on_its_last_retry,
            acquire_takes_over_an_unstarted_lookahead_lease_without_spending_a_retry,
            acquire_takes_one_job_per_exclusive_key,
            acquire_waits_for_a_live_exclusive_lease,
            lease_extension_is_fenced_by_owner_and_attempt,
            lease_extension_does_not_revive_an_expired_lease,
            complete_delete_removes_the_row_and_logs_success,
            complete_applies_staged_effects_only_under_the_lease,
            complete_merges_the_effects_of_a_batch_without_changing_them,
            complete_reschedule_keeps_one_row_with_the_next_due_date,
            complete_reschedule_gives_every_fire_the_retries_the_job_was_created_with,
            complete_retry_stores_the_failure_and_replaces_its_stack,
            complete_dead_letter_moves_the_row_with_its_stack,
            complete_after_losing_the_lease_writes_nothing,
            complete_sent_again_after_a_lost_answer_answers_applied,
            complete_many_applies_a_mixed_batch_in_input_order,
            completion_batches_written_side_by_side_all_apply,
            exception_messages_are_cut_at_4000_characters,
            release_hands_jobs_back_without_spending_a_retry,
            execute_now_makes_a_waiting_job_due,
            delete_refuses_a_live_lease_unless_forced,
            deadletter_move_resets_the_job_and_leaves_no_orphan_stack,
            stacktrace_reads_the_stored_error_chain,
            next_due_reports_the_earliest_job_acquisition_could_take,
            counts_classify_jobs_by_the_database_clock,
            counts_age_a_job_without_due_date_from_its_creation,
            diagnostics_find_orphans_ended_instances_expired_locks_and_dead_letters,
            job_log_lists_attempts_by_job_and_instance_with_paging,
            node_heartbeat_registers_and_refreshes,
            node_stop_marks_a_node_stopped_and_out_of_reach_of_the_reaper,
            node_reap_dead_expires_the_leases_of_silent_nodes,
            node_register_expires_the_live_leases_of_its_own_id_only,
            node_register_again_starts_a_new_incarnation,
            node_register_lets_another_node_take_over_the_previous_incarnations_jobs,
            node_register_records_the_settings_the_node_runs_with,
            lifecycle_transitions_follow_the_table,
            seed_000_diagnostic_sql_runs_verbatim,
            seed_001_acquisition_query_selects_what_job_acquire_takes,
            seed_004_now_arithmetic_runs_verbatim,
            write_all_commits_every_statement_and_read_decodes_them,
            write_all_rolls_back_everything_on_an_unexpected_row_count,
            concurrent_insert_lists_each_commit_and_a_bad_one_fails_alone,
            timer_view_lists_the_timers,
            operator_sql_binds_and_decodes_values,
        );
    };
    (@cases $factory:expr; $($case:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $case() {
                let store: ::std::option::Option<::std::boxed::Box<dyn $crate::Store>> = $factory.await;
                match store {
                    ::std::option::Option::Some(store) => $crate::conformance::$case(&*store).await,
                    ::std::option::Option::None => {
                        ::std::eprintln!("skipped: {}: the backend is not available", ::std::stringify!($case))
                    }
                }
            }
        )*
    };
}

// ----- fixtures shared by the cases ---------------------------------------------------------

/// The lease most cases take.
pub(crate) const LOCK: SignedDuration = SignedDuration::from_mins(5);

pub(crate) fn secs(n: i64) -> SignedDuration {
    SignedDuration::from_secs(n)
}

pub(crate) fn millis(n: i64) -> SignedDuration {
    SignedDuration::from_millis(n)
}

/// `t` rounded to the millisecond, the precision of every stored instant.
pub(crate) fn ms(t: Timestamp) -> Timestamp {
    t.round(Unit::Millisecond).expect("rounding an instant to the millisecond")
}

/// A standalone message job due now with three retries.
pub(crate) fn message(handler: &str) -> NewJob {
    NewJob {
        id: new_id(),
        job_type: JobType::Message,
        due: Due::Now,
        exclusive: false,
        exclusive_key: None,
        execution_id: None,
        process_instance_id: None,
        proc_def_id: None,
        element_id: None,
        element_name: None,
        retries: 3,
        retry_cycle: None,
        repeat: None,
        handler_type: handler.to_string(),
        handler_cfg: None,
        tenant_id: None,
    }
}

/// A message job due at `t`.
pub(crate) fn due_at(handler: &str, t: Timestamp) -> NewJob {
    NewJob { due: Due::At(t), ..message(handler) }
}

/// An exclusive message job of `key` due at `t`.
pub(crate) fn exclusive_at(key: &str, t: Timestamp) -> NewJob {
    NewJob { exclusive: true, exclusive_key: Some(key.to_string()), ..due_at("excl", t) }
}

/// A job of a process instance: EXECUTION_ID_ and PROCESS_INSTANCE_ID_ set.
pub(crate) fn of_instance(execution: &str, instance: &str, t: Timestamp) -> NewJob {
    NewJob {
        execution_id: Some(execution.to_string()),
        process_instance_id: Some(instance.to_string()),
        ..due_at("continue", t)
    }
}

pub(crate) async fn insert(store: &dyn Store, job: NewJob) -> Job {
    store.job_insert(&job).await.unwrap_or_else(|e| panic!("job_insert {}: {e:?}", job.id))
}

pub(crate) async fn now(store: &dyn Store) -> Timestamp {
    store.db_now().await.expect("db_now")
}

/// Reads the database clock until it has reached `t` (a bounded wait on the clock, for due
/// dates a backend stores rounded up to the millisecond).
pub(crate) async fn settle(store: &dyn Store, t: Timestamp) -> Timestamp {
    for _ in 0..100_000 {
        let n = now(store).await;
        if n >= t {
            return n;
        }
        tokio::task::yield_now().await;
    }
    panic!("the database clock never reached {t}");
}

pub(crate) async fn get(store: &dyn Store, id: &str) -> Option<Job> {
    store.job_get(JobTable::Runtime, id).await.expect("job_get")
}

pub(crate) async fn must_get(store: &dyn Store, id: &str) -> Job {
    get(store, id).await.unwrap_or_else(|| panic!("job {id} should be in ACT_RU_JOB"))
}

/// Acquisition for `node` at the pinned instant `at` (or the database clock when `None`).
pub(crate) async fn acquire(
    store: &dyn Store,
    node: &str,
    at: Option<Timestamp>,
    limit: u32,
    lock: SignedDuration,
) -> Acquired {
    store
        .job_acquire(&JobAcquireParams {
            node: node.to_string(),
            limit,
            lock_time: lock,
            now: at,
            lookahead: SignedDuration::ZERO,
        })
        .await
        .unwrap_or_else(|e| panic!("job_acquire for {node}: {e:?}"))
}

pub(crate) fn ids(acquired: &Acquired) -> Vec<String> {
    acquired.jobs.iter().map(|a| a.job.id.clone()).collect()
}

pub(crate) fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// The completion of `job`'s current attempt (as locked), by its lock owner.
pub(crate) fn completion(job: &Job, completion: Completion) -> JobCompletion {
    let started = job.lock_time.expect("a locked job has LOCK_TIME_");
    JobCompletion {
        job_id: job.id.clone(),
        node: job.lock_owner.clone().expect("a locked job has LOCK_OWNER_"),
        attempt: job.attempts,
        started,
        finished: started + millis(25),
        completion,
        effects: Vec::new(),
    }
}

pub(crate) fn success() -> Completion {
    Completion::Delete { log_message: None }
}

pub(crate) async fn complete(store: &dyn Store, cs: &[JobCompletion]) -> Vec<bool> {
    store.job_complete_many(cs).await.expect("job_complete_many")
}

/// One integer from an operator query (COUNT(*) and the like).
pub(crate) async fn scalar(store: &dyn Store, sql: &str, binds: &[SqlValue]) -> i64 {
    let rows = store.sql_query(sql, binds).await.unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    rows.first()
        .and_then(|r| r.first())
        .and_then(SqlValue::as_i64)
        .unwrap_or_else(|| panic!("{sql} should return one integer, got {rows:?}"))
}

pub(crate) async fn bytearray_rows(store: &dyn Store) -> i64 {
    scalar(store, "SELECT COUNT(*) FROM ACT_GE_BYTEARRAY", &[]).await
}

pub(crate) async fn fixture(store: &dyn Store, sql: &str, binds: &[SqlValue]) -> u64 {
    store.sql_execute(sql, binds).await.unwrap_or_else(|e| panic!("fixture {sql}: {e:?}"))
}

pub(crate) fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.to_string())
}

/// A row of ACT_RU_EXECUTION: `id` in process instance `instance` with SUSPENSION_STATE_
/// `suspension` (1 active, 2 suspended).
pub(crate) async fn execution(store: &dyn Store, id: &str, instance: &str, suspension: i64) {
    fixture(
        store,
        "INSERT INTO ACT_RU_EXECUTION (ID_, PROC_INST_ID_, SUSPENSION_STATE_) VALUES (?, ?, ?)",
        &[text(id), text(instance), SqlValue::Int(suspension)],
    )
    .await;
}

/// Locks a job by hand, as a node that has since vanished would have left it.
pub(crate) async fn lock_by_hand(store: &dyn Store, id: &str, owner: &str, locked: Timestamp, expires: Timestamp) {
    let n = fixture(
        store,
        "UPDATE ACT_RU_JOB SET LOCK_OWNER_ = ?, LOCK_TIME_ = ?, LOCK_EXP_TIME_ = ?, ATTEMPTS_ = ATTEMPTS_ + 1 WHERE ID_ = ?",
        &[text(owner), SqlValue::Timestamp(locked), SqlValue::Timestamp(expires), text(id)],
    )
    .await;
    assert_eq!(n, 1, "lock_by_hand: job {id} should exist");
}

/// A row in ACT_RU_SUSPENDED_JOB (the process engine puts them there; the suite writes one).
pub(crate) async fn suspended_row(store: &dyn Store, id: &str, at: Timestamp) {
    fixture(
        store,
        "INSERT INTO ACT_RU_SUSPENDED_JOB (ID_, REV_, TYPE_, EXCLUSIVE_, RETRIES_, ATTEMPTS_, DUEDATE_, \
         HANDLER_TYPE_, CREATE_TIME_, TENANT_ID_, PROCESS_INSTANCE_ID_, EXECUTION_ID_) \
         VALUES (?, 1, 'timer', FALSE, 3, 0, ?, 'remind', ?, '', 'pi-suspended', 'pi-suspended')",
        &[text(id), SqlValue::Timestamp(at), SqlValue::Timestamp(at)],
    )
    .await;
}

pub(crate) async fn log_of(store: &dyn Store, job_id: &str) -> Vec<JobLogEntry> {
    store
        .job_log_list(&JobLogFilter { job_id: Some(job_id.to_string()), ..Default::default() })
        .await
        .expect("job_log_list")
        .data
}

pub(crate) async fn log_rows(store: &dyn Store) -> i64 {
    scalar(store, "SELECT COUNT(*) FROM ACT_HI_JOB_LOG", &[]).await
}

/// An instant from an operator query: PostgreSQL returns timestamps, SQLite its stored text
/// (`YYYY-MM-DD HH:MM:SS.SSS`, UTC).
pub(crate) fn ts_of(v: &SqlValue) -> Option<Timestamp> {
    match v {
        SqlValue::Timestamp(t) => Some(*t),
        SqlValue::Text(s) => s.parse::<Timestamp>().ok().or_else(|| {
            let dt: jiff::civil::DateTime = s.parse().ok()?;
            jiff::tz::Offset::UTC.to_timestamp(dt).ok()
        }),
        _ => None,
    }
}

/// Asserts `t` is within a millisecond of `[lo, hi]` (stored instants are rounded to it).
pub(crate) fn assert_between(what: &str, t: Timestamp, lo: Timestamp, hi: Timestamp) {
    assert!(t >= lo - millis(1) && t <= hi + millis(1), "{what} = {t} should lie between {lo} and {hi}");
}
