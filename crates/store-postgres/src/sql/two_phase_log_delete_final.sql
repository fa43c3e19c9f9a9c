DELETE FROM KAIROS_TWO_PHASE
 WHERE ID_ IN (SELECT ID_ FROM KAIROS_TWO_PHASE
                WHERE UPDATE_TIME_ < now() - make_interval(secs => $1::BIGINT / 1000.0)
                  AND STATE_ IN ('COMMITTED', 'ROLLED_BACK')
                ORDER BY UPDATE_TIME_
                LIMIT $2)
