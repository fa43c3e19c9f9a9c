//! The backend-neutral conformance suite (kairos_store::conformance) against PostgreSQL, one
//! fresh schema per case. Skipped without `KAIROS_TEST_PG_URL` unless `KAIROS_REQUIRE_PG=1`.

kairos_store::conformance_suite!(async {
    kairos_store_postgres::test_support::test_store().await.map(|store| Box::new(store) as Box<dyn kairos_store::Store>)
});
