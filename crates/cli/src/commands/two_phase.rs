//! `kairos twophase`: the opt-in two-phase commit's coordinator log (SPEC C11), listed, and its
//! in-doubt transactions recovered on demand.

use super::open_engine;
use crate::cli::{GlobalArgs, TwophaseArgs, TwophaseCommand};
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Table, cell};

pub async fn run(global: &GlobalArgs, args: TwophaseArgs) -> Result<u8, CliError> {
    let Some(url) = args.business_db.as_deref() else {
        return Err(CliError::bad_input(
            "--business-db (or KAIROS_BUSINESS_DB) is required: the PostgreSQL business database",
        ));
    };
    // Refused before anything is opened: a SQLite --db would otherwise be created and migrated.
    if !(global.db.starts_with("postgres://") || global.db.starts_with("postgresql://")) {
        return Err(CliError::bad_input(format!(
            "--db must be the PostgreSQL kairos database: {}",
            kairos::two_phase::needs_postgres_message()
        )));
    }
    let business = kairos::two_phase::connect_business(url).await?;
    let engine = open_engine(&global.db).await?;
    let tpc = engine.two_phase(&business)?;
    match args.command {
        TwophaseCommand::List { all, limit } => {
            let listing = tpc.list(all, i64::from(limit)).await?;
            if global.json {
                return output::json(&listing).map(|_| SUCCESS);
            }
            let mut t = Table::new(&["ID", "STATE", "NODE", "AGE", "UPDATED", "LAST ERROR"]);
            for r in &listing.transactions {
                t.row(vec![
                    r.id.clone(),
                    r.state.into(),
                    r.node.clone(),
                    format!("{}s", r.age_ms / 1000),
                    r.updated.clone(),
                    cell(r.last_error.as_deref(), 60),
                ]);
            }
            let mut text = t.render();
            for (side, prepared) in [("business", &listing.prepared_business), ("kairos", &listing.prepared_kairos)] {
                text.push_str(&format!("prepared on the {side} database: {}\n", prepared.len()));
                for p in prepared {
                    text.push_str(&format!("  {} ({}s)\n", p.gid, p.age_ms / 1000));
                }
            }
            output::emit(&text)?;
            Ok(SUCCESS)
        }
        TwophaseCommand::Recover { grace } => {
            if grace.is_negative() {
                return Err(CliError::bad_input("invalid --grace: must not be negative"));
            }
            let done = tpc.recover(grace.unsigned_abs()).await?;
            if global.json {
                return output::json(&done).map(|_| SUCCESS);
            }
            let mut text = format!(
                "committed {}, rolled back {} ({} without a log row), closed {} rows\n",
                done.committed.len(),
                done.rolled_back.len(),
                done.orphans.len(),
                done.closed.len()
            );
            for gid in &done.committed {
                text.push_str(&format!("  COMMIT PREPARED {gid}\n"));
            }
            for gid in &done.rolled_back {
                text.push_str(&format!("  ROLLBACK PREPARED {gid}\n"));
            }
            for e in &done.errors {
                text.push_str(&format!("  not finished: {e}\n"));
            }
            output::emit(&text)?;
            Ok(if done.errors.is_empty() { SUCCESS } else { crate::exit::FAILURE })
        }
    }
}
