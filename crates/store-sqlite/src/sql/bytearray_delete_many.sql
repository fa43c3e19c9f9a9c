-- ?1: a JSON array of ACT_GE_BYTEARRAY ids (stack traces, custom values) to drop with their job.
DELETE FROM ACT_GE_BYTEARRAY WHERE ID_ IN (SELECT value FROM json_each(?1))
