-- How a process instance was withdrawn, terminated or deleted (seed 002 §27): who, why, where
-- it was (its active activities), the tasks, jobs and waits it still had, the business state,
-- the external actions still pending and the compensation plan. Written in the transaction
-- that ends the instance, kept after its runtime rows go (like history), one row per instance.
CREATE TABLE kairos_termination (
    process_instance_id VARCHAR(64) PRIMARY KEY,
    kind                VARCHAR(16) NOT NULL,
    user_id             VARCHAR(255),
    reason              VARCHAR(4000) NOT NULL,
    activities_json     TEXT NOT NULL,
    tasks_json          TEXT NOT NULL,
    jobs_json           TEXT NOT NULL,
    waits_json          TEXT NOT NULL,
    business_state      VARCHAR(255),
    pending_actions     VARCHAR(4000),
    compensation_plan   VARCHAR(4000),
    node_id             VARCHAR(255),
    recorded_at         TIMESTAMP(3) WITH TIME ZONE NOT NULL
);
