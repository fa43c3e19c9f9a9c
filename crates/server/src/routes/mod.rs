//! The route handlers, one module per API.md section.

pub mod auth;
pub mod camunda;
pub mod commands;
pub mod deadletter;
pub mod dmn;
pub mod forms;
pub mod health;
pub mod history;
pub mod identity;
pub mod incidents;
pub mod jobs;
pub mod management;
pub mod openapi;
pub mod outbox;
pub mod processes;
pub mod scheduler;
