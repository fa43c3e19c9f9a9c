//! The one error of this crate: what is wrong with a trigger or a calendar, and where.

use kairos_cron::CronError;

use crate::misfire::TriggerKind;

/// Why a trigger, a schedule or a calendar was refused.
///
/// Every variant names the offending field as a camelCase path of the serialized form
/// (`endTime`, `schedule.interval`, `baseCalendar.rangeEnd`), so the HTTP layer can answer
/// with a 4xx that says what was wrong without knowing this crate's types.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// A required text (a name, a group, a set of days) is empty.
    #[error("{field}: must not be empty")]
    Empty { field: String },
    /// A number or a time of day outside what the field allows.
    #[error("{field}: {message}")]
    OutOfRange { field: String, message: String },
    /// A time zone name that is not in the IANA database.
    #[error("{field}: unknown time zone '{name}'")]
    UnknownTimeZone { field: String, name: String },
    /// Two fields in the wrong order (`endTime` before `startTime`, …).
    #[error("{field}: must not be before {other}")]
    Order { field: String, other: &'static str },
    /// A misfire instruction that Quartz defines for another trigger type.
    #[error("{field}: '{instruction}' is not a misfire instruction of {kind} triggers")]
    MisfireNotValidForKind { field: String, instruction: String, kind: TriggerKind },
    /// A misfire instruction name or code that Quartz does not define at all.
    #[error("{field}: unknown misfire instruction '{text}'")]
    UnknownMisfireInstruction { field: String, text: String },
    /// A cron expression that does not parse.
    #[error("{field}: {source}")]
    Cron { field: String, source: CronError },
    /// Anything else, described in words.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
}

impl ScheduleError {
    /// The camelCase path of the field this error is about.
    pub fn field(&self) -> &str {
        match self {
            ScheduleError::Empty { field }
            | ScheduleError::OutOfRange { field, .. }
            | ScheduleError::UnknownTimeZone { field, .. }
            | ScheduleError::Order { field, .. }
            | ScheduleError::MisfireNotValidForKind { field, .. }
            | ScheduleError::UnknownMisfireInstruction { field, .. }
            | ScheduleError::Cron { field, .. }
            | ScheduleError::Invalid { field, .. } => field,
        }
    }

    /// The same error about the same field one level down (`rangeEnd` → `baseCalendar.rangeEnd`).
    pub(crate) fn within(mut self, prefix: &str) -> ScheduleError {
        let field = match &mut self {
            ScheduleError::Empty { field }
            | ScheduleError::OutOfRange { field, .. }
            | ScheduleError::UnknownTimeZone { field, .. }
            | ScheduleError::Order { field, .. }
            | ScheduleError::MisfireNotValidForKind { field, .. }
            | ScheduleError::UnknownMisfireInstruction { field, .. }
            | ScheduleError::Cron { field, .. }
            | ScheduleError::Invalid { field, .. } => field,
        };
        *field = format!("{prefix}.{field}");
        self
    }

    pub(crate) fn out_of_range(field: &str, message: impl Into<String>) -> ScheduleError {
        ScheduleError::OutOfRange { field: field.to_string(), message: message.into() }
    }
}
