-- Enqueue one job per transaction.
INSERT INTO jobs (payload) VALUES ('{}');
