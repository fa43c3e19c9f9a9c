//! `kairos deploy`, `start`, `instances`, `instance`, `tasks` and `complete` (SPEC P, API.md):
//! the process engine from a shell, through `engine.processes()` with the executor off.
//!
//! Everything the command line can check — files, `--var`, `--vars-json` — is checked before the
//! store is opened, so bad input writes nothing. JSON output uses the HTTP API's shapes.

use super::open_engine;
use crate::cli::{
    BindingsArgs, CompleteArgs, DeployArgs, GlobalArgs, InstanceArgs, InstancesArgs, MigrateInstanceArgs, PageArgs,
    StartArgs, TasksArgs, VarsArgs,
};
use crate::exit::{BAD_INPUT, CliError, SUCCESS};
use crate::output::{self, Table, cell, instant};
use kairos::process::{
    DefinitionInfo, DeploymentInfo, ExecutionView, HistoricActivity, InstanceView, MigrateRequest, StartRequest,
};
use kairos_store::Page;
use serde::Serialize;
use serde_json::{Map, Value as Json, json};
use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// kairos-bpmn refuses larger documents; checking the size first avoids reading a huge file
/// only to refuse it.
const MAX_DOCUMENT_BYTES: u64 = 10 * 1024 * 1024;

/// `--vars-json @FILE` larger than this is refused before it is parsed.
const MAX_VARS_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A BPMN file read from disk.
struct Document {
    path: PathBuf,
    /// The deployment's name and resource name: the file's name without its folder.
    name: String,
    xml: String,
}

pub async fn deploy(global: &GlobalArgs, args: DeployArgs) -> Result<u8, CliError> {
    let docs = args.files.iter().map(|p| read_document(p)).collect::<Result<Vec<_>, _>>()?;
    let engine = open_engine(&global.db).await?;
    check_documents(&engine, &docs)?;
    let p = engine.processes();
    // Definitions that exist already: a deployment answering with one of them created no version.
    let existing: HashSet<String> = p.definitions_list(None, true).await?.into_iter().map(|d| d.id).collect();
    let tenant = args.tenant.as_deref().unwrap_or("");
    let mut deployed = Vec::new();
    for doc in &docs {
        let info = p.deploy_in(tenant, &doc.name, None, &doc.xml).await.map_err(|e| refused(&doc.path, e))?;
        deployed.push(Deployed::new(doc, info, &existing));
    }
    if global.json {
        output::json(&json!({ "deployments": deployed }))?;
    } else {
        output::emit(&deployed.iter().map(Deployed::render).collect::<String>())?;
    }
    Ok(SUCCESS)
}

/// Reads one BPMN file; every refusal names the file.
fn read_document(path: &Path) -> Result<Document, CliError> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| CliError::bad_input(format!("cannot read {shown}: {e}")))?;
    if meta.is_dir() {
        return Err(CliError::bad_input(format!("cannot read {shown}: it is a directory, not a BPMN file")));
    }
    if meta.len() > MAX_DOCUMENT_BYTES {
        return Err(CliError::bad_input(format!(
            "{shown} is {} bytes; a BPMN document may be 10 MiB at most",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| CliError::bad_input(format!("cannot read {shown}: {e}")))?;
    let xml = String::from_utf8(bytes)
        .map_err(|_| CliError::bad_input(format!("{shown} is not UTF-8 text; save the BPMN document as UTF-8")))?;
    let name = path.file_name().map_or_else(|| shown.to_string(), |n| n.to_string_lossy().into_owned());
    Ok(Document { path: path.to_path_buf(), name, xml })
}

/// Checks every document before any is deployed, so that a refused second file does not leave
/// the first one deployed.
fn check_documents(engine: &kairos::Engine, docs: &[Document]) -> Result<(), CliError> {
    for doc in docs {
        engine.processes().check_resource(&doc.name, &doc.xml).map_err(|e| refused(&doc.path, e))?;
    }
    Ok(())
}

/// A refused deployment as one line naming the file, then every problem with its line.
fn refused(path: &Path, e: kairos::Error) -> CliError {
    match e {
        kairos::Error::Deploy(problems) => CliError::bad_input(format!(
            "{}: the BPMN document was refused: {}",
            path.display(),
            problems.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
        )),
        e => {
            let mut c = CliError::from(e);
            if c.code == BAD_INPUT {
                c.message = format!("{}: {}", path.display(), c.message);
            }
            c
        }
    }
}

/// One file's deployment, as printed: the API's deployment shape plus the file and whether a
/// new version was created.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Deployed {
    file: String,
    id: String,
    name: String,
    /// False when every process in the file was unchanged: no new version, no new deployment.
    created: bool,
    process_definitions: Vec<DeployedDefinition>,
    /// Processes marked `isExecutable="false"`: in the resource, with no definition.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    skipped_processes: Vec<String>,
}

#[derive(Serialize)]
struct DeployedDefinition {
    #[serde(flatten)]
    definition: DefinitionInfo,
    created: bool,
}

impl Deployed {
    fn new(doc: &Document, info: DeploymentInfo, existing: &HashSet<String>) -> Deployed {
        let process_definitions: Vec<DeployedDefinition> = info
            .process_definitions
            .into_iter()
            .map(|d| DeployedDefinition { created: !existing.contains(&d.id), definition: d })
            .collect();
        Deployed {
            file: doc.path.display().to_string(),
            id: info.id,
            name: info.name,
            created: process_definitions.iter().any(|d| d.created) || process_definitions.is_empty(),
            process_definitions,
            skipped_processes: info.skipped_processes,
        }
    }

    fn render(&self) -> String {
        let mut out = if self.created {
            format!("deployed {} as deployment {}\n", self.file, self.id)
        } else {
            format!("{} is unchanged: no new version was created (deployment {})\n", self.file, self.id)
        };
        let mut t = Table::new(&["KEY", "VERSION", "STATUS", "DEFINITION"]);
        for d in &self.process_definitions {
            let status = if d.created { "new" } else { "unchanged" };
            let def = &d.definition;
            t.row(vec![def.key.clone(), def.version.to_string(), status.into(), def.id.clone()]);
        }
        if !self.process_definitions.is_empty() {
            for line in t.render().lines() {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
        if !self.skipped_processes.is_empty() {
            out.push_str(&format!(
                "  skipped (isExecutable=\"false\", no definition): {}\n",
                self.skipped_processes.join(", ")
            ));
        }
        out
    }
}

pub async fn start(global: &GlobalArgs, args: StartArgs) -> Result<u8, CliError> {
    let variables = variables(&args.vars)?;
    let engine = open_engine(&global.db).await?;
    let req = StartRequest {
        process_definition_key: Some(args.key),
        business_key: args.business_key,
        variables,
        start_user: args.user,
        request_id: args.request_id,
        tenant_id: args.tenant.filter(|t| !t.is_empty()),
        binding: match &args.bind {
            None => None,
            Some(b) => {
                let (business_type, business_id) = business_object(b)?;
                Some(kairos::process::BindingRequest {
                    business_type,
                    business_id,
                    process_type: args.process_type.clone().unwrap_or_default(),
                    lifecycle: args.lifecycle,
                })
            }
        },
        ..Default::default()
    };
    let instance = engine.processes().start(req).await?;
    if global.json {
        output::json(&instance)?;
    } else {
        output::emit(&instance_table(std::slice::from_ref(&instance)).render())?;
    }
    Ok(SUCCESS)
}

/// `TYPE:ID` of `--bind` and `kairos bindings`.
fn business_object(arg: &str) -> Result<(String, String), CliError> {
    match arg.split_once(':') {
        Some((t, id)) if !t.is_empty() && !id.is_empty() => Ok((t.to_string(), id.to_string())),
        _ => Err(CliError::bad_input(format!("\"{arg}\" is not TYPE:ID (e.g. ASSET_PUBLISH:1001)"))),
    }
}

pub async fn bindings(global: &GlobalArgs, args: BindingsArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let p = engine.processes();
    let rows = match (&args.business, &args.instance) {
        (_, Some(pi)) => p.binding_of(pi).await?.into_iter().collect(),
        (Some(b), None) => {
            let (t, id) = business_object(b)?;
            p.bindings(&t, &id).await?
        }
        (None, None) => Vec::new(),
    };
    if global.json {
        return output::json(&rows).map(|_| SUCCESS);
    }
    let mut t = Table::new(&["TYPE", "ID", "PROCESS TYPE", "LIFECYCLE", "STATUS", "INSTANCE", "CREATED", "ENDED"]);
    for b in &rows {
        t.row(vec![
            b.business_type.clone(),
            b.business_id.clone(),
            b.process_type.clone(),
            b.lifecycle_no.to_string(),
            b.binding_status.clone(),
            b.process_instance_id.clone(),
            instant(Some(b.created_at)),
            instant(b.ended_at),
        ]);
    }
    output::emit(&t.render())?;
    Ok(SUCCESS)
}

pub async fn instances(global: &GlobalArgs, args: InstancesArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let finished = if args.all { None } else { Some(false) };
    let all = engine.processes().instances(args.business_key.as_deref(), args.key.as_deref(), finished).await?;
    let page = page_of(all, &args.page);
    if global.json {
        return output::json(&page).map(|_| SUCCESS);
    }
    output::emit(&instance_table(&page.data).render())?;
    more_hint(&page);
    Ok(SUCCESS)
}

fn instance_table(instances: &[InstanceView]) -> Table {
    let mut t = Table::new(&["ID", "KEY", "BUSINESS KEY", "STATE", "STARTED", "ENDED"]);
    for i in instances {
        t.row(vec![
            i.id.clone(),
            i.process_definition_key.clone(),
            cell(i.business_key.as_deref(), 40),
            state(i),
            instant(i.start_time),
            instant(i.end_time),
        ]);
    }
    t
}

fn state(i: &InstanceView) -> String {
    match (i.ended, &i.delete_reason) {
        (true, Some(reason)) => format!("deleted: {}", cell(Some(reason), 40)),
        (true, None) => "ended".into(),
        (false, _) if i.suspended => "suspended".into(),
        (false, _) => "running".into(),
    }
}

pub async fn instance(global: &GlobalArgs, args: InstanceArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let p = engine.processes();
    let instance = p.instance(&args.id).await?;
    let executions = p.executions(&args.id).await?;
    let activities = p.activity_history(&args.id).await?;
    // Only a running instance has runtime variables (ACT_RU_VARIABLE); null says "gone", not "none".
    let variables = if instance.ended { None } else { Some(p.variables(&args.id).await?) };
    if global.json {
        let doc = json!({
            "instance": instance,
            "executions": executions,
            "variables": variables,
            "activities": activities,
        });
        return output::json(&doc).map(|_| SUCCESS);
    }
    let mut out = instance_header(&instance);
    out.push_str("\nexecution tree (ACT_RU_EXECUTION)\n");
    if executions.is_empty() {
        out.push_str("  none: the instance has ended\n");
    } else {
        out.push_str(&indent(&execution_tree(&executions).render()));
    }
    match &variables {
        Some(vars) if vars.is_empty() => out.push_str("\nvariables\n  none\n"),
        Some(vars) => {
            out.push_str("\nvariables\n");
            out.push_str(&indent(&variable_table(vars).render()));
        }
        None => {}
    }
    out.push_str("\nactivity history (ACT_HI_ACTINST)\n");
    out.push_str(&indent(&activity_table(&activities).render()));
    output::emit(&out)?;
    Ok(SUCCESS)
}

fn instance_header(i: &InstanceView) -> String {
    let mut out = format!("process instance {}\n", i.id);
    let mut field = |name: &str, value: String| out.push_str(&format!("  {name:<14}{value}\n"));
    field("definition", format!("{} ({})", i.process_definition_key, i.process_definition_id));
    field("business key", cell(i.business_key.as_deref(), 200));
    field("state", state(i));
    field("started", instant(i.start_time));
    if i.ended {
        field("ended", instant(i.end_time));
    }
    if let Some(sup) = &i.super_process_instance_id {
        field("called by", sup.clone());
    }
    out
}

/// The executions in tree order (each under its parent, indented by depth) with their flags.
fn execution_tree(executions: &[ExecutionView]) -> Table {
    let flag = |b: bool| if b { "1" } else { "0" }.to_string();
    let mut t = Table::new(&[
        "EXECUTION",
        "ACTIVITY",
        "IS_ACTIVE_",
        "IS_CONCURRENT_",
        "IS_SCOPE_",
        "IS_EVENT_SCOPE_",
        "SUSPENDED",
    ]);
    for (depth, e) in tree_order(executions) {
        t.row(vec![
            format!("{}{}", "  ".repeat(depth), e.id),
            cell(e.activity_id.as_deref(), 60),
            flag(e.is_active),
            flag(e.is_concurrent),
            flag(e.is_scope),
            flag(e.is_event_scope),
            flag(e.suspended),
        ]);
    }
    t
}

/// Depth-first from the roots (no parent, or a parent not in the list), children in start
/// order. Rows that no root reaches (a broken PARENT_ID_ cycle) are listed last, at depth 0, so
/// that every row is shown.
fn tree_order(executions: &[ExecutionView]) -> Vec<(usize, &ExecutionView)> {
    let ids: HashSet<&str> = executions.iter().map(|e| e.id.as_str()).collect();
    let is_root = |e: &ExecutionView| e.parent_id.as_deref().is_none_or(|p| !ids.contains(p));
    let mut out = Vec::with_capacity(executions.len());
    let mut seen = HashSet::new();
    let mut stack: Vec<(usize, &ExecutionView)> =
        executions.iter().filter(|e| is_root(e)).rev().map(|e| (0, e)).collect();
    while let Some((depth, e)) = stack.pop() {
        if !seen.insert(e.id.as_str()) {
            continue;
        }
        out.push((depth, e));
        let children = executions.iter().filter(|c| c.parent_id.as_deref() == Some(e.id.as_str()));
        stack.extend(children.rev().map(|c| (depth + 1, c)));
    }
    out.extend(executions.iter().filter(|e| !seen.contains(e.id.as_str())).map(|e| (0, e)));
    out
}

fn variable_table(vars: &Map<String, Json>) -> Table {
    let mut t = Table::new(&["NAME", "VALUE"]);
    for (name, value) in vars {
        t.row(vec![name.clone(), cell(Some(&value.to_string()), 80)]);
    }
    t
}

fn activity_table(activities: &[HistoricActivity]) -> Table {
    let mut t = Table::new(&["ACTIVITY", "TYPE", "EXECUTION", "ASSIGNEE", "START", "END"]);
    for a in activities {
        t.row(vec![
            a.activity_id.clone(),
            a.activity_type.clone(),
            a.execution_id.clone(),
            cell(a.assignee.as_deref(), 40),
            instant(a.start_time),
            instant(a.end_time),
        ]);
    }
    t
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

pub async fn tasks(global: &GlobalArgs, args: TasksArgs) -> Result<u8, CliError> {
    let engine = open_engine(&global.db).await?;
    let all = engine
        .processes()
        .tasks(
            args.instance.as_deref(),
            args.assignee.as_deref(),
            args.candidate_user.as_deref(),
            args.candidate_group.as_deref(),
        )
        .await?;
    let page = page_of(all, &args.page);
    if global.json {
        return output::json(&page).map(|_| SUCCESS);
    }
    let mut t = Table::new(&["ID", "NAME", "KEY", "INSTANCE", "ASSIGNEE", "CREATED"]);
    for task in &page.data {
        t.row(vec![
            task.id.clone(),
            cell(task.name.as_deref(), 40),
            task.task_definition_key.clone(),
            task.process_instance_id.clone(),
            cell(task.assignee.as_deref(), 40),
            instant(task.create_time),
        ]);
    }
    output::emit(&t.render())?;
    more_hint(&page);
    Ok(SUCCESS)
}

pub async fn complete(global: &GlobalArgs, args: CompleteArgs) -> Result<u8, CliError> {
    let variables = variables(&args.vars)?;
    let engine = open_engine(&global.db).await?;
    let p = engine.processes();
    let task = p.task(&args.task_id).await?;
    p.complete_task(&task.id, variables).await?;
    let instance = p.instance(&task.process_instance_id).await?;
    if global.json {
        return output::json(&json!({ "taskId": task.id, "processInstance": instance })).map(|_| SUCCESS);
    }
    let after = if instance.ended { "has ended" } else { "is running" };
    output::line(&format!(
        "completed task {} ({}); process instance {} {after}",
        task.id, task.task_definition_key, instance.id
    ))?;
    Ok(SUCCESS)
}

pub async fn migrate_instance(global: &GlobalArgs, args: MigrateInstanceArgs) -> Result<u8, CliError> {
    let mut req = match (args.to_definition, args.to_version) {
        (Some(id), _) => MigrateRequest::to_definition(id),
        (None, Some(v)) => MigrateRequest::to_version(args.to_key.clone().unwrap_or_default(), v),
        (None, None) => MigrateRequest::latest(),
    };
    if req.to_process_definition_key.as_deref().is_none_or(str::is_empty) {
        req.to_process_definition_key = args.to_key;
    }
    for (from, to) in args.mappings {
        req = req.map(from, to);
    }
    let engine = open_engine(&global.db).await?;
    let p = engine.processes();
    let Some(definition) = args.all_of else {
        let instance = p.migrate_instance(args.id.as_deref().unwrap_or_default(), &req).await?;
        if global.json {
            return output::json(&instance).map(|_| SUCCESS);
        }
        output::line(&format!("process instance {} now runs on {}", instance.id, instance.process_definition_id))?;
        return Ok(SUCCESS);
    };
    let outcomes = p.migrate_instances_of(&definition, &req).await?;
    let failed = outcomes.iter().filter(|o| o.error.is_some()).count();
    if global.json {
        let doc = json!({ "migrated": outcomes.len() - failed, "failed": failed, "instances": outcomes });
        output::json(&doc)?;
    } else {
        for o in &outcomes {
            match &o.error {
                None => output::line(&format!("moved {}", o.process_instance_id))?,
                Some(why) => output::line(&format!("NOT moved {}: {why}", o.process_instance_id))?,
            }
        }
        output::line(&format!("{} moved, {failed} not moved", outcomes.len() - failed))?;
    }
    // Some instances stayed: the command did not do all it was asked (exit 2, bad input).
    Ok(if failed > 0 { BAD_INPUT } else { SUCCESS })
}

/// The variables of `--vars-json` and `--var`; a `--var` wins over the same name in the JSON.
fn variables(args: &VarsArgs) -> Result<Map<String, Json>, CliError> {
    let mut vars = match args.vars_json.as_deref() {
        None => Map::new(),
        Some(arg) => vars_json(arg)?,
    };
    let mut named = HashSet::new();
    for v in &args.vars {
        if !named.insert(v.name.as_str()) {
            return Err(CliError::bad_input(format!(
                "invalid --var: variable '{}' is given twice; give it once",
                v.name
            )));
        }
        vars.insert(v.name.clone(), v.value.clone());
    }
    Ok(vars)
}

/// `--vars-json`: inline JSON, `@FILE`, or `@-` for stdin; it must be an object. Errors say what
/// was wrong without echoing the document.
fn vars_json(arg: &str) -> Result<Map<String, Json>, CliError> {
    let bad = |m: String| CliError::bad_input(format!("invalid --vars-json: {m}"));
    let text = match arg.strip_prefix('@') {
        Some("-") => read_limited(std::io::stdin().lock()).map_err(|e| bad(format!("cannot read stdin: {e}")))?,
        Some(path) => {
            std::fs::File::open(path).and_then(read_limited).map_err(|e| bad(format!("cannot read {path}: {e}")))?
        }
        None => arg.to_string(),
    };
    let value: Json = serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
    let Json::Object(vars) = value else {
        return Err(bad(format!("expected a JSON object of variables ({{\"name\": value}}), got {}", kind(&value))));
    };
    for name in vars.keys() {
        kairos_process::validate_variable_name(name).map_err(|e| bad(e.message))?;
    }
    Ok(vars)
}

fn read_limited(r: impl Read) -> std::io::Result<String> {
    let mut buf = String::new();
    r.take(MAX_VARS_FILE_BYTES + 1).read_to_string(&mut buf)?;
    if buf.len() as u64 > MAX_VARS_FILE_BYTES {
        return Err(std::io::Error::other(format!("it is over {} MiB", MAX_VARS_FILE_BYTES / (1024 * 1024))));
    }
    Ok(buf)
}

fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

/// One page of a list the engine returns whole.
fn page_of<T>(all: Vec<T>, page: &PageArgs) -> Page<T> {
    let total = all.len() as u64;
    let start = usize::try_from(page.start).unwrap_or(usize::MAX);
    let size = usize::try_from(page.size).unwrap_or(usize::MAX);
    let data: Vec<T> = all.into_iter().skip(start).take(size).collect();
    Page::of(data, total, page.start)
}

/// Tells a person (on stderr) that the table is one page of a longer list.
fn more_hint<T>(page: &Page<T>) {
    let shown = page.data.len() as u64;
    if page.start + shown < page.total {
        eprintln!(
            "showing {}-{} of {}; use --start {} for the next page",
            page.start + 1,
            page.start + shown,
            page.total,
            page.start + shown
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exec(id: &str, parent: Option<&str>) -> ExecutionView {
        ExecutionView {
            id: id.into(),
            parent_id: parent.map(str::to_string),
            process_instance_id: "p".into(),
            super_execution_id: None,
            activity_id: None,
            is_active: false,
            is_concurrent: false,
            is_scope: false,
            is_event_scope: false,
            suspended: false,
        }
    }

    #[test]
    fn the_tree_puts_children_under_their_parent_and_shows_every_row() {
        let rows = vec![
            exec("p", None),
            exec("a", Some("p")),
            exec("b", Some("p")),
            exec("a1", Some("a")),
            exec("x", Some("y")),
            exec("y", Some("x")),
        ];
        let order: Vec<(usize, &str)> = tree_order(&rows).into_iter().map(|(d, e)| (d, e.id.as_str())).collect();
        assert_eq!(order, vec![(0, "p"), (1, "a"), (2, "a1"), (1, "b"), (0, "x"), (0, "y")]);
    }

    #[test]
    fn vars_json_must_be_an_object_of_valid_names() {
        assert_eq!(vars_json(r#"{"a": 1}"#).unwrap()["a"], json!(1));
        let e = vars_json("[1]").unwrap_err();
        assert!(e.message.contains("expected a JSON object") && e.message.contains("an array"), "{}", e.message);
        assert!(vars_json("{bad").unwrap_err().message.starts_with("invalid --vars-json: key must be a string"));
        assert!(vars_json(r#"{"": 1}"#).unwrap_err().message.contains("variable name"));
    }

    #[test]
    fn a_page_is_a_slice_of_the_whole_list() {
        let p = page_of((0..10).collect(), &PageArgs { start: 8, size: 5 });
        assert_eq!((p.data, p.total, p.start, p.size), (vec![8, 9], 10, 8, 2));
    }
}
