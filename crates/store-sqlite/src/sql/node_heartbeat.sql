-- Registers node ?1 or records its heartbeat at the database now ?5. STARTED_ is kept while the
-- same process keeps running and reset when the node comes back as a new process.
-- The settings columns are the registration's (node_register.sql): a running node's settings do
-- not change, so a heartbeat only fills them in for a row that has none (one it creates, or one
-- of a node that registered without them) and never rewrites them.
INSERT INTO KAIROS_NODE (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_,
                         LOCK_TIME_MS_, HEARTBEAT_MS_, DEAD_AFTER_MS_, LOOKAHEAD_MS_, POLL_MS_, TIME_ZONE_)
VALUES (?1, ?2, ?3, ?4, ?5, ?5, 'running', ?6, ?7, ?8, ?9, ?10, ?11)
ON CONFLICT (ID_) DO UPDATE SET
    HOST_ = excluded.HOST_,
    PID_ = excluded.PID_,
    WORKERS_ = excluded.WORKERS_,
    LOCK_TIME_MS_ = coalesce(KAIROS_NODE.LOCK_TIME_MS_, excluded.LOCK_TIME_MS_),
    HEARTBEAT_MS_ = coalesce(KAIROS_NODE.HEARTBEAT_MS_, excluded.HEARTBEAT_MS_),
    DEAD_AFTER_MS_ = coalesce(KAIROS_NODE.DEAD_AFTER_MS_, excluded.DEAD_AFTER_MS_),
    LOOKAHEAD_MS_ = coalesce(KAIROS_NODE.LOOKAHEAD_MS_, excluded.LOOKAHEAD_MS_),
    POLL_MS_ = coalesce(KAIROS_NODE.POLL_MS_, excluded.POLL_MS_),
    TIME_ZONE_ = coalesce(KAIROS_NODE.TIME_ZONE_, excluded.TIME_ZONE_),
    STARTED_ = CASE WHEN KAIROS_NODE.STATE_ = 'running' AND KAIROS_NODE.PID_ = excluded.PID_
                    THEN KAIROS_NODE.STARTED_ ELSE excluded.STARTED_ END,
    HEARTBEAT_ = excluded.HEARTBEAT_,
    STATE_ = 'running'
