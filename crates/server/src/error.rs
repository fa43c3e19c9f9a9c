//! The one error of the HTTP layer. Every failure leaves as
//! `{"error": {"code": "...", "message": "...", "field"?: "..."}, "statusCode", "errorMessage",
//! "message", "exception"}` (the last four are Flowable's error body, see `into_response`):
//!
//! * a 4xx says what was wrong, naming the field, so the caller can fix the request;
//! * a 5xx says nothing about the inside (no SQL, no paths, no driver text): the detail goes to
//!   the log under a reference that the message quotes, so an operator can find it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kairos::store::{Error as StoreError, ErrorKind};

/// An API failure, ready to be answered.
#[derive(Debug, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    pub status: StatusCode,
    /// Stable and machine-readable: `invalid-argument`, `unknown-handler`, `not-found`, …
    pub code: &'static str,
    /// For people. For a 5xx, only a generic text and a log reference.
    pub message: String,
    /// The request field that was wrong, when one was.
    pub field: Option<String>,
    /// What is logged for a 5xx; never sent.
    detail: Option<String>,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), field: None, detail: None }
    }

    /// 400 `invalid-argument` about one field.
    pub fn invalid(field: &'static str, message: impl Into<String>) -> Self {
        ApiError { field: Some(field.to_string()), ..Self::new(StatusCode::BAD_REQUEST, "invalid-argument", message) }
    }

    /// This error, naming `field` as the one that was wrong.
    pub fn on(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "invalid-argument", message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not-found", message)
    }

    /// A 500 whose `detail` is logged, never sent.
    pub fn internal(detail: impl Into<String>) -> Self {
        ApiError { detail: Some(detail.into()), ..Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "") }
    }

    /// A 503: the database cannot be reached now; retrying later is reasonable.
    pub fn unavailable(detail: impl Into<String>) -> Self {
        ApiError { detail: Some(detail.into()), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", "") }
    }
}

impl From<kairos_core::Error> for ApiError {
    fn from(e: kairos_core::Error) -> Self {
        match &e {
            kairos_core::Error::Invalid { field, .. } => ApiError::invalid(field, e.to_string()),
            kairos_core::Error::UnknownHandler(_) => ApiError {
                field: Some("handler".into()),
                ..ApiError::new(StatusCode::BAD_REQUEST, "unknown-handler", e.to_string())
            },
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        // The store's messages are written to be shown to an operator; 5xx still hide them.
        match e.kind {
            ErrorKind::NotFound => ApiError::not_found(e.message),
            ErrorKind::Conflict => ApiError::new(StatusCode::CONFLICT, "conflict", e.message),
            ErrorKind::Invalid => ApiError::bad_request(e.message),
            ErrorKind::Unavailable => ApiError::unavailable(chain(&e)),
            // A stored row kairos cannot read: neither the caller's mistake nor a fault of the
            // server; the message names the row, the column and its text (no SQL, nothing inside).
            ErrorKind::Unreadable => ApiError::new(StatusCode::UNPROCESSABLE_ENTITY, "unreadable-row", e.message),
            ErrorKind::Other => ApiError::internal(chain(&e)),
        }
    }
}

impl From<kairos_process::ProcessError> for ApiError {
    fn from(e: kairos_process::ProcessError) -> Self {
        use kairos_process::ErrorKind as K;
        let (status, code) = match e.kind {
            K::NotFound => (StatusCode::NOT_FOUND, "not-found"),
            K::Conflict => (StatusCode::CONFLICT, "conflict"),
            K::Invalid => (StatusCode::BAD_REQUEST, "invalid-argument"),
            // The model could not go on (an expression failed, no flow to take): the request
            // was well-formed, the instance's state or the model is the problem.
            K::Model => (StatusCode::UNPROCESSABLE_ENTITY, "model-error"),
            K::Handler => (StatusCode::UNPROCESSABLE_ENTITY, "handler-failed"),
        };
        ApiError { field: e.element_id.clone(), ..ApiError::new(status, code, e.message) }
    }
}

impl From<kairos::Error> for ApiError {
    fn from(e: kairos::Error) -> Self {
        match e {
            kairos::Error::Invalid(e) => e.into(),
            kairos::Error::Store(e) => e.into(),
            kairos::Error::Config(m) => ApiError::internal(m),
            kairos::Error::Process(p) => p.into(),
            kairos::Error::Scheduler(e) => {
                use kairos::scheduler::SchedulerError as S;
                let message = e.to_string();
                match e {
                    S::Invalid { field, .. } => ApiError {
                        field: Some(field),
                        ..ApiError::new(StatusCode::BAD_REQUEST, "invalid-argument", message)
                    },
                    S::NotFound(m) => ApiError::not_found(m),
                    S::Conflict(m) => ApiError::new(StatusCode::CONFLICT, "conflict", m),
                }
            }
            kairos::Error::Deploy(errors) => ApiError::new(
                StatusCode::BAD_REQUEST,
                "invalid-bpmn",
                format!("the BPMN document was refused: {errors}"),
            ),
        }
    }
}

/// SQLite's message for SQLITE_FULL (a full disk, or the file at its size limit).
const DISK_FULL: &str = "database or disk is full";

/// The error and its causes on one line, for the log.
fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cur = e.source();
    while let Some(c) = cur {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cur = c.source();
    }
    out
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut message = self.message;
        if self.status.is_server_error() {
            let reference = kairos_core::new_id();
            let detail = self.detail.as_deref().unwrap_or(message.as_str());
            tracing::error!(status = self.status.as_u16(), code = self.code, reference = %reference, detail, "request failed");
            message = if self.status == StatusCode::SERVICE_UNAVAILABLE && detail.contains(DISK_FULL) {
                // SQLite's own words, safe to show: the caller learns why, and that it passes.
                format!("the {DISK_FULL}; writes resume once space is freed (log reference {reference})")
            } else if self.status == StatusCode::SERVICE_UNAVAILABLE {
                format!("the database cannot be reached now; retry later (log reference {reference})")
            } else {
                format!("internal error; the detail is in the server log under reference {reference}")
            };
        }
        let mut error = serde_json::json!({ "code": self.code, "message": message });
        if let Some(f) = self.field {
            error["field"] = f.into();
        }
        // Beside kairos's own `error`, the fields Flowable's REST answers with: `statusCode` and
        // `errorMessage` (its documented error body), `message` and `exception` (its `ErrorInfo`:
        // the status's reason and the detail), so Flowable's clients show the reason.
        let body = serde_json::json!({
            "error": error,
            "statusCode": self.status.as_u16(),
            "errorMessage": message,
            "message": self.status.canonical_reason().unwrap_or("Error"),
            "exception": message,
        });
        (self.status, axum::Json(body)).into_response()
    }
}

/// Answers unknown paths in the error shape (axum's default is an empty 404).
pub async fn no_route(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::not_found(format!("no route for {method} {}; see API.md for the routes", uri.path()))
}

/// Answers a known path asked with the wrong method.
pub async fn wrong_method(method: axum::http::Method, uri: axum::http::Uri) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method-not-allowed",
        format!("{} does not take {method}", uri.path()),
    )
}
