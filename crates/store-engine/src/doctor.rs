//! The doctor's read-only findings over every table (SPEC J11, seed 000 §4, seed 004 §5).
