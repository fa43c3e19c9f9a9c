//! Trigger types and Quartz's misfire instructions, with their names and numbers.

use std::fmt;

use crate::error::ScheduleError;

/// The four Quartz trigger types kairos models.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TriggerKind {
    /// SimpleTriggerImpl: a start time, a repeat count and a fixed interval.
    Simple,
    /// CronTriggerImpl: a Quartz cron expression in a time zone.
    Cron,
    /// CalendarIntervalTriggerImpl: every N seconds … years, on the zone's calendar.
    CalendarInterval,
    /// DailyTimeIntervalTriggerImpl: every N seconds/minutes/hours within a daily window.
    DailyTimeInterval,
}

impl TriggerKind {
    /// The value of `QRTZ_TRIGGERS.TRIGGER_TYPE` for this kind (Quartz's `TTYPE_*` constants).
    pub fn quartz_type(self) -> &'static str {
        match self {
            TriggerKind::Simple => "SIMPLE",
            TriggerKind::Cron => "CRON",
            TriggerKind::CalendarInterval => "CAL_INT",
            TriggerKind::DailyTimeInterval => "DAILY_I",
        }
    }

    /// The kind stored as `TRIGGER_TYPE` (`None` for `BLOB` or anything else).
    pub fn from_quartz_type(text: &str) -> Option<TriggerKind> {
        [TriggerKind::Simple, TriggerKind::Cron, TriggerKind::CalendarInterval, TriggerKind::DailyTimeInterval]
            .into_iter()
            .find(|kind| kind.quartz_type() == text)
    }
}

impl fmt::Display for TriggerKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TriggerKind::Simple => "simple",
            TriggerKind::Cron => "cron",
            TriggerKind::CalendarInterval => "calendar-interval",
            TriggerKind::DailyTimeInterval => "daily-time-interval",
        })
    }
}

/// What the scheduler does with a trigger whose next fire time passed more than the misfire
/// threshold ago (Quartz's `MISFIRE_INSTRUCTION_*`).
///
/// Serialized as the camelCase name (`"rescheduleNextWithRemainingCount"`); read from that name,
/// Quartz's constant name (`"MISFIRE_INSTRUCTION_DO_NOTHING"`) or its builder's wording
/// (`"fireAndProceed"`), in any case. Codes overlap between trigger types (1 is `FireNow` for a
/// simple trigger and `FireOnceNow` for the others), so a code is read with the trigger type:
/// [`MisfireInstruction::from_code`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub enum MisfireInstruction {
    /// `MISFIRE_INSTRUCTION_SMART_POLICY` (0), every type's default: resolved per type by
    /// [`Trigger::resolved_misfire_instruction`](crate::Trigger::resolved_misfire_instruction).
    #[default]
    Smart,
    /// `MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY` (-1): never treated as misfired; every
    /// missed fire time fires, one after the other, as soon as possible.
    IgnoreMisfires,
    /// Simple `MISFIRE_INSTRUCTION_FIRE_NOW` (1): fire once now (a repeating trigger reads it as
    /// `RescheduleNowWithRemainingRepeatCount`).
    FireNow,
    /// Simple `MISFIRE_INSTRUCTION_RESCHEDULE_NOW_WITH_EXISTING_REPEAT_COUNT` (2): restart now,
    /// as if the missed fire times had not been due.
    RescheduleNowWithExistingRepeatCount,
    /// Simple `MISFIRE_INSTRUCTION_RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT` (3): restart now,
    /// counting the missed fire times as fired.
    RescheduleNowWithRemainingRepeatCount,
    /// Simple `MISFIRE_INSTRUCTION_RESCHEDULE_NEXT_WITH_REMAINING_COUNT` (4): wait for the next
    /// scheduled time after now, counting the missed ones as fired.
    RescheduleNextWithRemainingCount,
    /// Simple `MISFIRE_INSTRUCTION_RESCHEDULE_NEXT_WITH_EXISTING_COUNT` (5): wait for the next
    /// scheduled time after now, the count unchanged.
    RescheduleNextWithExistingCount,
    /// Cron/calendar-interval/daily-time-interval `MISFIRE_INSTRUCTION_FIRE_ONCE_NOW` (1): fire
    /// once now, then carry on with the schedule.
    FireOnceNow,
    /// Cron/calendar-interval/daily-time-interval `MISFIRE_INSTRUCTION_DO_NOTHING` (2): skip every
    /// missed fire time and wait for the next one after now.
    DoNothing,
}

use MisfireInstruction as M;

const ALL: [MisfireInstruction; 9] = [
    M::Smart,
    M::IgnoreMisfires,
    M::FireNow,
    M::RescheduleNowWithExistingRepeatCount,
    M::RescheduleNowWithRemainingRepeatCount,
    M::RescheduleNextWithRemainingCount,
    M::RescheduleNextWithExistingCount,
    M::FireOnceNow,
    M::DoNothing,
];

impl MisfireInstruction {
    /// Quartz's number (`QRTZ_TRIGGERS.MISFIRE_INSTR`).
    pub fn code(self) -> i32 {
        match self {
            M::Smart => 0,
            M::IgnoreMisfires => -1,
            M::FireNow | M::FireOnceNow => 1,
            M::RescheduleNowWithExistingRepeatCount | M::DoNothing => 2,
            M::RescheduleNowWithRemainingRepeatCount => 3,
            M::RescheduleNextWithRemainingCount => 4,
            M::RescheduleNextWithExistingCount => 5,
        }
    }

    /// The camelCase name kairos writes.
    pub fn name(self) -> &'static str {
        match self {
            M::Smart => "smart",
            M::IgnoreMisfires => "ignoreMisfires",
            M::FireNow => "fireNow",
            M::RescheduleNowWithExistingRepeatCount => "rescheduleNowWithExistingRepeatCount",
            M::RescheduleNowWithRemainingRepeatCount => "rescheduleNowWithRemainingRepeatCount",
            M::RescheduleNextWithRemainingCount => "rescheduleNextWithRemainingCount",
            M::RescheduleNextWithExistingCount => "rescheduleNextWithExistingCount",
            M::FireOnceNow => "fireOnceNow",
            M::DoNothing => "doNothing",
        }
    }

    /// Quartz's constant name.
    pub fn quartz_name(self) -> &'static str {
        match self {
            M::Smart => "MISFIRE_INSTRUCTION_SMART_POLICY",
            M::IgnoreMisfires => "MISFIRE_INSTRUCTION_IGNORE_MISFIRE_POLICY",
            M::FireNow => "MISFIRE_INSTRUCTION_FIRE_NOW",
            M::RescheduleNowWithExistingRepeatCount => "MISFIRE_INSTRUCTION_RESCHEDULE_NOW_WITH_EXISTING_REPEAT_COUNT",
            M::RescheduleNowWithRemainingRepeatCount => {
                "MISFIRE_INSTRUCTION_RESCHEDULE_NOW_WITH_REMAINING_REPEAT_COUNT"
            }
            M::RescheduleNextWithRemainingCount => "MISFIRE_INSTRUCTION_RESCHEDULE_NEXT_WITH_REMAINING_COUNT",
            M::RescheduleNextWithExistingCount => "MISFIRE_INSTRUCTION_RESCHEDULE_NEXT_WITH_EXISTING_COUNT",
            M::FireOnceNow => "MISFIRE_INSTRUCTION_FIRE_ONCE_NOW",
            M::DoNothing => "MISFIRE_INSTRUCTION_DO_NOTHING",
        }
    }

    /// Whether Quartz accepts this instruction for the trigger type (its
    /// `validateMisfireInstruction`).
    pub fn is_valid_for(self, kind: TriggerKind) -> bool {
        match self {
            M::Smart | M::IgnoreMisfires => true,
            M::FireNow
            | M::RescheduleNowWithExistingRepeatCount
            | M::RescheduleNowWithRemainingRepeatCount
            | M::RescheduleNextWithRemainingCount
            | M::RescheduleNextWithExistingCount => kind == TriggerKind::Simple,
            M::FireOnceNow | M::DoNothing => kind != TriggerKind::Simple,
        }
    }

    /// The instruction with this name, whatever the trigger type: the camelCase name, Quartz's
    /// constant (with or without `MISFIRE_INSTRUCTION_`), or a Quartz builder's wording
    /// (`withMisfireHandlingInstructionNowWithExistingCount`, `fireAndProceed`), in any case.
    pub fn from_name(text: &str) -> Option<MisfireInstruction> {
        let key: String = text.chars().filter(|c| !matches!(c, '_' | '-' | ' ')).flat_map(char::to_lowercase).collect();
        let key = key
            .strip_prefix("withmisfirehandlinginstruction")
            .or_else(|| key.strip_prefix("misfireinstruction"))
            .unwrap_or(&key);
        let found = match key {
            "smart" | "smartpolicy" => M::Smart,
            "ignore" | "ignoremisfires" | "ignoremisfirepolicy" => M::IgnoreMisfires,
            "firenow" => M::FireNow,
            "reschedulenowwithexistingrepeatcount" | "nowwithexistingcount" => M::RescheduleNowWithExistingRepeatCount,
            "reschedulenowwithremainingrepeatcount" | "nowwithremainingcount" => {
                M::RescheduleNowWithRemainingRepeatCount
            }
            "reschedulenextwithremainingcount" | "nextwithremainingcount" => M::RescheduleNextWithRemainingCount,
            "reschedulenextwithexistingcount" | "nextwithexistingcount" => M::RescheduleNextWithExistingCount,
            "fireoncenow" | "fireandproceed" => M::FireOnceNow,
            "donothing" => M::DoNothing,
            _ => return None,
        };
        Some(found)
    }

    /// Parses a name for a trigger type, refusing one Quartz defines only for other types.
    pub fn parse(text: &str, kind: TriggerKind) -> Result<MisfireInstruction, ScheduleError> {
        let instruction = MisfireInstruction::from_name(text).ok_or_else(|| {
            ScheduleError::UnknownMisfireInstruction { field: "misfireInstruction".to_string(), text: text.to_string() }
        })?;
        instruction.check(kind)?;
        Ok(instruction)
    }

    /// The instruction with Quartz's number for a trigger type (reading `MISFIRE_INSTR`).
    pub fn from_code(code: i32, kind: TriggerKind) -> Result<MisfireInstruction, ScheduleError> {
        ALL.into_iter().find(|i| i.code() == code && i.is_valid_for(kind)).ok_or_else(|| {
            ScheduleError::UnknownMisfireInstruction {
                field: "misfireInstruction".to_string(),
                text: format!("{code} (for {kind} triggers)"),
            }
        })
    }

    pub(crate) fn check(self, kind: TriggerKind) -> Result<(), ScheduleError> {
        if self.is_valid_for(kind) {
            Ok(())
        } else {
            Err(ScheduleError::MisfireNotValidForKind {
                field: "misfireInstruction".to_string(),
                instruction: self.name().to_string(),
                kind,
            })
        }
    }
}

impl fmt::Display for MisfireInstruction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for MisfireInstruction {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<MisfireInstruction, D::Error> {
        let text = <String as serde::Deserialize>::deserialize(deserializer)?;
        MisfireInstruction::from_name(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown misfire instruction '{text}'")))
    }
}

/// What [`Trigger::update_after_misfire`](crate::Trigger::update_after_misfire) did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MisfireOutcome {
    /// The trigger ignores misfires: nothing changed, each missed fire time will fire.
    Ignored,
    /// The next fire time is now: the trigger fires once right away.
    FireNow,
    /// The next fire time moved to a scheduled time after now; the missed ones are skipped.
    Rescheduled,
    /// No fire time is left (past the end time or the repeat count): the trigger is complete.
    Complete,
}
