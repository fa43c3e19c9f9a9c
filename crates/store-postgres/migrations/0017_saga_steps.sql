-- Sagas outside BPMN (SPEC C8, seed 002 §23): one row per step of a saga, keyed by the saga
-- and the step (the original operation), so a re-run after a crash skips what was done and a
-- compensation runs at most once with its record:
--   status  DONE (the action committed its effect), FAILED (the action failed: the saga
--           compensates), COMPENSATED, COMPENSATION_FAILED (out of attempts: an incident).
CREATE TABLE kairos_saga_step (
    saga_id     VARCHAR(128) NOT NULL,
    step_no     INT NOT NULL,
    step_name   VARCHAR(128) NOT NULL,
    status      VARCHAR(32) NOT NULL,
    result_json TEXT,
    attempts    INT NOT NULL DEFAULT 0,
    last_error  VARCHAR(2000),
    updated_at  TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    PRIMARY KEY (saga_id, step_no)
);
