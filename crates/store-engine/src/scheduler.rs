//! The scheduler's tables: QRTZ_*.
