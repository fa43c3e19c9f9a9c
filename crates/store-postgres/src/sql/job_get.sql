SELECT * FROM {table} WHERE ID_ = $1
