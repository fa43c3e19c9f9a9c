-- Registers node ?1 or records its heartbeat at the database now ?5. STARTED_ is kept while the
-- same process keeps running and reset when the node comes back as a new process.
INSERT INTO KAIROS_NODE (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_)
VALUES (?1, ?2, ?3, ?4, ?5, ?5, 'running')
ON CONFLICT (ID_) DO UPDATE SET
    HOST_ = excluded.HOST_,
    PID_ = excluded.PID_,
    WORKERS_ = excluded.WORKERS_,
    STARTED_ = CASE WHEN KAIROS_NODE.STATE_ = 'running' AND KAIROS_NODE.PID_ = excluded.PID_
                    THEN KAIROS_NODE.STARTED_ ELSE excluded.STARTED_ END,
    HEARTBEAT_ = excluded.HEARTBEAT_,
    STATE_ = 'running'
