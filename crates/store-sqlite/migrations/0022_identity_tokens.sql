-- Per-user API tokens in Flowable's ACT_ID_TOKEN: TOKEN_VALUE_ holds the SHA-256 of the token
-- (hex), never the token, which is shown once when it is made. Tokens are 256-bit random
-- secrets, so a fast hash is enough (a slow one protects guessable passwords, not these) and a
-- presented token is found by its hash. TOKEN_DATA_ is the name its owner gave it.
-- A user's tokens are deleted with the user.
CREATE TABLE ACT_ID_TOKEN (
    ID_          VARCHAR(64) PRIMARY KEY,
    REV_         INTEGER NOT NULL DEFAULT 1,
    TOKEN_VALUE_ VARCHAR(255) NOT NULL,
    TOKEN_DATE_  TEXT NOT NULL,
    IP_ADDRESS_  VARCHAR(255),
    USER_AGENT_  VARCHAR(255),
    USER_ID_     VARCHAR(255) NOT NULL,
    TOKEN_DATA_  VARCHAR(2000)
);
CREATE UNIQUE INDEX ACT_UNIQ_ID_TOKEN_VALUE ON ACT_ID_TOKEN (TOKEN_VALUE_);
CREATE INDEX ACT_IDX_ID_TOKEN_USER ON ACT_ID_TOKEN (USER_ID_);
