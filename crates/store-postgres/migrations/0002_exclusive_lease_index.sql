-- Acquisition checks, for every exclusive candidate it scans, whether another exclusive job of
-- the same EXCLUSIVE_KEY_ holds a lease (SPEC J5). This index holds only leased exclusive rows,
-- so the check is one probe however many jobs are running or queued behind a busy key.
CREATE INDEX ACT_IDX_JOB_EXCL_LEASED ON ACT_RU_JOB (EXCLUSIVE_KEY_)
    WHERE LOCK_OWNER_ IS NOT NULL AND EXCLUSIVE_;
