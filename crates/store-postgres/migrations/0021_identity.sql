-- Users, groups and memberships in Activiti/Flowable's own identity tables (ACT_ID_USER,
-- ACT_ID_GROUP, ACT_ID_MEMBERSHIP), so a team's user and group ids mean the same here as in the
-- engine they come from. PWD_ holds an Argon2id hash in PHC form, never a password; a user with
-- none cannot log in. TENANT_ID_ is the one tenant a user belongs to ('' = none), as in Flowable.
-- A membership names a user and a group that exist; deleting either deletes its memberships
-- (the engine deletes them in the same transaction).
CREATE TABLE ACT_ID_USER (
    ID_           VARCHAR(64) PRIMARY KEY,
    REV_          INTEGER NOT NULL DEFAULT 1,
    FIRST_        VARCHAR(255),
    LAST_         VARCHAR(255),
    DISPLAY_NAME_ VARCHAR(255),
    EMAIL_        VARCHAR(255),
    PWD_          VARCHAR(255),
    PICTURE_ID_   VARCHAR(64),
    TENANT_ID_    VARCHAR(255) NOT NULL DEFAULT ''
);
CREATE TABLE ACT_ID_GROUP (
    ID_   VARCHAR(64) PRIMARY KEY,
    REV_  INTEGER NOT NULL DEFAULT 1,
    NAME_ VARCHAR(255),
    TYPE_ VARCHAR(255)
);
CREATE TABLE ACT_ID_MEMBERSHIP (
    USER_ID_  VARCHAR(64) NOT NULL REFERENCES ACT_ID_USER (ID_),
    GROUP_ID_ VARCHAR(64) NOT NULL REFERENCES ACT_ID_GROUP (ID_),
    PRIMARY KEY (USER_ID_, GROUP_ID_)
);
CREATE INDEX ACT_IDX_MEMB_GROUP ON ACT_ID_MEMBERSHIP (GROUP_ID_);
