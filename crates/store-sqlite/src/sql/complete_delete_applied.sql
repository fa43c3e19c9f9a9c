-- Successful one-shot attempts, step 1 of 4: which of them still hold their lease. ?1 is a
-- JSON array with one element per job: [id, node, attempt, log id, start, end, message]; the
-- lease is id + owner + attempt. jsonb_each hands each element over as JSONB, so ->> reads it
-- without parsing it again. One row comes back: the ids as a JSON array, and whether any of
-- those jobs has ACT_GE_BYTEARRAY rows to delete.
SELECT json_group_array(j.ID_) AS IDS_,
       coalesce(SUM(j.EXCEPTION_STACK_ID_ IS NOT NULL OR j.CUSTOMVALUES_ID_ IS NOT NULL), 0) AS WITH_BYTES_
FROM jsonb_each(?1) AS c
CROSS JOIN ACT_RU_JOB AS j
  ON j.ID_ = c.value ->> 0 AND j.LOCK_OWNER_ = c.value ->> 1 AND j.ATTEMPTS_ = c.value ->> 2
