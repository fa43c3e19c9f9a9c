//! Statements that exist once per job table.
//!
//! ACT_RU_JOB, ACT_RU_DEADLETTER_JOB and ACT_RU_SUSPENDED_JOB share their columns, so a get,
//! list or delete is one `.sql` template with `{table}` in it. A table name cannot be a bind
//! parameter; each template is expanded once per table, from [`JobTable::table_name`] only
//! (never from input), and kept for the life of the process so sqlx can prepare and cache it
//! like any other static statement.

use kairos_core::JobTable;

/// One statement template expanded for the three job tables.
#[derive(Debug)]
pub(crate) struct PerTable {
    runtime: &'static str,
    dead_letter: &'static str,
    suspended: &'static str,
}

impl PerTable {
    /// Expands `template` for each table. Called from `LazyLock` initialisers only, so each
    /// template is expanded (and its three strings allocated) once per process.
    pub(crate) fn new(template: &'static str) -> PerTable {
        let expand =
            |t: JobTable| -> &'static str { Box::leak(template.replace("{table}", t.table_name()).into_boxed_str()) };
        PerTable {
            runtime: expand(JobTable::Runtime),
            dead_letter: expand(JobTable::DeadLetter),
            suspended: expand(JobTable::Suspended),
        }
    }

    pub(crate) fn of(&self, table: JobTable) -> &'static str {
        match table {
            JobTable::Runtime => self.runtime,
            JobTable::DeadLetter => self.dead_letter,
            JobTable::Suspended => self.suspended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_name_each_table() {
        let t = PerTable::new("SELECT * FROM {table} WHERE ID_ = $1");
        assert_eq!(t.of(JobTable::Runtime), "SELECT * FROM ACT_RU_JOB WHERE ID_ = $1");
        assert_eq!(t.of(JobTable::DeadLetter), "SELECT * FROM ACT_RU_DEADLETTER_JOB WHERE ID_ = $1");
        assert_eq!(t.of(JobTable::Suspended), "SELECT * FROM ACT_RU_SUSPENDED_JOB WHERE ID_ = $1");
    }
}
