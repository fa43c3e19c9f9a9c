//! History records: the ACT_HI_ACTINST rows an activity opens when a token enters it and
//! closes when the token leaves or is cancelled.

use kairos_bpmn::FlowNode;

use crate::runtime::Runtime;
use crate::state::*;

impl Runtime<'_> {
    pub(crate) fn open_record(&mut self, exec: &str, n: &FlowNode, task_id: Option<String>) {
        self.inst.seq += 1;
        let id = (self.env.ids)();
        self.open_records.insert(exec.to_string(), id.clone());
        self.inst.activities.push(ActivityRecord {
            id,
            execution_id: exec.to_string(),
            activity_id: n.id.clone(),
            activity_name: n.name.clone(),
            activity_type: n.element.to_string(),
            task_id,
            assignee: None,
            start: self.env.now,
            end: None,
            delete_reason: None,
            seq: self.inst.seq,
        });
    }

    pub(crate) fn open_record_mut(&mut self, exec: &str, activity: &str) -> Option<&mut ActivityRecord> {
        self.inst
            .activities
            .iter_mut()
            .rev()
            .find(|a| a.execution_id == exec && a.activity_id == activity && a.end.is_none())
    }

    pub(crate) fn close_record(&mut self, exec: &str, activity: &str, reason: Option<&str>) {
        let now = self.env.now;
        if let Some(r) = self.open_record_mut(exec, activity) {
            r.end = Some(now);
            r.delete_reason = reason.map(str::to_string);
            let closed = r.id.clone();
            if self.open_records.get(exec) == Some(&closed) {
                self.open_records.remove(exec);
            }
        }
    }
}
