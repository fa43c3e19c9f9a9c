-- An operator's "execute": the job becomes due at the database now ?2.
UPDATE ACT_RU_JOB SET DUEDATE_ = ?2, REV_ = REV_ + 1 WHERE ID_ = ?1 RETURNING *
