-- Registers node ?1 as it starts, at the database now ?5: a new incarnation, so STARTED_ is
-- reset even when the row says `running` (a process restarted under a fixed node id).
INSERT INTO KAIROS_NODE (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_)
VALUES (?1, ?2, ?3, ?4, ?5, ?5, 'running')
ON CONFLICT (ID_) DO UPDATE SET
    HOST_ = excluded.HOST_,
    PID_ = excluded.PID_,
    WORKERS_ = excluded.WORKERS_,
    STARTED_ = excluded.STARTED_,
    HEARTBEAT_ = excluded.HEARTBEAT_,
    STATE_ = 'running'
