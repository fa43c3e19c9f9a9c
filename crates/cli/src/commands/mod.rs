//! One module per command; each returns the exit code of a success (0, or 3 for doctor
//! findings) or a [`CliError`].

mod chaos;
pub mod cron;
mod doctor;
mod jobs;
mod migrate;
mod process;
mod reconcile;
mod serve;
pub mod triggers;
mod two_phase;
mod users;
mod workflow_commands;

use crate::cli::{BenchCommand, Cli, Command};
use crate::exit::CliError;
use kairos::Engine;

pub async fn run(cli: Cli) -> Result<u8, CliError> {
    let global = cli.global;
    match cli.command {
        Command::Serve(args) => serve::run(&global, *args).await,
        Command::Migrate => migrate::run(&global).await,
        Command::Jobs(args) => jobs::run(&global, args).await,
        Command::Doctor(args) => doctor::run(&global, args).await,
        Command::Unreadable(args) => jobs::unreadable(&global, args).await,
        Command::Deploy(args) => process::deploy(&global, args).await,
        Command::Start(args) => process::start(&global, args).await,
        Command::Instances(args) => process::instances(&global, args).await,
        Command::Bindings(args) => process::bindings(&global, args).await,
        Command::Commands(args) => workflow_commands::run(&global, args).await,
        Command::Reconcile(args) => reconcile::reconcile(&global, args).await,
        Command::Incidents(args) => reconcile::incidents(&global, args).await,
        Command::Twophase(args) => two_phase::run(&global, args).await,
        Command::Users(args) => users::run(&global, args).await,
        Command::Instance(args) => process::instance(&global, args).await,
        Command::Tasks(args) => process::tasks(&global, args).await,
        Command::Complete(args) => process::complete(&global, args).await,
        Command::MigrateInstance(args) => process::migrate_instance(&global, args).await,
        Command::Cron(args) => cron::run(&global, args),
        Command::Triggers(args) => triggers::run(&global, args).await,
        Command::Bench(args) => match args.command {
            BenchCommand::Jobs(args) => crate::bench::jobs::run(&global, args).await,
            BenchCommand::Process(args) => crate::bench::process::run(&global, args).await,
            BenchCommand::Scheduler(args) => crate::bench::scheduler::run(&global, args).await,
            BenchCommand::Outbox(args) => crate::bench::outbox::run(&global, args).await,
            BenchCommand::Reconcile(args) => crate::bench::reconcile::run(&global, args).await,
        },
    }
}

/// An engine for a one-shot command: schema brought up to date, executor off (the command
/// must not start running jobs on this machine).
pub(crate) async fn open_engine(db: &str) -> Result<Engine, CliError> {
    Ok(Engine::builder(db).executor_enabled(false).build().await?)
}
