SELECT gid, (EXTRACT(EPOCH FROM (now() - prepared)) * 1000)::BIGINT AS age_ms_
  FROM pg_prepared_xacts
 WHERE database = current_database() AND starts_with(gid, $1)
 ORDER BY prepared, gid
