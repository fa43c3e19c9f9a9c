-- Which of the completions the lease refused had been applied already, by an earlier call whose
-- answer was lost (a COMMIT that succeeded on a connection that broke before saying so): their
-- attempt then has its log row from this node, with any outcome but 'abandoned' or 'not-started' (which only a
-- take-over or a hand-back writes, for the attempt it ends). Attempt numbers are never reused,
-- so that row is this attempt's own completion. $1..$3: ids, attempts, nodes; answers the
-- 1-based positions of those found.
SELECT c.i AS i_
FROM unnest($1::text[], $2::int[], $3::text[]) WITH ORDINALITY AS c(id, attempt, node, i)
WHERE EXISTS (
    SELECT 1 FROM ACT_HI_JOB_LOG l
    WHERE l.JOB_ID_ = c.id AND l.ATTEMPT_ = c.attempt AND l.NODE_ID_ = c.node AND l.OUTCOME_ NOT IN ('abandoned', 'not-started')
)
