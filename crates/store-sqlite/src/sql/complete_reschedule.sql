-- A repeating timer fired successfully: the same row moves to its next due date ?2 with the
-- remaining cycle ?3, unlocked. A successful fire also clears the last failure.
UPDATE ACT_RU_JOB
SET DUEDATE_ = ?2, REPEAT_ = ?3,
    LOCK_OWNER_ = NULL, LOCK_TIME_ = NULL, LOCK_EXP_TIME_ = NULL,
    EXCEPTION_MSG_ = NULL, EXCEPTION_STACK_ID_ = NULL,
    REV_ = REV_ + 1
WHERE ID_ = ?1
