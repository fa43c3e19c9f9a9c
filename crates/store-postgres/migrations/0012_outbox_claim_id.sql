-- A publisher reads back the rows its claim took by claim_id; marks clear it, so the partial
-- index holds only the events in flight and the read stays a lookup however large the table of
-- PUBLISHED events grows (without it, each claim scanned the whole table).
CREATE INDEX outbox_event_claim_id ON outbox_event (claim_id) WHERE claim_id IS NOT NULL;
