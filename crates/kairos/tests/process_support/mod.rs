//! What the process_* test binaries share: request builders, the leave-request model, an
//! engine with its executor started, an instance's activity trace.

#![allow(dead_code)]

use crate::common::Fixture;
use kairos::Engine;
use kairos::process::StartRequest;
use serde_json::Map;
use std::time::Duration;

pub const LIMIT: Duration = Duration::from_secs(30);

pub fn vars(v: serde_json::Value) -> Map<String, serde_json::Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub fn start(key: &str, bk: &str, v: serde_json::Value) -> StartRequest {
    StartRequest {
        process_definition_key: Some(key.into()),
        business_key: Some(bk.into()),
        variables: vars(v),
        ..Default::default()
    }
}

pub const LEAVE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:activiti="http://activiti.org/bpmn" targetNamespace="t">
  <process id="leaveProcess" name="Leave" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="fill"/>
    <userTask id="fill" name="Fill in" activiti:assignee="${applicant}"/>
    <sequenceFlow id="f2" sourceRef="fill" targetRef="approve"/>
    <userTask id="approve" name="Approve" activiti:candidateGroups="managers"/>
    <sequenceFlow id="f3" sourceRef="approve" targetRef="gw"/>
    <exclusiveGateway id="gw" default="no"/>
    <sequenceFlow id="yes" sourceRef="gw" targetRef="notify"><conditionExpression>${approved}</conditionExpression></sequenceFlow>
    <sequenceFlow id="no" sourceRef="gw" targetRef="rejected"/>
    <serviceTask id="notify" activiti:class="log"/>
    <sequenceFlow id="f4" sourceRef="notify" targetRef="end"/>
    <endEvent id="end"/>
    <endEvent id="rejected"/>
  </process>
</definitions>"#;

pub async fn engine(fx: &Fixture) -> Engine {
    let e = fx.engine("n1").build().await.unwrap();
    e.start().await.unwrap();
    e
}

pub async fn trace(engine: &Engine, pi: &str) -> Vec<String> {
    engine.processes().activity_history(pi).await.unwrap().into_iter().map(|a| a.activity_id).collect()
}

pub const TIMERS: &str = r#"<definitions xmlns="http://www.omg.org/spec/BPMN/20100524/MODEL" xmlns:camunda="http://camunda.org/schema/1.0/bpmn" targetNamespace="t">
  <process id="timers" isExecutable="true">
    <startEvent id="start"/>
    <sequenceFlow id="f1" sourceRef="start" targetRef="prep"/>
    <serviceTask id="prep" camunda:asyncBefore="true" camunda:class="log"/>
    <sequenceFlow id="f2" sourceRef="prep" targetRef="approve"/>
    <userTask id="approve"/>
    <boundaryEvent id="remind" attachedToRef="approve" cancelActivity="false">
      <timerEventDefinition><timeCycle>R3/PT1S</timeCycle></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f3" sourceRef="remind" targetRef="reminded"/>
    <endEvent id="reminded"/>
    <boundaryEvent id="timeout" attachedToRef="approve">
      <timerEventDefinition><timeDuration>PT5S</timeDuration></timerEventDefinition>
    </boundaryEvent>
    <sequenceFlow id="f4" sourceRef="timeout" targetRef="escalated"/>
    <endEvent id="escalated"/>
    <sequenceFlow id="f5" sourceRef="approve" targetRef="end"/>
    <endEvent id="end"/>
  </process>
</definitions>"#;
