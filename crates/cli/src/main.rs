//! `kairos`: see `kairos --help`.

fn main() -> std::process::ExitCode {
    kairos_cli::main()
}
