//! apalis + apalis-postgres (crates.io 1.0.0) — driver not written yet.
//! To do: PostgresStorage::setup(&pool), push_all 100,000 unit tasks, then
//! WorkerBuilder::new("bench").backend(PostgresStorage::new(&pool).with_config(
//! Config::default().batch_size(100))).concurrency(100).build(noop); stop when the tasks table
//! holds no pending rows. PEERS.md: concurrency 100, batch = concurrency, ~5,300 jobs/s here.
fn main() {
    let workload = std::env::args().skip_while(|a| a != "--workload").nth(1).unwrap_or_else(|| "drain".into());
    println!(
        "{}",
        serde_json::json!({"peer": "apalis", "version": "1.0.0", "workload": workload,
            "error": "driver not written yet (bench/peers/rust/src/bin/apalis.rs is a stub)"})
    );
}
