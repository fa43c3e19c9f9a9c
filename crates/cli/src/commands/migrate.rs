//! `kairos migrate`: creates or upgrades the schema and exits.

use crate::cli::GlobalArgs;
use crate::exit::{CliError, SUCCESS};
use crate::output;

pub async fn run(global: &GlobalArgs) -> Result<u8, CliError> {
    let store = kairos::open_store(&global.db).await?;
    store.migrate().await?;
    let kind = store.backend().as_str();
    if global.json {
        output::json(&serde_json::json!({ "store": kind, "migrated": true }))?;
    } else {
        output::line(&format!("schema is up to date ({kind})"))?;
    }
    Ok(SUCCESS)
}
