//! One module per command; each returns the exit code of a success (0, or 3 for doctor
//! findings) or a [`CliError`].

mod chaos;
mod doctor;
mod jobs;
mod migrate;
mod serve;

use crate::cli::{BenchCommand, Cli, Command};
use crate::exit::CliError;
use kairos::Engine;

pub async fn run(cli: Cli) -> Result<u8, CliError> {
    let global = cli.global;
    match cli.command {
        Command::Serve(args) => serve::run(&global, args).await,
        Command::Migrate => migrate::run(&global).await,
        Command::Jobs(args) => jobs::run(&global, args).await,
        Command::Doctor(args) => doctor::run(&global, args).await,
        Command::Bench(args) => match args.command {
            BenchCommand::Jobs(args) => crate::bench::jobs::run(&global, args).await,
        },
    }
}

/// An engine for a one-shot command: schema brought up to date, executor off (the command
/// must not start running jobs on this machine).
pub(crate) async fn open_engine(db: &str) -> Result<Engine, CliError> {
    Ok(Engine::builder(db).executor_enabled(false).build().await?)
}
