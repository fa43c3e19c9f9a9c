-- The command table of seed 002 §8, in the BUSINESS database (SPEC C6): a team inserts a row in
-- its own business transaction, kairos's command worker claims it, runs it against the engine
-- and writes the outcome back. Idempotent: `kairos commands schema` may run any number of times.
CREATE TABLE IF NOT EXISTS workflow_command (
    request_id          TEXT PRIMARY KEY,
    command_type        TEXT  NOT NULL,
    business_type       TEXT  NOT NULL,
    business_id         TEXT NOT NULL,
    lifecycle_no        INTEGER,
    payload_json        TEXT         NOT NULL,
    command_status      TEXT  NOT NULL DEFAULT 'PENDING',
    process_instance_id TEXT,
    result_code         TEXT,
    attempts            INTEGER      NOT NULL DEFAULT 0,
    next_attempt_at     TEXT NOT NULL,
    owner               TEXT,
    lease_until         TEXT,
    last_error          TEXT,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    CONSTRAINT workflow_command_status_ck
        CHECK (command_status IN ('PENDING', 'PROCESSING', 'SUCCEEDED', 'RETRY', 'FAILED'))
);
CREATE INDEX IF NOT EXISTS workflow_command_due_ix ON workflow_command (command_status, next_attempt_at);
CREATE INDEX IF NOT EXISTS workflow_command_business_ix ON workflow_command (business_type, business_id);
