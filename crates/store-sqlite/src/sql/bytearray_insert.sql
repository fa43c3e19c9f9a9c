-- A stack trace (the full error chain) of a job's last failure.
INSERT INTO ACT_GE_BYTEARRAY (ID_, REV_, NAME_, BYTES_, GENERATED_) VALUES (?1, 1, ?2, ?3, 0)
