//! The behaviours of BPMN elements, one file per family, in the manner of Camunda's
//! `bpmn/behavior` and Flowable's: each uses the primitives and the agenda's operations and
//! never calls another behaviour, so a new element touches its behaviour file and the
//! dispatch in [`super::agenda`].

mod boundary;
mod call_activity;
mod compensation;
mod events;
mod gateways;
mod multi_instance;
mod sub_process;
mod tasks;
