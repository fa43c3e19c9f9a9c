//! `kairos jobs`: list, enqueue, retry, stacktrace, delete, log (SPEC J4, J12, J13).

use super::open_engine;
use crate::cli::{
    DeleteArgs, EnqueueArgs, GlobalArgs, IdArg, JobTypeArg, JobsArgs, JobsCommand, ListArgs, LogArgs, RetryArgs,
};
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, JobJson, JobLogJson, Table, cell, instant};
use kairos::{EnqueueRequest, JobTable, JobType};
use kairos_store::{ErrorKind, JobFilter, JobLogFilter, Page};

pub async fn run(global: &GlobalArgs, args: JobsArgs) -> Result<u8, CliError> {
    match args.command {
        None => list(global, args.list).await,
        Some(JobsCommand::List(a)) => list(global, a).await,
        Some(JobsCommand::Enqueue(a)) => enqueue(global, a).await,
        Some(JobsCommand::Retry(a)) => retry(global, a).await,
        Some(JobsCommand::Stacktrace(a)) => stacktrace(global, a).await,
        Some(JobsCommand::Delete(a)) => delete(global, a).await,
        Some(JobsCommand::Log(a)) => log(global, a).await,
    }
}

async fn list(global: &GlobalArgs, a: ListArgs) -> Result<u8, CliError> {
    let table = table_of(a.dead, a.suspended);
    let engine = open_engine(&global.db).await?;
    let page = engine
        .store()
        .job_list(&JobFilter {
            table,
            process_instance_id: a.instance,
            handler_type: a.handler,
            job_type: a.job_type.map(job_type),
            with_exception: None,
            tenant: None,
            start: a.page.start,
            size: a.page.size,
        })
        .await?;
    if global.json {
        return output::json(&output::page_json(&page, JobJson::from)).map(|_| SUCCESS);
    }
    let mut t = Table::new(&["ID", "TYPE", "HANDLER", "DUE", "RETRIES", "LOCK OWNER", "EXCEPTION"]);
    for j in &page.data {
        t.row(vec![
            j.id.clone(),
            j.job_type.as_str().into(),
            j.handler_type.clone(),
            instant(j.duedate),
            j.retries.to_string(),
            cell(j.lock_owner.as_deref(), 40),
            cell(j.exception_msg.as_deref(), 60),
        ]);
    }
    output::emit(&t.render())?;
    if !page.unreadable.is_empty() {
        output::emit(&format!(
            "\n{} row(s) kairos cannot read (fix the column, or kairos jobs delete --force{} ID):\n{}",
            page.unreadable.len(),
            if table == JobTable::DeadLetter { " --dead" } else { "" },
            unreadable_table(&page.unreadable)
        ))?;
    }
    more_hint(&page);
    Ok(SUCCESS)
}

/// Rows kairos cannot read, one a line: table, id, column, the stored text, what is wrong.
fn unreadable_table(rows: &[kairos_store::Unreadable]) -> String {
    let mut t = Table::new(&["TABLE", "ID", "COLUMN", "STORED", "PROBLEM"]);
    for u in rows {
        t.row(vec![
            u.table.clone(),
            u.id.clone(),
            u.column.clone(),
            cell(Some(u.raw.as_deref().unwrap_or("NULL")), 40),
            u.problem.clone(),
        ]);
    }
    t.render()
}

/// `kairos unreadable`: every stored row the engine cannot read.
pub async fn unreadable(global: &GlobalArgs, a: crate::cli::UnreadableArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let rows = engine.unreadable_rows(usize::try_from(a.size).unwrap_or(usize::MAX)).await?;
    if global.json {
        return output::json(&serde_json::json!({ "data": rows })).map(|_| SUCCESS);
    }
    if rows.is_empty() {
        output::line("every stored row can be read")?;
    } else {
        output::emit(&unreadable_table(&rows))?;
    }
    Ok(SUCCESS)
}

async fn enqueue(global: &GlobalArgs, a: EnqueueArgs) -> Result<u8, CliError> {
    // Everything the command line can check is checked before the store is opened.
    let payload = a.payload.as_deref().map(crate::parse::payload).transpose()?;
    let req = EnqueueRequest {
        handler: a.handler,
        payload,
        due_date: a.due,
        due_in: a.due_in,
        retries: a.retries,
        retry_cycle: a.retry_cycle,
        repeat: a.repeat,
        exclusive_key: a.exclusive_key,
        tenant_id: a.tenant,
    };
    // Checked against the built-in handlers before the store is touched; the engine checks again.
    let builtins = kairos::Handlers::with_builtins();
    req.validate(|h| builtins.contains(h)).map_err(kairos::Error::from)?;
    let engine = open_engine(&global.db).await?;
    let job = engine.enqueue(&req).await?;
    if global.json {
        output::json(&JobJson::from(&job))?;
    } else {
        output::line(&job.id)?;
    }
    Ok(SUCCESS)
}

async fn retry(global: &GlobalArgs, a: RetryArgs) -> Result<u8, CliError> {
    if a.retries < 1 {
        return Err(CliError::bad_input(format!(
            "invalid retries: {} is not allowed: retries counts attempts and must be at least 1",
            a.retries
        )));
    }
    let engine = open_engine(&global.db).await?;
    let job = engine.store().deadletter_move(&a.id, a.retries).await.map_err(|e| match e.kind {
        ErrorKind::NotFound => {
            CliError::bad_input(format!("dead letter {} does not exist (kairos jobs --dead lists them)", a.id))
        }
        _ => e.into(),
    })?;
    if global.json {
        output::json(&JobJson::from(&job))?;
    } else {
        output::line(&format!("moved {} back to ACT_RU_JOB with {} retries", job.id, job.retries))?;
    }
    Ok(SUCCESS)
}

/// The stack trace of a job wherever it is: live, dead letter or suspended.
async fn stacktrace(global: &GlobalArgs, a: IdArg) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    for table in [JobTable::Runtime, JobTable::DeadLetter, JobTable::Suspended] {
        match engine.store().job_stacktrace(table, &a.id).await {
            Ok(Some(trace)) => {
                if global.json {
                    output::json(
                        &serde_json::json!({ "jobId": a.id, "table": table.table_name(), "stacktrace": trace }),
                    )?;
                } else {
                    output::emit(&format!("{}\n", trace.trim_end()))?;
                }
                return Ok(SUCCESS);
            }
            Ok(None) => {
                if global.json {
                    output::json(
                        &serde_json::json!({ "jobId": a.id, "table": table.table_name(), "stacktrace": null }),
                    )?;
                } else {
                    eprintln!("job {} ({}) has no stored exception", a.id, table.table_name());
                }
                return Ok(SUCCESS);
            }
            Err(e) if e.kind == ErrorKind::NotFound => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(CliError::bad_input(format!(
        "job {} does not exist in ACT_RU_JOB, ACT_RU_DEADLETTER_JOB or ACT_RU_SUSPENDED_JOB",
        a.id
    )))
}

async fn delete(global: &GlobalArgs, a: DeleteArgs) -> Result<u8, CliError> {
    let table = table_of(a.dead, a.suspended);
    let engine = open_engine(&global.db).await?;
    engine.store().job_delete(table, &a.id, a.force).await.map_err(|e| match e.kind {
        ErrorKind::NotFound => CliError::bad_input(format!("job {} does not exist in {}", a.id, table.table_name())),
        ErrorKind::Conflict => CliError::bad_input(format!("{} (use --force to delete it anyway)", e.message)),
        _ => e.into(),
    })?;
    if global.json {
        output::json(&serde_json::json!({ "deleted": a.id, "table": table.table_name() }))?;
    } else {
        output::line(&format!("deleted {} from {}", a.id, table.table_name()))?;
    }
    Ok(SUCCESS)
}

async fn log(global: &GlobalArgs, a: LogArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let filter =
        JobLogFilter { job_id: a.job, process_instance_id: a.instance, start: a.page.start, size: a.page.size };
    let page = engine.store().job_log_list(&filter).await?;
    if global.json {
        return output::json(&output::page_json(&page, JobLogJson::from)).map(|_| SUCCESS);
    }
    let mut t = Table::new(&["JOB", "ATTEMPT", "NODE", "START", "END", "OUTCOME", "MESSAGE"]);
    for e in &page.data {
        t.row(vec![
            e.job_id.clone(),
            e.attempt.to_string(),
            cell(e.node.as_deref(), 40),
            instant(e.start),
            instant(e.end),
            e.outcome.as_str().into(),
            cell(e.message.as_deref(), 60),
        ]);
    }
    output::emit(&t.render())?;
    more_hint(&page);
    Ok(SUCCESS)
}

fn table_of(dead: bool, suspended: bool) -> JobTable {
    match (dead, suspended) {
        (true, _) => JobTable::DeadLetter,
        (_, true) => JobTable::Suspended,
        _ => JobTable::Runtime,
    }
}

fn job_type(t: JobTypeArg) -> JobType {
    match t {
        JobTypeArg::Timer => JobType::Timer,
        JobTypeArg::Message => JobType::Message,
        JobTypeArg::ExternalWorker => JobType::ExternalWorker,
    }
}

/// Tells a person (on stderr) that the table is one page of a longer list.
fn more_hint<T>(page: &Page<T>) {
    let shown = page.data.len() as u64;
    if page.start + shown < page.total {
        eprintln!(
            "showing {}-{} of {}; use --start {} for the next page",
            page.start + 1,
            page.start + shown,
            page.total,
            page.start + shown
        );
    }
}
