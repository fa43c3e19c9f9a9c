//! Comments on tasks and process instances (Flowable's task and instance comments), kept in
//! ACT_HI_COMMENT as history.

use super::Processes;
use crate::Error;
use kairos_process::{ErrorKind, ProcessError};
use kairos_store_engine::process::{self as tables, Comment, CommentOn};

/// The longest comment: a page of text, not a document store.
pub const MAX_COMMENT_CHARS: usize = 64 * 1024;

fn invalid(message: String) -> Error {
    Error::Process(ProcessError { kind: ErrorKind::Invalid, message, element_id: Some("message".into()) })
}

impl Processes {
    /// Adds a comment to open task `task_id` (shown on its instance too when `on_instance`).
    pub async fn comment_task(
        &self,
        task_id: &str,
        author: Option<String>,
        message: &str,
        on_instance: bool,
    ) -> Result<Comment, Error> {
        check(message)?;
        let pi = tables::task_instance(self.store.as_ref(), task_id).await?.ok_or_else(|| {
            Error::Process(ProcessError::new(ErrorKind::NotFound, format!("task {task_id} is not open")))
        })?;
        let on = CommentOn::Task { task: task_id, instance: &pi, on_instance };
        self.add_comment(on, author, message).await
    }

    /// Adds a comment to process instance `id` (running or ended).
    pub async fn comment_instance(&self, id: &str, author: Option<String>, message: &str) -> Result<Comment, Error> {
        check(message)?;
        self.instance(id).await?;
        self.add_comment(CommentOn::Instance(id), author, message).await
    }

    async fn add_comment(&self, on: CommentOn<'_>, author: Option<String>, message: &str) -> Result<Comment, Error> {
        let id = kairos_core::new_id();
        let now = self.store.db_now().await?;
        self.store.write_all(&[tables::comment_insert(&id, on, author, message, now)]).await?;
        let all = tables::comments(self.store.as_ref(), on).await?;
        all.into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| Error::Process(ProcessError::new(ErrorKind::NotFound, "the comment was not kept")))
    }

    /// The comments of a task (open or not), oldest first.
    pub async fn task_comments(&self, task_id: &str) -> Result<Vec<Comment>, Error> {
        Ok(tables::comments(self.store.as_ref(), CommentOn::Task { task: task_id, instance: "", on_instance: false })
            .await?)
    }

    /// The comments shown on a process instance, oldest first.
    pub async fn instance_comments(&self, id: &str) -> Result<Vec<Comment>, Error> {
        Ok(tables::comments(self.store.as_ref(), CommentOn::Instance(id)).await?)
    }

    /// Deletes a comment; 404 when there is none with that id.
    pub async fn delete_comment(&self, id: &str) -> Result<(), Error> {
        match self.store.write_all(&[tables::comment_delete(id)]).await {
            Ok(_) => Ok(()),
            Err(e) if e.kind == kairos_store::ErrorKind::Conflict => {
                Err(Error::Process(ProcessError::new(ErrorKind::NotFound, format!("there is no comment {id}"))))
            }
            Err(e) => Err(e.into()),
        }
    }
}

fn check(message: &str) -> Result<(), Error> {
    if message.trim().is_empty() {
        return Err(invalid("message must not be empty".into()));
    }
    let n = message.chars().count();
    if n > MAX_COMMENT_CHARS {
        return Err(invalid(format!("message may have at most {MAX_COMMENT_CHARS} characters, not {n}")));
    }
    if message.contains('\0') {
        return Err(invalid("message contains a NUL character".into()));
    }
    Ok(())
}
