-- Jobs whose process instance has ended according to history (seed 000 §4.3, second case).
SELECT j.* FROM ACT_RU_JOB j JOIN ACT_HI_PROCINST h ON h.PROC_INST_ID_ = j.PROCESS_INSTANCE_ID_
WHERE h.END_TIME_ IS NOT NULL
ORDER BY j.DUEDATE_, j.ID_
LIMIT ?1 + 0
