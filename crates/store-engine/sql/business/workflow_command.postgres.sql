-- The command table of seed 002 §8, in the BUSINESS database (SPEC C6): a team inserts a row in
-- its own business transaction, kairos's command worker claims it, runs it against the engine
-- and writes the outcome back. Idempotent: `kairos commands schema` may run any number of times.
CREATE TABLE IF NOT EXISTS workflow_command (
    request_id          VARCHAR(128) PRIMARY KEY,
    command_type        VARCHAR(32)  NOT NULL,
    business_type       VARCHAR(64)  NOT NULL,
    business_id         VARCHAR(128) NOT NULL,
    lifecycle_no        BIGINT,
    payload_json        TEXT         NOT NULL,
    command_status      VARCHAR(16)  NOT NULL DEFAULT 'PENDING',
    process_instance_id VARCHAR(64),
    result_code         VARCHAR(64),
    attempts            INTEGER      NOT NULL DEFAULT 0,
    next_attempt_at     TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    owner               VARCHAR(128),
    lease_until         TIMESTAMP(3) WITH TIME ZONE,
    last_error          TEXT,
    created_at          TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    updated_at          TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    CONSTRAINT workflow_command_status_ck
        CHECK (command_status IN ('PENDING', 'PROCESSING', 'SUCCEEDED', 'RETRY', 'FAILED'))
);
CREATE INDEX IF NOT EXISTS workflow_command_due_ix ON workflow_command (command_status, next_attempt_at);
CREATE INDEX IF NOT EXISTS workflow_command_business_ix ON workflow_command (business_type, business_id);
