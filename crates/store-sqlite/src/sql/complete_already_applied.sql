-- Whether the completion the lease refused had been applied already, by an earlier call whose
-- answer was lost (a COMMIT that reached the disk but failed to say so): its attempt then has its
-- log row from this node, with any outcome but 'abandoned' or 'not-started' (which only a take-over or hand-back
-- writes, for the attempt it ends). Attempt numbers are never reused, so that row is this
-- attempt's own completion. ?1 job, ?2 attempt, ?3 node.
SELECT EXISTS (
    SELECT 1 FROM ACT_HI_JOB_LOG
    WHERE JOB_ID_ = ?1 AND ATTEMPT_ = ?2 AND NODE_ID_ = ?3 AND OUTCOME_ NOT IN ('abandoned', 'not-started')
) AS APPLIED_
