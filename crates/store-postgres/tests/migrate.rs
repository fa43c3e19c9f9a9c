//! Several nodes starting at once on an empty database: each migration is applied once, every
//! node succeeds, and running again changes nothing.

use kairos_store::Store;
use kairos_store_postgres::PgStore;
use kairos_store_postgres::test_support::fresh_schema_url;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn nodes_migrating_together_apply_each_migration_once() {
    let Some(url) = fresh_schema_url().await else { return };
    let mut tasks = Vec::new();
    for _ in 0..6 {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let store = PgStore::connect(&url).await.unwrap();
            store.migrate().await.unwrap();
            store
        }));
    }
    let mut stores = Vec::new();
    for t in tasks {
        stores.push(t.await.unwrap());
    }
    stores[0].migrate().await.unwrap();
    let applied = stores[0].sql_query("SELECT count(*), bool_and(success) FROM _sqlx_migrations", &[]).await.unwrap();
    let migrations = std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/migrations")).unwrap().count() as i64;
    assert_eq!(applied[0][0].as_i64(), Some(migrations));
    assert_eq!(applied[0][1], kairos_store::SqlValue::Bool(true));
}
