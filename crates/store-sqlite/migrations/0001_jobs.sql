-- kairos schema, part 1: the job engine (SPEC J1) and the process tables that seed 001's
-- acquisition query joins. Table and column names are Activiti's, unquoted, so operators' SQL
-- from the seeds runs unchanged. Times are UTC text 'YYYY-MM-DD HH:MM:SS.SSS' (the format of
-- SQLite's strftime('%Y-%m-%d %H:%M:%f'), which sorts and compares as time; Activiti keeps
-- millisecond precision); ids are varchar(64) UUIDv7 text.

CREATE TABLE ACT_GE_BYTEARRAY (
    ID_            VARCHAR(64) PRIMARY KEY,
    REV_           INTEGER NOT NULL DEFAULT 1,
    NAME_          VARCHAR(255),
    DEPLOYMENT_ID_ VARCHAR(64),
    BYTES_         BLOB,
    GENERATED_     INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE ACT_RE_PROCDEF (
    ID_                     VARCHAR(64) PRIMARY KEY,
    REV_                    INTEGER NOT NULL DEFAULT 1,
    CATEGORY_               VARCHAR(255),
    NAME_                   VARCHAR(255),
    KEY_                    VARCHAR(255) NOT NULL,
    VERSION_                INTEGER NOT NULL,
    DEPLOYMENT_ID_          VARCHAR(64),
    RESOURCE_NAME_          VARCHAR(4000),
    DGRM_RESOURCE_NAME_     VARCHAR(4000),
    DESCRIPTION_            VARCHAR(4000),
    HAS_START_FORM_KEY_     INTEGER,
    HAS_GRAPHICAL_NOTATION_ INTEGER,
    SUSPENSION_STATE_       INTEGER NOT NULL DEFAULT 1,
    TENANT_ID_              VARCHAR(255) NOT NULL DEFAULT '',
    ENGINE_VERSION_         VARCHAR(255)
);

CREATE TABLE ACT_RU_EXECUTION (
    ID_                VARCHAR(64) PRIMARY KEY,
    REV_               INTEGER NOT NULL DEFAULT 1,
    PROC_INST_ID_      VARCHAR(64),
    BUSINESS_KEY_      VARCHAR(255),
    PARENT_ID_         VARCHAR(64),
    PROC_DEF_ID_       VARCHAR(64),
    SUPER_EXEC_        VARCHAR(64),
    ROOT_PROC_INST_ID_ VARCHAR(64),
    ACT_ID_            VARCHAR(255),
    IS_ACTIVE_         INTEGER NOT NULL DEFAULT 1,
    IS_CONCURRENT_     INTEGER NOT NULL DEFAULT 0,
    IS_SCOPE_          INTEGER NOT NULL DEFAULT 0,
    IS_EVENT_SCOPE_    INTEGER NOT NULL DEFAULT 0,
    IS_MI_ROOT_        INTEGER NOT NULL DEFAULT 0,
    SUSPENSION_STATE_  INTEGER NOT NULL DEFAULT 1,
    CACHED_ENT_STATE_  INTEGER,
    TENANT_ID_         VARCHAR(255) NOT NULL DEFAULT '',
    NAME_              VARCHAR(255),
    START_ACT_ID_      VARCHAR(255),
    START_TIME_        TEXT,
    START_USER_ID_     VARCHAR(255),
    LOCK_TIME_         TEXT
);
CREATE INDEX ACT_IDX_EXEC_PROCINST ON ACT_RU_EXECUTION (PROC_INST_ID_);
CREATE INDEX ACT_IDX_EXEC_PARENT ON ACT_RU_EXECUTION (PARENT_ID_);
CREATE INDEX ACT_IDX_EXEC_SUPER ON ACT_RU_EXECUTION (SUPER_EXEC_);
CREATE INDEX ACT_IDX_EXEC_BUSKEY ON ACT_RU_EXECUTION (BUSINESS_KEY_);

-- History of process instances; the process engine fills it. The job doctor uses END_TIME_ to
-- find jobs of ended instances.
CREATE TABLE ACT_HI_PROCINST (
    ID_                        VARCHAR(64) PRIMARY KEY,
    REV_                       INTEGER NOT NULL DEFAULT 1,
    PROC_INST_ID_              VARCHAR(64) NOT NULL UNIQUE,
    BUSINESS_KEY_              VARCHAR(255),
    PROC_DEF_ID_               VARCHAR(64),
    START_TIME_                TEXT NOT NULL,
    END_TIME_                  TEXT,
    DURATION_                  INTEGER,
    START_USER_ID_             VARCHAR(255),
    START_ACT_ID_              VARCHAR(255),
    END_ACT_ID_                VARCHAR(255),
    SUPER_PROCESS_INSTANCE_ID_ VARCHAR(64),
    DELETE_REASON_             VARCHAR(4000),
    TENANT_ID_                 VARCHAR(255) NOT NULL DEFAULT '',
    NAME_                      VARCHAR(255)
);

-- The live jobs. Beyond Activiti's columns: EXCLUSIVE_KEY_ (what exclusivity is enforced on),
-- ATTEMPTS_ (attempts started; with LOCK_OWNER_ it fences every completion and lease
-- extension), LOCK_TIME_ (when the current lease was taken) and RETRY_CYCLE_
-- (failedJobRetryTimeCycle).
CREATE TABLE ACT_RU_JOB (
    ID_                   VARCHAR(64) PRIMARY KEY,
    REV_                  INTEGER NOT NULL DEFAULT 1,
    TYPE_                 VARCHAR(255) NOT NULL,
    LOCK_EXP_TIME_        TEXT,
    LOCK_OWNER_           VARCHAR(255),
    LOCK_TIME_            TEXT,
    EXCLUSIVE_            INTEGER NOT NULL DEFAULT 0,
    EXCLUSIVE_KEY_        VARCHAR(255),
    EXECUTION_ID_         VARCHAR(64),
    PROCESS_INSTANCE_ID_  VARCHAR(64),
    PROC_DEF_ID_          VARCHAR(64),
    ELEMENT_ID_           VARCHAR(255),
    ELEMENT_NAME_         VARCHAR(255),
    SCOPE_ID_             VARCHAR(255),
    SCOPE_TYPE_           VARCHAR(255),
    SCOPE_DEFINITION_ID_  VARCHAR(255),
    RETRIES_              INTEGER NOT NULL,
    ATTEMPTS_             INTEGER NOT NULL DEFAULT 0,
    EXCEPTION_STACK_ID_   VARCHAR(64),
    EXCEPTION_MSG_        VARCHAR(4000),
    DUEDATE_              TEXT,
    REPEAT_               VARCHAR(255),
    RETRY_CYCLE_          VARCHAR(255),
    HANDLER_TYPE_         VARCHAR(255) NOT NULL,
    HANDLER_CFG_          TEXT,
    CUSTOMVALUES_ID_      VARCHAR(64),
    CREATE_TIME_          TEXT NOT NULL,
    TENANT_ID_            VARCHAR(255) NOT NULL DEFAULT ''
);
-- The ready set: only unlocked jobs with retries left, in due order. Locked rows leave the
-- index, so a deep backlog of running work does not slow acquisition.
CREATE INDEX ACT_IDX_JOB_ACQUIRE ON ACT_RU_JOB (DUEDATE_) WHERE LOCK_OWNER_ IS NULL AND RETRIES_ > 0;
-- Expired-lease lookups (rescue, doctor, metrics): only locked rows.
CREATE INDEX ACT_IDX_JOB_LOCKED ON ACT_RU_JOB (LOCK_EXP_TIME_) WHERE LOCK_OWNER_ IS NOT NULL;
-- Every index below is paid for by every insert, lock and delete of the hot path, so the
-- process columns are indexed only where set: standalone jobs (most of a queue's traffic) skip
-- them. Lock owners need no index of their own: a node's leases are found among the locked rows.
CREATE INDEX ACT_IDX_JOB_EXCL_KEY ON ACT_RU_JOB (EXCLUSIVE_KEY_) WHERE EXCLUSIVE_KEY_ IS NOT NULL;
CREATE INDEX ACT_IDX_JOB_PROCINST ON ACT_RU_JOB (PROCESS_INSTANCE_ID_) WHERE PROCESS_INSTANCE_ID_ IS NOT NULL;
CREATE INDEX ACT_IDX_JOB_EXECUTION ON ACT_RU_JOB (EXECUTION_ID_) WHERE EXECUTION_ID_ IS NOT NULL;
CREATE INDEX ACT_IDX_JOB_DUEDATE ON ACT_RU_JOB (DUEDATE_);

CREATE TABLE ACT_RU_DEADLETTER_JOB (
    ID_                   VARCHAR(64) PRIMARY KEY,
    REV_                  INTEGER NOT NULL DEFAULT 1,
    TYPE_                 VARCHAR(255) NOT NULL,
    LOCK_EXP_TIME_        TEXT,
    LOCK_OWNER_           VARCHAR(255),
    LOCK_TIME_            TEXT,
    EXCLUSIVE_            INTEGER NOT NULL DEFAULT 0,
    EXCLUSIVE_KEY_        VARCHAR(255),
    EXECUTION_ID_         VARCHAR(64),
    PROCESS_INSTANCE_ID_  VARCHAR(64),
    PROC_DEF_ID_          VARCHAR(64),
    ELEMENT_ID_           VARCHAR(255),
    ELEMENT_NAME_         VARCHAR(255),
    SCOPE_ID_             VARCHAR(255),
    SCOPE_TYPE_           VARCHAR(255),
    SCOPE_DEFINITION_ID_  VARCHAR(255),
    RETRIES_              INTEGER NOT NULL,
    ATTEMPTS_             INTEGER NOT NULL DEFAULT 0,
    EXCEPTION_STACK_ID_   VARCHAR(64),
    EXCEPTION_MSG_        VARCHAR(4000),
    DUEDATE_              TEXT,
    REPEAT_               VARCHAR(255),
    RETRY_CYCLE_          VARCHAR(255),
    HANDLER_TYPE_         VARCHAR(255) NOT NULL,
    HANDLER_CFG_          TEXT,
    CUSTOMVALUES_ID_      VARCHAR(64),
    CREATE_TIME_          TEXT NOT NULL,
    TENANT_ID_            VARCHAR(255) NOT NULL DEFAULT ''
);
CREATE INDEX ACT_IDX_DLJOB_PROCINST ON ACT_RU_DEADLETTER_JOB (PROCESS_INSTANCE_ID_);

CREATE TABLE ACT_RU_SUSPENDED_JOB (
    ID_                   VARCHAR(64) PRIMARY KEY,
    REV_                  INTEGER NOT NULL DEFAULT 1,
    TYPE_                 VARCHAR(255) NOT NULL,
    LOCK_EXP_TIME_        TEXT,
    LOCK_OWNER_           VARCHAR(255),
    LOCK_TIME_            TEXT,
    EXCLUSIVE_            INTEGER NOT NULL DEFAULT 0,
    EXCLUSIVE_KEY_        VARCHAR(255),
    EXECUTION_ID_         VARCHAR(64),
    PROCESS_INSTANCE_ID_  VARCHAR(64),
    PROC_DEF_ID_          VARCHAR(64),
    ELEMENT_ID_           VARCHAR(255),
    ELEMENT_NAME_         VARCHAR(255),
    SCOPE_ID_             VARCHAR(255),
    SCOPE_TYPE_           VARCHAR(255),
    SCOPE_DEFINITION_ID_  VARCHAR(255),
    RETRIES_              INTEGER NOT NULL,
    ATTEMPTS_             INTEGER NOT NULL DEFAULT 0,
    EXCEPTION_STACK_ID_   VARCHAR(64),
    EXCEPTION_MSG_        VARCHAR(4000),
    DUEDATE_              TEXT,
    REPEAT_               VARCHAR(255),
    RETRY_CYCLE_          VARCHAR(255),
    HANDLER_TYPE_         VARCHAR(255) NOT NULL,
    HANDLER_CFG_          TEXT,
    CUSTOMVALUES_ID_      VARCHAR(64),
    CREATE_TIME_          TEXT NOT NULL,
    TENANT_ID_            VARCHAR(255) NOT NULL DEFAULT ''
);
CREATE INDEX ACT_IDX_SJOB_PROCINST ON ACT_RU_SUSPENDED_JOB (PROCESS_INSTANCE_ID_);

-- Seed 003 names the waiting timers ACT_RU_TIMER_JOB (Activiti 6 keeps them in their own
-- table); kairos keeps one table and offers the name as a view.
CREATE VIEW ACT_RU_TIMER_JOB AS SELECT * FROM ACT_RU_JOB WHERE TYPE_ = 'timer';

-- Every attempt of every job (SPEC J12). It outlives the job row.
CREATE TABLE ACT_HI_JOB_LOG (
    ID_                  VARCHAR(64) PRIMARY KEY,
    JOB_ID_              VARCHAR(64) NOT NULL,
    ATTEMPT_             INTEGER NOT NULL,
    NODE_ID_             VARCHAR(255),
    START_TIME_          TEXT,
    END_TIME_            TEXT,
    OUTCOME_             VARCHAR(32) NOT NULL,
    MESSAGE_             VARCHAR(4000),
    TYPE_                VARCHAR(255) NOT NULL,
    HANDLER_TYPE_        VARCHAR(255) NOT NULL,
    PROCESS_INSTANCE_ID_ VARCHAR(64),
    ELEMENT_ID_          VARCHAR(255),
    EXCLUSIVE_KEY_       VARCHAR(255),
    DUEDATE_             TEXT,
    TENANT_ID_           VARCHAR(255) NOT NULL DEFAULT ''
);
CREATE INDEX ACT_IDX_HI_JOB_LOG_JOB ON ACT_HI_JOB_LOG (JOB_ID_, ATTEMPT_);
CREATE INDEX ACT_IDX_HI_JOB_LOG_PROCINST ON ACT_HI_JOB_LOG (PROCESS_INSTANCE_ID_) WHERE PROCESS_INSTANCE_ID_ IS NOT NULL;
CREATE INDEX ACT_IDX_HI_JOB_LOG_END ON ACT_HI_JOB_LOG (END_TIME_);

-- The nodes of the cluster and their heartbeats (by the database clock).
CREATE TABLE KAIROS_NODE (
    ID_        VARCHAR(255) PRIMARY KEY,
    HOST_      VARCHAR(255) NOT NULL,
    PID_       INTEGER NOT NULL,
    WORKERS_   INTEGER NOT NULL,
    STARTED_   TEXT NOT NULL,
    HEARTBEAT_ TEXT NOT NULL,
    STATE_     VARCHAR(32) NOT NULL
);
