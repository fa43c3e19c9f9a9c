-- Registers a node or records its heartbeat, by the database clock (SPEC J8, J9). A node that
-- comes back as a new process (another pid or host, or after it was marked stopped or dead)
-- gets a new STARTED_.
-- The settings columns are the registration's (node_register.sql): a running node's settings do
-- not change, so a heartbeat only fills them in for a row that has none (one it creates, or one
-- of a node that registered without them) and never rewrites them.
INSERT INTO KAIROS_NODE AS n (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_,
                             LOCK_TIME_MS_, HEARTBEAT_MS_, DEAD_AFTER_MS_, LOOKAHEAD_MS_, POLL_MS_, TIME_ZONE_)
VALUES ($1, $2, $3, $4, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()), 'running',
        $5, $6, $7, $8, $9, $10)
ON CONFLICT (ID_) DO UPDATE
SET HOST_ = excluded.HOST_,
    PID_ = excluded.PID_,
    WORKERS_ = excluded.WORKERS_,
    LOCK_TIME_MS_ = coalesce(n.LOCK_TIME_MS_, excluded.LOCK_TIME_MS_),
    HEARTBEAT_MS_ = coalesce(n.HEARTBEAT_MS_, excluded.HEARTBEAT_MS_),
    DEAD_AFTER_MS_ = coalesce(n.DEAD_AFTER_MS_, excluded.DEAD_AFTER_MS_),
    LOOKAHEAD_MS_ = coalesce(n.LOOKAHEAD_MS_, excluded.LOOKAHEAD_MS_),
    POLL_MS_ = coalesce(n.POLL_MS_, excluded.POLL_MS_),
    TIME_ZONE_ = coalesce(n.TIME_ZONE_, excluded.TIME_ZONE_),
    HEARTBEAT_ = excluded.HEARTBEAT_,
    STATE_ = 'running',
    STARTED_ = CASE
        WHEN n.STATE_ <> 'running' OR n.PID_ <> excluded.PID_ OR n.HOST_ <> excluded.HOST_
        THEN excluded.STARTED_ ELSE n.STARTED_ END
RETURNING HEARTBEAT_ AS heartbeat_
