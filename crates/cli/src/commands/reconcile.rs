//! `kairos reconcile` and `kairos incidents` (SPEC C7): a reconciliation pass on demand, and
//! incidents taken through their life from a terminal.

use crate::cli::{GlobalArgs, IncidentsArgs, IncidentsCommand, ReconcileArgs};
use crate::exit::{CliError, FINDINGS, SUCCESS};
use crate::output::{self, Table, cell, instant};
use kairos::Engine;
use kairos::reconcile::incidents::{Filter, Incident, IncidentAction};
use kairos::reconcile::{Config, Reconciler};
use std::path::Path;

pub(crate) fn load(path: &Path) -> Result<Config, CliError> {
    let text =
        std::fs::read_to_string(path).map_err(|e| CliError::bad_input(format!("--config {}: {e}", path.display())))?;
    Config::parse(&text).map_err(|e| CliError::bad_input(format!("--config {}: {e}", path.display())))
}

/// The engine, with the business database (if named) and a reconciler for `config`.
async fn engine_with(
    global: &GlobalArgs,
    config: Option<Config>,
    business_db: Option<&str>,
) -> Result<(Engine, Option<Reconciler>), CliError> {
    let engine = super::open_engine(&global.db).await?;
    if let Some(url) = business_db {
        let _ = engine.set_business_db(kairos::business::connect(url).await?);
    }
    let r = match config {
        Some(c) => {
            let r = engine.reconciler_for(c)?;
            let _ = engine.set_reconciler(r.clone());
            Some(r)
        }
        None => None,
    };
    Ok((engine, r))
}

pub async fn reconcile(global: &GlobalArgs, a: ReconcileArgs) -> Result<u8, CliError> {
    let config = load(&a.config)?;
    let (_engine, r) = engine_with(global, Some(config), a.business_db.as_deref()).await?;
    let r = r.expect("a reconciler for the configuration");
    let report = r.pass(a.dry_run).await?;
    let differences = report.incidents_opened + report.repaired + report.repairs_refused + report.frozen;
    if global.json {
        output::json(&report)?;
    } else {
        output::emit(&format!(
            "{} records{}: {} consistent, {} waiting, {} repaired, {} repairs refused, {} incidents opened, {} frozen by an open incident, {} unmatched ({:.1} s)\n",
            report.records,
            if report.dry_run { " (dry run: nothing changed)" } else { "" },
            report.consistent,
            report.waiting,
            report.repaired,
            report.repairs_refused,
            report.incidents_opened,
            report.frozen,
            report.unmatched,
            report.seconds,
        ))?;
        if !report.findings.is_empty() {
            let mut t = Table::new(&["BUSINESS", "STATUS", "RULE", "OUTCOME", "INSTANCE", "DETAIL"]);
            for f in &report.findings {
                t.row(vec![
                    format!("{}:{}", f.business_type, f.business_id),
                    f.business_status.clone(),
                    f.rule_id.clone(),
                    f.outcome.clone(),
                    cell(f.process_instance_id.as_deref(), 40),
                    cell(Some(&f.detail), 80),
                ]);
            }
            output::emit(&t.render())?;
        }
    }
    Ok(if differences > 0 || report.unmatched > 0 { FINDINGS } else { SUCCESS })
}

fn show(i: &Incident) -> String {
    let pretty = |s: Option<&str>| {
        s.and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
            .and_then(|v| serde_json::to_string_pretty(&v).ok())
            .unwrap_or_else(|| "-".into())
    };
    format!(
        "id:           {}\nkind:         {}\nstatus:       {}\nrule:         {}\nbusiness:     {}:{} ({})\ninstance:     {}\ndifference:   {}\nplan:         {}\napproved by:  {}\nexecuted by:  {}\naction:       {}\nverification: {}\ncreated:      {}\nupdated:      {}\nbefore:\n{}\nafter:\n{}\nevidence:\n{}\naudit:\n{}\n",
        i.id,
        i.kind,
        i.status,
        i.rule_id,
        i.business_type,
        i.business_id,
        i.business_state.as_deref().unwrap_or("-"),
        i.process_instance_id.as_deref().unwrap_or("-"),
        i.difference,
        i.plan.as_deref().unwrap_or("-"),
        i.approved_by.as_deref().unwrap_or("-"),
        i.executed_by.as_deref().unwrap_or("-"),
        i.action_json.as_deref().unwrap_or("-"),
        i.verification.as_deref().unwrap_or("-"),
        instant(Some(i.created_at)),
        instant(Some(i.updated_at)),
        pretty(i.before_json.as_deref()),
        pretty(i.after_json.as_deref()),
        pretty(Some(&i.evidence_json)),
        pretty(Some(&i.audit_json)),
    )
}

fn answer(global: &GlobalArgs, i: &Incident) -> Result<u8, CliError> {
    if global.json {
        output::json(i)?;
    } else {
        output::emit(&show(i))?;
    }
    Ok(SUCCESS)
}

pub async fn incidents(global: &GlobalArgs, a: IncidentsArgs) -> Result<u8, CliError> {
    match a.command {
        IncidentsCommand::List { status, kind, business_type, business_id, limit } => {
            let (engine, _) = engine_with(global, None, None).await?;
            let f = Filter { status, kind, rule_id: None, business_type, business_id };
            let rows = engine.incidents().list(&f, limit).await?;
            if global.json {
                return output::json(&rows).map(|_| SUCCESS);
            }
            let mut t = Table::new(&["ID", "KIND", "STATUS", "RULE", "BUSINESS", "INSTANCE", "CREATED"]);
            for i in &rows {
                t.row(vec![
                    i.id.clone(),
                    i.kind.clone(),
                    i.status.clone(),
                    i.rule_id.clone(),
                    format!("{}:{}", i.business_type, i.business_id),
                    cell(i.process_instance_id.as_deref(), 40),
                    instant(Some(i.created_at)),
                ]);
            }
            output::emit(&t.render())?;
            Ok(SUCCESS)
        }
        IncidentsCommand::Show { id } => {
            let (engine, _) = engine_with(global, None, None).await?;
            let Some(i) = engine.incidents().get(&id).await? else {
                return Err(CliError::bad_input(format!("incident {id} does not exist")));
            };
            answer(global, &i)
        }
        IncidentsCommand::Approve { id, user, plan } => {
            let (engine, _) = engine_with(global, None, None).await?;
            let i = engine.incidents().approve(&id, &user, plan.as_deref()).await?;
            answer(global, &i)
        }
        IncidentsCommand::Execute { id, user, action, config, business_db } => {
            let action: IncidentAction = serde_json::from_str(&action).map_err(|e| {
                CliError::bad_input(format!("--action: {e} (types: delete-instance, write-back, outbox-retry, manual)"))
            })?;
            let config = config.as_deref().map(load).transpose()?;
            let (engine, _) = engine_with(global, config, business_db.as_deref()).await?;
            let i = engine.incidents().execute(&id, &user, &action).await?;
            answer(global, &i)
        }
        IncidentsCommand::Close { id, user, note } => {
            let (engine, _) = engine_with(global, None, None).await?;
            let i = engine.incidents().close(&id, &user, &note).await?;
            answer(global, &i)
        }
    }
}
