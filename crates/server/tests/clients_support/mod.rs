//! What the clients_* test binaries share: where the installed client libraries are
//! (`scripts/clients.sh`), and running one of the programs in `clients/` against a node with a
//! time limit, its output shown when it fails.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

/// The `clients/` folder with its libraries installed, or `None` (the test skips) when they are
/// not and `KAIROS_REQUIRE_CLIENTS` is unset; with it set (scripts/test.sh), a missing install
/// fails the test.
pub fn clients() -> Option<PathBuf> {
    let dir = std::env::var_os("KAIROS_CLIENTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../clients"));
    let installed = dir.join(".venv/bin/python").exists();
    if !installed {
        assert!(
            std::env::var_os("KAIROS_REQUIRE_CLIENTS").is_none(),
            "KAIROS_REQUIRE_CLIENTS is set but the client libraries are not installed in {}: run scripts/clients.sh",
            dir.display()
        );
        eprintln!("skipped: the client libraries are not installed (scripts/clients.sh)");
        return None;
    }
    Some(dir)
}

/// What a client program printed, after it exited 0.
#[derive(Debug)]
pub struct Ran {
    pub stdout: String,
    /// One value per JSON line of stdout.
    pub lines: Vec<serde_json::Value>,
}

/// Runs `program args…` in `dir` for at most `limit`; panics with its output unless it exits 0.
pub async fn run(dir: &std::path::Path, program: &str, args: &[&str], limit: Duration) -> Ran {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).current_dir(dir).kill_on_drop(true).env("NO_COLOR", "1");
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
    let out = match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(out) => out.unwrap(),
        Err(_) => panic!("{program} {args:?} did not finish within {limit:?}"),
    };
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{program} {args:?} failed ({}):\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
        out.status
    );
    let lines = stdout.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    Ran { stdout, lines }
}

/// Runs `clients/DIR/SCRIPT` with Node.js, the node's base URL (and `extra`) as its arguments.
pub async fn node(clients: &std::path::Path, dir: &str, script: &str, base: &str) -> Ran {
    node_with(clients, dir, script, &[base]).await
}

pub async fn node_with(clients: &std::path::Path, dir: &str, script: &str, args: &[&str]) -> Ran {
    let all: Vec<&str> = std::iter::once(script).chain(args.iter().copied()).collect();
    run(&clients.join(dir), "node", &all, Duration::from_secs(120)).await
}

/// Runs `clients/DIR/SCRIPT` with the clients' Python, the node's base URL as its argument.
pub async fn python(clients: &std::path::Path, dir: &str, script: &str, base: &str) -> Ran {
    python_with(clients, dir, script, &[base]).await
}

pub async fn python_with(clients: &std::path::Path, dir: &str, script: &str, args: &[&str]) -> Ran {
    let py = clients.join(".venv/bin/python");
    let all: Vec<&str> = std::iter::once(script).chain(args.iter().copied()).collect();
    run(&clients.join(dir), py.to_str().unwrap(), &all, Duration::from_secs(120)).await
}
