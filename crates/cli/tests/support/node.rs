//! One real `kairos serve` process of a test cluster: started with its log in a file, signalled
//! like an operator (or a crash) would, and never left running when the test ends.

use kairos::store::JobLogFilter;
use kairos::{JobLogEntry, Store};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

pub struct Node {
    pub name: String,
    pub child: Child,
    pub log: PathBuf,
}

impl Node {
    /// `kairos serve --db URL --node-id NAME --listen <free port>` plus `flags`, logging to
    /// `DIR/NAME.log`.
    pub fn start(url: &str, name: &str, dir: &Path, flags: &[String]) -> Node {
        let log = dir.join(format!("{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_kairos"))
            .args(["serve", "--db", url, "--node-id", name, "--listen"])
            .arg(format!("127.0.0.1:{}", free_port()))
            .args(flags)
            .env("RUST_LOG", "info")
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .stdin(Stdio::null())
            .spawn()
            .expect("start kairos serve");
        Node { name: name.to_string(), child, log }
    }

    pub fn signal(&self, sig: &str) {
        let _ = Command::new("kill").args([sig, &self.child.id().to_string()]).status();
    }

    pub fn kill9(&mut self) {
        self.signal("-KILL");
        let _ = self.child.wait();
    }

    /// SIGTERM (after SIGCONT, in case it is paused) and up to 20 s to exit; then SIGKILL.
    pub fn terminate(&mut self) {
        self.signal("-CONT");
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(20);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.kill9();
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.signal("-CONT");
            self.kill9();
        }
    }
}

/// Every ACT_HI_JOB_LOG row, page by page.
pub async fn all_log(store: &Arc<dyn Store>) -> Vec<JobLogEntry> {
    let mut out = Vec::new();
    let mut start = 0;
    loop {
        let page = store.job_log_list(&JobLogFilter { start, size: 1000, ..Default::default() }).await.unwrap();
        let n = page.data.len() as u64;
        out.extend(page.data);
        if n < 1000 {
            return out;
        }
        start += n;
    }
}
