-- Idempotent commands (SPEC C2, seed 002 §8.1 and §25): a start or a task completion that
-- carries a requestId records it here in the command's own transaction. The primary key is the
-- last line of defence seed 002 asks for: of two concurrent commands with one requestId, one
-- commits; a retry finds the row and gets the first result (RESULT_, the response as JSON).
-- FINGERPRINT_ (SHA-256 of the request) tells a retry from a requestId reused for a different
-- request. Rows are deleted by the history cleanup once older than the request retention.
CREATE TABLE KAIROS_REQUEST (
    REQUEST_ID_   VARCHAR(64) PRIMARY KEY,
    COMMAND_      VARCHAR(32) NOT NULL,
    FINGERPRINT_  VARCHAR(64) NOT NULL,
    RESULT_       TEXT,
    CREATE_TIME_  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%d %H:%M:%f', 'now'))
);
CREATE INDEX KAIROS_IDX_REQUEST_CREATE ON KAIROS_REQUEST (CREATE_TIME_);
