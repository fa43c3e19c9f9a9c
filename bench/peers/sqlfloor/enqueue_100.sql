-- Enqueue 100 jobs per transaction.
INSERT INTO jobs (payload) SELECT '{}' FROM generate_series(1, 100);
