-- One job per transaction: claim the oldest free job, then delete it (its completion).
BEGIN;
SELECT coalesce((SELECT id FROM jobs ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED), 0) AS id \gset
DELETE FROM jobs WHERE id = :id;
COMMIT;
