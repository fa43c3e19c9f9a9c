-- A repeating timer fired successfully: the same row moves to its next due date ?2 with the
-- remaining cycle ?3, unlocked. A successful fire also clears the last failure, and the next
-- fire starts with the retries the job was created with (INITIAL_RETRIES_, as Flowable's new
-- timer job per fire): failures spread over a timer's life never add up to a dead letter.
UPDATE ACT_RU_JOB
SET DUEDATE_ = ?2, REPEAT_ = ?3, RETRIES_ = coalesce(INITIAL_RETRIES_, RETRIES_),
    LOCK_OWNER_ = NULL, LOCK_TIME_ = NULL, LOCK_EXP_TIME_ = NULL,
    EXCEPTION_MSG_ = NULL, EXCEPTION_STACK_ID_ = NULL,
    REV_ = REV_ + 1
WHERE ID_ = ?1
