-- The minimal job table of the SQL floor: what any Postgres-backed queue must at least touch.
DROP TABLE IF EXISTS jobs;
CREATE TABLE jobs (
    id      bigserial PRIMARY KEY,
    queue   text        NOT NULL DEFAULT 'default',
    run_at  timestamptz NOT NULL DEFAULT now(),
    payload jsonb       NOT NULL DEFAULT '{}'
);
