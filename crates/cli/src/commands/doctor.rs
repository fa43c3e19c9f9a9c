//! `kairos doctor`: SPEC J11's diagnosis, printed for people or as JSON.
//!
//! Exit 0 when no finding is a warning or an error, 3 when one is: a cron job or a health check
//! can alert on the status alone, and still tell it from a diagnosis that could not run (1) or
//! bad input (2).

use super::open_engine;
use crate::cli::{DoctorArgs, GlobalArgs};
use crate::exit::{CliError, FINDINGS, SUCCESS};
use crate::output;
use kairos::doctor::{DoctorQuery, Severity, diagnose};

pub async fn run(global: &GlobalArgs, args: DoctorArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let query = DoctorQuery { business_key: args.business_key, process_instance_id: args.instance, from_tool: true };
    let report = diagnose(&engine, &query).await?;
    if global.json {
        // The same document as `GET /management/doctor`.
        output::json(&report.to_json())?;
    } else {
        output::emit(&report.to_string())?;
    }
    Ok(if report.worst() >= Severity::Warning { FINDINGS } else { SUCCESS })
}
