-- The transactional outbox (SPEC C4, seed 002 §12–§14). The first eleven columns are §12's,
-- by name, so its queries run unchanged; the rest are what a leased publisher needs (§13):
--   owner, lease_until  who holds a PROCESSING event and until when: an expired lease is how a
--                       crashed publisher's events come back; every mark is fenced by owner.
--   claim_id            the claim that took the event, so a publisher reads back exactly the
--                       rows its one claiming statement took.
--   max_attempts        deliveries before FAILED (set per event at write time).
--   ordered, seq        ordered = 1: events of one aggregate are delivered one at a time in seq
--                       order (seq grows per aggregate within a transaction); 0: any order.
--   target              the sink to deliver to, by name (e.g. "http").
--   target_url          for the http sink: where to POST (NULL: the sink's base URL).
--   last_error          the last failure's message, bounded (last_error_code is its class).
-- Statuses: PENDING, PROCESSING, PUBLISHED, RETRY, FAILED.
CREATE TABLE outbox_event (
    event_id        VARCHAR(64) PRIMARY KEY,
    aggregate_type  VARCHAR(64) NOT NULL,
    aggregate_id    VARCHAR(64) NOT NULL,
    event_type      VARCHAR(128) NOT NULL,
    payload_json    TEXT NOT NULL,
    event_status    VARCHAR(32) NOT NULL,
    retry_count     INT NOT NULL DEFAULT 0,
    next_retry_at   TIMESTAMP(3) WITH TIME ZONE,
    created_at      TIMESTAMP(3) WITH TIME ZONE NOT NULL,
    published_at    TIMESTAMP(3) WITH TIME ZONE,
    last_error_code VARCHAR(128),
    owner           VARCHAR(255),
    lease_until     TIMESTAMP(3) WITH TIME ZONE,
    claim_id        VARCHAR(64),
    max_attempts    INT NOT NULL,
    ordered         INT NOT NULL DEFAULT 0,
    seq             BIGINT NOT NULL DEFAULT 0,
    target          VARCHAR(64) NOT NULL,
    target_url      VARCHAR(2048),
    last_error      VARCHAR(2000)
);

-- The claim's scan: open events by status and due time (PUBLISHED and FAILED rows, the bulk of
-- an old table, are outside the partial index).
CREATE INDEX outbox_event_claim ON outbox_event (event_status, next_retry_at)
    WHERE event_status IN ('PENDING', 'RETRY', 'PROCESSING');
-- Listing by aggregate, and the ordered claim's look for an earlier open event of the aggregate.
CREATE INDEX outbox_event_aggregate ON outbox_event (aggregate_type, aggregate_id, seq);
