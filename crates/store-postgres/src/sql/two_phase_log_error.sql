UPDATE KAIROS_TWO_PHASE
   SET LAST_ERROR_ = $2, UPDATE_TIME_ = date_trunc('milliseconds', now())
 WHERE ID_ = $1
