-- Reconciliation's incidents and repairs (SPEC C7, seed 002 §28–§31, §38). One row per
-- difference the reconciler could not (or may not) repair by itself, and one per repair it made:
--   kind             'incident' (a person decides) or 'repair' (an auto-repair inside §30's
--                    bounds, recorded with its before and after; born CLOSED).
--   rule_id          the reconciliation rule that matched; difference its raw description.
--   business_*       the business record; process_instance_id / definition id when known.
--   evidence_json    the snapshot the decision was made on: business row, bindings, runtime,
--                    history, tasks, jobs, commands, outbox and inbox, an external check.
--   plan             the repair plan (the rule's, then the approver's).
--   status           OPEN → APPROVED → EXECUTED → CLOSED (or OPEN → CLOSED, dismissed).
--   approved_by / executed_by  two people: the execution refuses the approver (§31).
--   action_json      the engine API call or compensation used; before_json / after_json and
--                    verification what changed and whether the record is consistent after.
--   audit_json       every step: who, when, what.
--   open_key         rule + business while the incident is open (NULL once closed): one open
--                    incident per rule and record, however often the reconciler passes.
CREATE TABLE kairos_incident (
    id                    VARCHAR(64) PRIMARY KEY,
    kind                  VARCHAR(16) NOT NULL,
    rule_id               VARCHAR(64) NOT NULL,
    business_type         VARCHAR(64) NOT NULL,
    business_id           VARCHAR(64) NOT NULL,
    business_state        VARCHAR(32),
    process_instance_id   VARCHAR(128),
    process_definition_id VARCHAR(128),
    difference            VARCHAR(2000) NOT NULL,
    evidence_json         TEXT NOT NULL,
    plan                  VARCHAR(2000),
    status                VARCHAR(16) NOT NULL,
    approved_by           VARCHAR(255),
    executed_by           VARCHAR(255),
    action_json           TEXT,
    before_json           TEXT,
    after_json            TEXT,
    verification          VARCHAR(2000),
    audit_json            TEXT NOT NULL,
    open_key              VARCHAR(255),
    created_at            TEXT NOT NULL,
    updated_at            TEXT NOT NULL
);
CREATE UNIQUE INDEX kairos_incident_open ON kairos_incident (open_key);
CREATE INDEX kairos_incident_business ON kairos_incident (business_type, business_id);
CREATE INDEX kairos_incident_status ON kairos_incident (status, created_at);
