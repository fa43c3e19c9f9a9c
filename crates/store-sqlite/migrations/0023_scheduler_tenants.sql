-- A scheduler job's tenant (SPEC I7): kairos's column beside Quartz's, '' for none. A trigger
-- is its job's tenant's, and a firing's work job in ACT_RU_JOB carries it.
ALTER TABLE QRTZ_JOB_DETAILS ADD COLUMN TENANT_ID_ VARCHAR(255) NOT NULL DEFAULT '';
