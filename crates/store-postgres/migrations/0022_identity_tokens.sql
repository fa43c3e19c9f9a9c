-- Per-user API tokens and console sessions in Flowable's ACT_ID_TOKEN: TOKEN_VALUE_ holds the
-- SHA-256 of the secret (hex), never the secret, which is shown once when it is made. Secrets are
-- 256-bit random, so a fast hash is enough (a slow one protects guessable passwords, not these)
-- and a presented one is found by its hash. KIND_ (kairos's) is 'api' for a token, whose
-- TOKEN_DATA_ is the name its owner gave it, or 'session' for a console login, which ends at
-- EXPIRES_ (kairos's) and records the IP_ADDRESS_ and USER_AGENT_ it was made from. A user's
-- tokens and sessions are deleted with the user.
CREATE TABLE ACT_ID_TOKEN (
    ID_          VARCHAR(64) PRIMARY KEY,
    REV_         INTEGER NOT NULL DEFAULT 1,
    TOKEN_VALUE_ VARCHAR(255) NOT NULL,
    TOKEN_DATE_  TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    IP_ADDRESS_  VARCHAR(255),
    USER_AGENT_  VARCHAR(255),
    USER_ID_     VARCHAR(255) NOT NULL,
    TOKEN_DATA_  VARCHAR(2000),
    KIND_        VARCHAR(16) NOT NULL DEFAULT 'api',
    EXPIRES_     TIMESTAMP(3) WITH TIME ZONE
);
CREATE UNIQUE INDEX ACT_UNIQ_ID_TOKEN_VALUE ON ACT_ID_TOKEN (TOKEN_VALUE_);
CREATE INDEX ACT_IDX_ID_TOKEN_USER ON ACT_ID_TOKEN (USER_ID_);
