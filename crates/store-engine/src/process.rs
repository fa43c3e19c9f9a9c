//! The process runtime's and history's tables: ACT_RE_*, ACT_RU_EXECUTION, ACT_RU_TASK,
//! ACT_RU_VARIABLE, ACT_RU_EVENT_SUBSCR, ACT_HI_*.
