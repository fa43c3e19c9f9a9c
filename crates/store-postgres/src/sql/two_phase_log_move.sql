UPDATE KAIROS_TWO_PHASE
   SET STATE_ = $2,
       LAST_ERROR_ = coalesce($4, LAST_ERROR_),
       UPDATE_TIME_ = date_trunc('milliseconds', now())
 WHERE ID_ = $1 AND STATE_ = ANY($3)
