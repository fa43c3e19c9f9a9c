-- Business bindings (SPEC C3, seed 002 §4): which process instance runs for which business
-- object, one row per lifecycle (a resubmission after a rejection is the next lifecycle_no).
-- The unique keys are §4's: an instance has one binding; a business object has at most one
-- instance per process type and lifecycle, so two concurrent submissions cannot both bind.
-- binding_status follows the instance in the same transaction (ACTIVE, ENDED, DELETED).
CREATE TABLE business_process_binding (
    id                    INTEGER PRIMARY KEY,
    business_type         VARCHAR(64) NOT NULL,
    business_id           VARCHAR(64) NOT NULL,
    process_type          VARCHAR(64) NOT NULL,
    process_instance_id   VARCHAR(128) NOT NULL,
    process_definition_id VARCHAR(128) NOT NULL,
    lifecycle_no          INT NOT NULL,
    binding_status        VARCHAR(32) NOT NULL,
    created_at            TEXT NOT NULL,
    ended_at              TEXT,
    UNIQUE (process_instance_id),
    UNIQUE (business_type, business_id, process_type, lifecycle_no)
);

-- The consumer's inbox (SPEC C5, seed 002 §15): the primary key decides which delivery of an
-- event is the first, never a look before the insert.
CREATE TABLE inbox_message (
    consumer_name VARCHAR(128) NOT NULL,
    event_id      VARCHAR(64) NOT NULL,
    processed_at  TEXT NOT NULL,
    result_code   VARCHAR(64),
    PRIMARY KEY (consumer_name, event_id)
);
