//! The `kairos` command line (SPEC I2, API.md): parse flags into validated values, open the
//! engine, run one command, map the outcome to an exit code.
//!
//! The binary is `src/main.rs`; everything lives here so that the parsers and renderers can be
//! unit-tested, while `tests/` drives the real binary.

pub mod bench;
pub mod cli;
pub mod commands;
pub mod exit;
pub mod output;
pub mod parse;

use clap::Parser;
use cli::{Cli, Command, LogFormat};
use exit::CliError;
use std::process::ExitCode;

/// Runs the command line and returns the process's exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return clap_exit(e),
    };
    init_logging(cli.global.log_format, matches!(cli.command, Command::Serve(_)));
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => return report(CliError::failure(format!("cannot start the async runtime: {e}"))),
    };
    let outcome = runtime.block_on(commands::run(cli));
    // Background tasks (a stuck HTTP connection, a pool reaper) must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => report(e),
    }
}

fn report(e: CliError) -> ExitCode {
    eprintln!("{}", e.line());
    ExitCode::from(e.code)
}

/// Help and version print in full and exit 0; usage errors print one line and exit 2.
fn clap_exit(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            ExitCode::SUCCESS
        }
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            ExitCode::from(exit::BAD_INPUT)
        }
        _ => {
            eprintln!("{}", exit::clap_line(&e.render().to_string()));
            ExitCode::from(exit::BAD_INPUT)
        }
    }
}

/// Logs go to stderr, filtered by RUST_LOG (default `info` for serve, `warn` otherwise).
fn init_logging(format: LogFormat, serving: bool) {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let default = if serving { "info" } else { "warn" };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    // An already installed subscriber (tests calling main twice) is not an error.
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_command_line_is_consistent() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
