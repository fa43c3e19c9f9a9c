-- History level `full` (Flowable's): one ACT_HI_DETAIL row per variable change, TYPE_
-- 'VariableUpdate', with Flowable's columns and indexes. REV_ is the revision of the variable
-- row the change belongs to. The value columns are ACT_HI_VARINST's: TEXT_ is unbounded (a JSON
-- or string value is kept whole) where Flowable has VARCHAR(4000). Deleted with the instance's
-- other history by the history cleanup; deleting an instance keeps it.
CREATE TABLE ACT_HI_DETAIL (
    ID_            VARCHAR(64) PRIMARY KEY,
    TYPE_          VARCHAR(255) NOT NULL,
    PROC_INST_ID_  VARCHAR(64),
    EXECUTION_ID_  VARCHAR(64),
    TASK_ID_       VARCHAR(64),
    ACT_INST_ID_   VARCHAR(64),
    NAME_          VARCHAR(255) NOT NULL,
    VAR_TYPE_      VARCHAR(64),
    REV_           INTEGER,
    TIME_          TEXT NOT NULL,
    BYTEARRAY_ID_  VARCHAR(64),
    DOUBLE_        REAL,
    LONG_          INTEGER,
    TEXT_          TEXT,
    TEXT2_         VARCHAR(4000)
);
CREATE INDEX ACT_IDX_HI_DETAIL_PROC_INST ON ACT_HI_DETAIL (PROC_INST_ID_);
CREATE INDEX ACT_IDX_HI_DETAIL_ACT_INST ON ACT_HI_DETAIL (ACT_INST_ID_);
CREATE INDEX ACT_IDX_HI_DETAIL_TIME ON ACT_HI_DETAIL (TIME_);
CREATE INDEX ACT_IDX_HI_DETAIL_NAME ON ACT_HI_DETAIL (NAME_);
CREATE INDEX ACT_IDX_HI_DETAIL_TASK_ID ON ACT_HI_DETAIL (TASK_ID_);
