-- Running nodes whose last heartbeat is older than ?1 are declared dead.
UPDATE KAIROS_NODE SET STATE_ = 'dead' WHERE STATE_ = 'running' AND HEARTBEAT_ < ?1
RETURNING ID_
