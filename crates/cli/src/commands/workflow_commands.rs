//! `kairos commands`: the command table of a business database (SPEC C6), read or created.
//! Running the commands is `kairos serve --business-db`'s.

use crate::cli::{CommandsArgs, CommandsCommand, GlobalArgs};
use crate::exit::{CliError, SUCCESS};
use crate::output::{self, Table, cell, instant};
use kairos::commands::table::{self, Filter, Status};

pub async fn run(global: &GlobalArgs, args: CommandsArgs) -> Result<u8, CliError> {
    let Some(url) = args.business_db.as_deref() else {
        return Err(CliError::bad_input("--business-db (or KAIROS_BUSINESS_DB) is required"));
    };
    let db = kairos::business::connect(url).await?;
    match args.command {
        CommandsCommand::Schema => {
            table::schema(db.as_ref()).await?;
            if global.json {
                return output::json(&serde_json::json!({"table": "workflow_command", "ready": true})).map(|_| SUCCESS);
            }
            output::emit("workflow_command is ready\n")?;
            Ok(SUCCESS)
        }
        CommandsCommand::Show { id } => {
            let Some(c) = table::get(db.as_ref(), &id).await? else {
                return Err(CliError::bad_input(format!("command {id} does not exist")));
            };
            if global.json {
                return output::json(&c).map(|_| SUCCESS);
            }
            output::emit(&format!(
                "request id:  {}\ntype:        {}\nbusiness:    {}:{}\nlifecycle:   {}\nstatus:      {}\ninstance:    {}\nresult:      {}\nattempts:    {}\nlast error:  {}\npayload:     {}\n",
                c.request_id,
                c.command_type,
                c.business_type,
                c.business_id,
                c.lifecycle_no.map(|n| n.to_string()).unwrap_or_else(|| "-".into()),
                c.status.as_str(),
                cell(c.process_instance_id.as_deref(), 80),
                cell(c.result_code.as_deref(), 80),
                c.attempts,
                cell(c.last_error.as_deref(), 200),
                c.payload,
            ))?;
            Ok(SUCCESS)
        }
        CommandsCommand::List { status, business_type, business_id, limit } => {
            let status = match status.as_deref() {
                None => None,
                Some(s) => Some(Status::parse(s).ok_or_else(|| {
                    CliError::bad_input(format!(
                        "--status {s:?} is not one of PENDING, PROCESSING, SUCCEEDED, RETRY, FAILED"
                    ))
                })?),
            };
            let rows = table::list(db.as_ref(), &Filter { status, business_type, business_id }, limit).await?;
            if global.json {
                return output::json(&rows).map(|_| SUCCESS);
            }
            let mut t =
                Table::new(&["REQUEST ID", "TYPE", "BUSINESS", "STATUS", "RESULT", "ATTEMPTS", "INSTANCE", "CREATED"]);
            for c in &rows {
                t.row(vec![
                    c.request_id.clone(),
                    c.command_type.clone(),
                    format!("{}:{}", c.business_type, c.business_id),
                    c.status.as_str().into(),
                    cell(c.result_code.as_deref(), 40),
                    c.attempts.to_string(),
                    cell(c.process_instance_id.as_deref(), 40),
                    instant(Some(c.created_at)),
                ]);
            }
            output::emit(&t.render())?;
            Ok(SUCCESS)
        }
    }
}
