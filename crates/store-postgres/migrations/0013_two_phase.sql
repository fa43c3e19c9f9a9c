-- The coordinator log of the opt-in two-phase commit (SPEC C11, seed 002 §21;
-- docs/two-phase-commit.md): one row per global transaction across the business database and
-- this one. The row is committed PREPARING before either side is prepared, so every prepared
-- transaction kairos makes has a row naming it; COMMITTING is the decision, committed only once
-- both sides are prepared. Recovery reads the state to finish what a crash left prepared:
-- COMMITTING → COMMIT PREPARED what remains → COMMITTED; PREPARING (no decision) → ABORTING →
-- ROLLBACK PREPARED → ROLLED_BACK. Every state change is conditional on the state it leaves, so
-- a slow coordinator and a recovery cannot both decide.
CREATE TABLE KAIROS_TWO_PHASE (
    ID_            VARCHAR(64) PRIMARY KEY,
    -- The gids of the two prepared transactions (PREPARE TRANSACTION 'gid').
    GID_BUSINESS_  VARCHAR(200) NOT NULL,
    GID_KAIROS_    VARCHAR(200) NOT NULL,
    STATE_         VARCHAR(16) NOT NULL
        CHECK (STATE_ IN ('PREPARING', 'COMMITTING', 'COMMITTED', 'ABORTING', 'ROLLED_BACK')),
    -- The node that coordinated it.
    NODE_          VARCHAR(255) NOT NULL,
    LAST_ERROR_    TEXT,
    CREATE_TIME_   TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT date_trunc('milliseconds', now()),
    UPDATE_TIME_   TIMESTAMP(3) WITH TIME ZONE NOT NULL DEFAULT date_trunc('milliseconds', now())
);
-- Recovery looks only at the rows not final: the partial index stays as small as the in-doubt
-- work however many finished rows the table keeps.
CREATE INDEX KAIROS_IDX_TWO_PHASE_OPEN ON KAIROS_TWO_PHASE (UPDATE_TIME_)
    WHERE STATE_ NOT IN ('COMMITTED', 'ROLLED_BACK');
-- The recovery loop deletes final rows past their retention, oldest first, a bounded batch a
-- round: by this index, not by a scan of the table.
CREATE INDEX KAIROS_IDX_TWO_PHASE_UPDATED ON KAIROS_TWO_PHASE (UPDATE_TIME_);
