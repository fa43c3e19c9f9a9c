//! Comments on tasks and process instances (ACT_HI_COMMENT, Flowable's `CommentResponse`):
//! history rows, written when a caller adds one and kept after the task ends. Every comment
//! carries its instance, so the history cleanup deletes it with the instance's history;
//! ACTION_ says where it shows: `AddComment` on the task and the instance (Flowable's
//! `saveProcessInstanceId`), `AddTaskComment` on the task only.

use super::{ot, t, ts};
use crate::Rows;
use jiff::Timestamp;
use kairos_store::{Result, Sql, Write};
use serde::Serialize;

/// A comment as the API shows it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Comment {
    pub id: String,
    pub author: Option<String>,
    pub message: String,
    pub time: Timestamp,
    pub task_id: Option<String>,
    pub process_instance_id: Option<String>,
}

/// What a comment is on: one task (with its instance), or the instance alone.
#[derive(Debug, Clone, Copy)]
pub enum CommentOn<'a> {
    Task { task: &'a str, instance: &'a str, on_instance: bool },
    Instance(&'a str),
}

/// The statement that adds comment `id`.
pub fn comment_insert(id: &str, on: CommentOn<'_>, author: Option<String>, message: &str, now: Timestamp) -> Write {
    let (task, instance, action) = match on {
        CommentOn::Task { task, instance, on_instance } => {
            (Some(task.to_string()), instance, if on_instance { "AddComment" } else { "AddTaskComment" })
        }
        CommentOn::Instance(instance) => (None, instance, "AddComment"),
    };
    let short: String = message.chars().take(4000).collect();
    Write::new(
        "INSERT INTO ACT_HI_COMMENT (ID_, TYPE_, TIME_, USER_ID_, TASK_ID_, PROC_INST_ID_, ACTION_, MESSAGE_, FULL_MSG_) \
         VALUES (?, 'comment', ?, ?, ?, ?, ?, ?, ?)",
        vec![t(id), ts(now), ot(&author), ot(&task), t(instance), t(action), t(&short), t(message)],
    )
}

const COLUMNS: &[&str] = &["ID_", "USER_ID_", "FULL_MSG_", "TIME_", "TASK_ID_", "PROC_INST_ID_", "ACTION_"];

/// The comments of a task (`CommentOn::Task`) or those shown on an instance, oldest first.
pub async fn comments(store: &dyn Sql, on: CommentOn<'_>) -> Result<Vec<Comment>> {
    let (filter, key) = match on {
        CommentOn::Task { task, .. } => ("TASK_ID_ = ?", task),
        CommentOn::Instance(pi) => ("PROC_INST_ID_ = ? AND ACTION_ = 'AddComment'", pi),
    };
    let sql = format!(
        "SELECT ID_, USER_ID_, FULL_MSG_, TIME_, TASK_ID_, PROC_INST_ID_, ACTION_ FROM ACT_HI_COMMENT \
         WHERE TYPE_ = 'comment' AND {filter} ORDER BY TIME_, ID_"
    );
    let rows = Rows::read(store, "ACT_HI_COMMENT", COLUMNS, &sql, &[t(key)]).await?;
    rows.iter()
        .map(|r| {
            let action = r.text("ACTION_")?;
            Ok(Comment {
                id: r.text("ID_")?,
                author: r.opt_text("USER_ID_")?,
                message: r.opt_text("FULL_MSG_")?.unwrap_or_default(),
                time: r.instant("TIME_")?,
                task_id: r.opt_text("TASK_ID_")?,
                // A task-only comment does not show its instance, as in Flowable.
                process_instance_id: if action == "AddComment" { r.opt_text("PROC_INST_ID_")? } else { None },
            })
        })
        .collect()
}

/// The statement that deletes comment `id` (expects one row).
pub fn comment_delete(id: &str) -> Write {
    Write::new("DELETE FROM ACT_HI_COMMENT WHERE ID_ = ? AND TYPE_ = 'comment'", vec![t(id)]).expect(1)
}
