-- A failed attempt with retries left (seed 001's failure branch): RETRIES_ ?2, due again at ?3,
-- unlocked, with the message ?4 and the stack trace row ?5.
UPDATE ACT_RU_JOB
SET RETRIES_ = ?2, DUEDATE_ = ?3,
    LOCK_OWNER_ = NULL, LOCK_TIME_ = NULL, LOCK_EXP_TIME_ = NULL,
    EXCEPTION_MSG_ = ?4, EXCEPTION_STACK_ID_ = ?5,
    REV_ = REV_ + 1
WHERE ID_ = ?1
