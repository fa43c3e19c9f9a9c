-- Comments on tasks and process instances (Flowable's ACT_HI_COMMENT, `POST
-- /runtime/tasks/{id}/comments`): kept as history, after the task ends, and deleted with the
-- instance's history by the history cleanup.
CREATE TABLE ACT_HI_COMMENT (
    ID_           VARCHAR(64) PRIMARY KEY,
    TYPE_         VARCHAR(255),
    TIME_         TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    USER_ID_      VARCHAR(255),
    TASK_ID_      VARCHAR(64),
    PROC_INST_ID_ VARCHAR(64),
    ACTION_       VARCHAR(255),
    MESSAGE_      VARCHAR(4000),
    FULL_MSG_     TEXT
);
CREATE INDEX ACT_IDX_HI_COMMENT_TASK ON ACT_HI_COMMENT (TASK_ID_);
CREATE INDEX ACT_IDX_HI_COMMENT_PROCINST ON ACT_HI_COMMENT (PROC_INST_ID_);
