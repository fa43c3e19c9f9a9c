//! Shared by the Rust peers' drivers: the standard arguments and the one JSON line.
use std::collections::HashMap;

pub struct Args {
    pub workload: String,
    pub jobs: u64,
    pub concurrency: usize,
    pub url: String,
}

pub fn args(default_concurrency: usize) -> Args {
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut m = HashMap::new();
    for pair in v.chunks(2) {
        if let [k, val] = pair {
            m.insert(k.trim_start_matches("--").to_string(), val.clone());
        }
    }
    Args {
        workload: m.get("workload").cloned().unwrap_or_else(|| "drain".into()),
        jobs: m.get("jobs").and_then(|s| s.parse().ok()).unwrap_or(100_000),
        concurrency: m.get("concurrency").and_then(|s| s.parse().ok()).filter(|c| *c > 0).unwrap_or(default_concurrency),
        url: m.get("url").cloned().expect("--url URL"),
    }
}

/// Prints the result line; `result` is None for a workload this driver does not implement.
pub fn emit(peer: &str, version: &str, workload: &str, result: Option<serde_json::Value>) {
    let mut o = serde_json::json!({"peer": peer, "version": version, "workload": workload});
    match result {
        Some(serde_json::Value::Object(r)) => o.as_object_mut().unwrap().extend(r),
        _ => {
            o["error"] = "not yet implemented".into();
        }
    }
    println!("{o}");
}

pub fn measured(jobs: u64, secs: f64, settings: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "jobs": jobs, "seconds": (secs * 1000.0).round() / 1000.0,
        "jobs_per_s": (jobs as f64 / secs * 10.0).round() / 10.0, "settings": settings,
    })
}

/// Polls `sql` (a single count) until it equals `target`.
pub async fn wait_count(pool: &sqlx::PgPool, sql: &str, target: i64) {
    loop {
        let n: i64 = sqlx::query_scalar(sql).fetch_one(pool).await.expect("count");
        if n == target {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}
