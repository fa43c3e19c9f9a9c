-- The dead letter $1, locked for the move that follows in the same transaction (so it is read
-- as it is moved: one kairos cannot read is refused before anything changes).
SELECT * FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = $1 FOR UPDATE
