-- The settings each node runs with (issue 14, item 10), written when it registers and with its
-- heartbeats, so `kairos doctor` run as a tool judges leases, liveness and time zones by what
-- the nodes really use instead of by its own defaults. Durations in milliseconds; all null for
-- a row written before this migration (the doctor then falls back to its own settings).
ALTER TABLE KAIROS_NODE ADD COLUMN LOCK_TIME_MS_ INTEGER;
ALTER TABLE KAIROS_NODE ADD COLUMN HEARTBEAT_MS_ INTEGER;
ALTER TABLE KAIROS_NODE ADD COLUMN DEAD_AFTER_MS_ INTEGER;
ALTER TABLE KAIROS_NODE ADD COLUMN LOOKAHEAD_MS_ INTEGER;
ALTER TABLE KAIROS_NODE ADD COLUMN POLL_MS_ INTEGER;
ALTER TABLE KAIROS_NODE ADD COLUMN TIME_ZONE_ VARCHAR(64);
