-- Registers a node or records its heartbeat, by the database clock (SPEC J8, J9). A node that
-- comes back as a new process (another pid or host, or after it was marked stopped or dead)
-- gets a new STARTED_.
INSERT INTO KAIROS_NODE AS n (ID_, HOST_, PID_, WORKERS_, STARTED_, HEARTBEAT_, STATE_)
VALUES ($1, $2, $3, $4, date_trunc('milliseconds', now()), date_trunc('milliseconds', now()), 'running')
ON CONFLICT (ID_) DO UPDATE
SET HOST_ = excluded.HOST_,
    PID_ = excluded.PID_,
    WORKERS_ = excluded.WORKERS_,
    HEARTBEAT_ = excluded.HEARTBEAT_,
    STATE_ = 'running',
    STARTED_ = CASE
        WHEN n.STATE_ <> 'running' OR n.PID_ <> excluded.PID_ OR n.HOST_ <> excluded.HOST_
        THEN excluded.STARTED_ ELSE n.STARTED_ END
RETURNING HEARTBEAT_ AS heartbeat_
