-- The two-phase commit's coordinator log (SPEC C11) exists on PostgreSQL only: SQLite has no
-- PREPARE TRANSACTION, and kairos on SQLite answers a two-phase request with an error. This
-- file keeps the migration numbers of the two backends in step.
SELECT 1;
