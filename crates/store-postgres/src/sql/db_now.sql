-- The database's instant, the one clock of the cluster (SPEC J9), cut to the milliseconds the
-- columns keep.
SELECT date_trunc('milliseconds', now()) AS now_
