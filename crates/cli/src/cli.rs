//! The command line as clap types. Values that have a grammar (ISO 8601 durations, instants,
//! cycles, listen addresses) are parsed here, so a bad one is refused before anything opens the
//! store; payloads are parsed by `kairos jobs enqueue` itself so that an error never echoes a
//! large document.

use crate::parse;
use clap::{Args, Parser, Subcommand, ValueEnum};
use jiff::{SignedDuration, Timestamp};

const EXIT_CODES: &str = "\
Exit codes:
  0  success
  1  runtime failure (store unavailable, address in use, timeout)
  2  bad input: usage errors, invalid values, unknown ids; nothing was written
  3  kairos doctor found warnings or errors

Errors are one line on stderr, starting with \"error:\". Data goes to stdout; logs go to stderr
(RUST_LOG filters them: default info for serve, warn otherwise).";

/// kairos: a durable job engine and scheduler in one binary.
#[derive(Debug, Parser)]
#[command(name = "kairos", version, propagate_version = true, after_help = EXIT_CODES)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The store: sqlite://PATH (created if missing) or postgres://USER:PASS@HOST:PORT/DB
    #[arg(
        long,
        global = true,
        help_heading = "Global options",
        env = "KAIROS_DB",
        hide_env_values = true,
        default_value = "sqlite://kairos.db",
        value_name = "URL"
    )]
    pub db: String,
    /// Print data as JSON on stdout (one document) instead of text for people
    #[arg(long, global = true, help_heading = "Global options")]
    pub json: bool,
    /// Format of the log lines written to stderr
    #[arg(long, global = true, help_heading = "Global options", value_enum, default_value_t = LogFormat::Text, value_name = "FORMAT")]
    pub log_format: LogFormat,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the engine: the job executor and the HTTP API
    #[command(after_help = "Examples:
  kairos serve
  KAIROS_API_TOKEN=… kairos serve --db postgres://kairos:secret@db:5432/kairos --listen 0.0.0.0:8080 --workers 64
  kairos serve --no-executor          # API only; jobs wait for another node

Prints one line when ready (the address, node id and store; JSON with --json). On SIGTERM or
Ctrl-C it stops accepting requests and acquiring jobs, gives running jobs --shutdown-grace to
finish, hands the rest back and exits 0. A second signal exits at once.")]
    Serve(Box<ServeArgs>),
    /// Create or upgrade the schema, then exit
    #[command(
        after_help = "Examples:\n  kairos migrate --db sqlite://kairos.db\n  KAIROS_DB=postgres://kairos:secret@db/kairos kairos migrate"
    )]
    Migrate,
    /// Inspect and drive jobs (without a subcommand: list them)
    Jobs(JobsArgs),
    /// Diagnose why a timer did not fire, and list orphan jobs, expired locks and dead letters
    #[command(after_help = "Examples:
  kairos doctor                         # the whole engine
  kairos doctor --business-key order-42
  kairos doctor --instance 0190c3e2-... --json

Exit status: 0 when no finding is a warning or an error, 3 when at least one is (so a cron job or
a health check can alert on it), 1 when the diagnosis could not run, 2 on bad input.")]
    Doctor(DoctorArgs),
    /// List stored rows kairos cannot read: jobs, process variables and executions, triggers
    #[command(after_help = "Examples:
  kairos unreadable
  kairos unreadable --json --size 1000

Each row is named by table, id, column and the text stored there. None stops the rows beside
it: acquisition moves such a job to the dead letters as stored, a process instance with one
refuses its commands. The way out: fix the column with SQL, or delete the row (a job:
kairos jobs delete --force ID, or --dead for a dead letter).")]
    Unreadable(UnreadableArgs),
    /// Deploy BPMN documents: each file becomes a new version of the processes it defines
    #[command(after_help = "Examples:
  kairos deploy order.bpmn
  kairos deploy processes/*.bpmn20.xml --json

A process whose document is byte-for-byte the one of its latest version gets no new version (the
output says so), so deploying on every release is safe. Every file is read and checked before
anything is written: one refused file (its line and element are named) deploys none of them.
Service tasks may name the built-in handlers only (log, sleep, fail, noop); deploy processes
that call handlers of your own from the application that registers them.")]
    Deploy(DeployArgs),
    /// Start a process instance of the latest version of a process definition
    #[command(after_help = "Examples:
  kairos start leaveProcess --business-key LEAVE-42 --var applicant=kermit --var days=3
  kairos start orderProcess --vars-json '{\"items\": [1, 2], \"express\": true}' --json
  kairos start orderProcess --vars-json @order.json --var express=false

A --var value is JSON when it parses as JSON (3, true, null, [1,2], {\"a\":1}, \"text\"), else
the text itself: --var note=hello is the string \"hello\", --var zip='\"01234\"' keeps a number-like
string a string. --var wins over the same name in --vars-json.

Prints the instance as it stands after the start: it may already have ended, or be waiting in a
user task (kairos tasks --instance ID lists them). Service tasks up to the first wait state run
in this process; timers and async continuations become jobs that a `kairos serve` node runs.")]
    Start(StartArgs),
    /// List process instances (running ones unless --all)
    #[command(after_help = "Examples:
  kairos instances
  kairos instances --key leaveProcess --business-key LEAVE-42 --all
  kairos instances --all --json")]
    Instances(InstancesArgs),
    /// List the business bindings of a business object or of an instance (business_process_binding)
    #[command(after_help = "Examples:
  kairos start asset_publish --bind ASSET_PUBLISH:1001
  kairos bindings ASSET_PUBLISH:1001
  kairos bindings --instance 0190c3e2-... --json

One row per process type and lifecycle (seed 002 §4): the instance that runs or ran for the
object, and its status (ACTIVE, ENDED, DELETED).")]
    Bindings(BindingsArgs),
    /// The command table of a business database (workflow_command, SPEC C6): list, show, schema
    #[command(after_help = "Examples:
  kairos commands schema --business-db postgres://app:secret@db/orders
  kairos commands list --business-db sqlite://orders.db --status FAILED
  kairos commands show REQ-42 --business-db sqlite://orders.db --json

`kairos serve --business-db URL` runs the commands; these subcommands only read the table or
create it (CREATE TABLE IF NOT EXISTS: safe to run again).")]
    Commands(CommandsArgs),
    /// Reconcile business records with the engine (SPEC C7): classify each by the rule table, repair inside §30's bounds, open incidents
    #[command(after_help = "Examples:
  kairos reconcile --config reconcile.json --dry-run
  kairos reconcile --config reconcile.json --business-db postgres://app:secret@db/orders --json

The configuration (JSON) declares each business type's table: {\"sources\": [{\"businessType\",
\"table\", \"idColumn\", \"statusColumn\", \"processType\", \"states\": {\"DRAFT\": [...],
\"SUBMITTING\": [...], \"APPROVING\": [...], \"APPROVED\": [...], \"PUBLISHED\": [...],
\"CANCELED\": [...]}, \"approvedEnds\": [...], \"outboxAggregateType\"}], \"rules\": [...]}; without
\"rules\", seed 002 §29's table (docs/reconciliation.md). --dry-run classifies and changes nothing.
Exit code 3 when a difference was found (an incident opened, a repair made or refused).")]
    Reconcile(ReconcileArgs),
    /// Reconciliation's incidents (seed 002 §31): list, show, approve, execute, close
    #[command(after_help = "Examples:
  kairos incidents list --status OPEN
  kairos incidents show 0190c3e2-...
  kairos incidents approve 0190c3e2-... --user alice --plan 'write back APPROVING'
  kairos incidents execute 0190c3e2-... --user bob --action '{\"type\":\"write-back\",\"to\":\"APPROVING\"}' --config reconcile.json
  kairos incidents close 0190c3e2-... --user carol --note 'verified with the requester'

The executor must not be the approver. Actions: delete-instance {processInstanceId, reason},
write-back {to} (needs --config), outbox-retry {eventId}, manual {note}.")]
    Incidents(IncidentsArgs),
    /// The opt-in two-phase commit's transactions (SPEC C11): list them, recover the in-doubt ones
    #[command(after_help = "Examples:
  kairos --db postgres://kairos:secret@db/kairos twophase list --business-db postgres://app:secret@db/orders
  kairos --db postgres://kairos:secret@db/kairos twophase list --all --json --business-db postgres://app:secret@db/orders
  kairos --db postgres://kairos:secret@db/kairos twophase recover --business-db postgres://app:secret@db/orders

A two-phase transaction (docs/two-phase-commit.md) commits a business change on the business
database and an engine command on kairos's with PREPARE TRANSACTION / COMMIT PREPARED; its row in
KAIROS_TWO_PHASE goes PREPARING -> COMMITTING (the decision) -> COMMITTED, or -> ABORTING ->
ROLLED_BACK. `list` shows the rows not final (all with --all) and the transactions prepared on
each database now. `recover` finishes what a crash left: a row with the decision is committed on
both sides, one without is rolled back, a prepared transaction named kairos-2pc:... without a
row is rolled back. It leaves alone what changed within --grace (default PT60S): a coordinator
may still be working on it. Engines built with two_phase_recovery, and `kairos serve
--two-phase-recovery URL`, run the same on start and every 30 s.

Both URLs must be PostgreSQL, and both servers need max_prepared_transactions > 0.")]
    Twophase(TwophaseArgs),
    /// Users, their roles and API tokens (ACT_ID_*): add, list, passwd, delete, token
    #[command(after_help = "Examples:
  printf '%s' \"$PASSWORD\" | kairos users add kermit --admin --password-stdin
  kairos users add gonzo --group sales --first-name Gonzo --password-stdin < gonzo.pass
  kairos users list --json
  kairos users passwd gonzo --password-stdin < new.pass
  kairos users token gonzo --name laptop       # prints the token once; only its hash is kept
  kairos users delete gonzo

Roles come from groups: kairos-admin (deploy, migrate, delete, dead letters, users),
kairos-operator (jobs, instances, triggers), anyone else a user (their tasklist). `kairos serve
--users` lets users in with their password (HTTP Basic) or an API token (Bearer). A password is
read from standard input only (a flag would show in the process list) and stored as an Argon2id
hash.")]
    Users(UsersArgs),
    /// Show one process instance: its execution tree (ACT_RU_EXECUTION), variables and activity history
    #[command(after_help = "Examples:
  kairos instance 0190c3e2-...
  kairos instance 0190c3e2-... --json

The tree shows each execution under its parent with the flags of SPEC P3 (IS_ACTIVE_,
IS_CONCURRENT_, IS_SCOPE_, IS_EVENT_SCOPE_): where an instance waits and why. An ended instance
has no executions left; its activity history (ACT_HI_ACTINST) remains.")]
    Instance(InstanceArgs),
    /// List open user tasks (ACT_RU_TASK)
    #[command(after_help = "Examples:
  kairos tasks
  kairos tasks --instance 0190c3e2-...
  kairos tasks --candidate-group managers     # unclaimed tasks the group may take
  kairos tasks --assignee kermit --json")]
    Tasks(TasksArgs),
    /// Complete a user task, optionally setting process variables; the instance moves on
    #[command(after_help = "Examples:
  kairos complete 0190c3e2-...
  kairos complete 0190c3e2-... --var approved=true --var comment='looks fine'

--var and --vars-json work as for kairos start. Of two completions of one task, exactly one wins;
the other is told that the task does not exist any more.")]
    Complete(CompleteArgs),
    /// Move a running process instance to another version of its definition (SPEC P13)
    #[command(after_help = "Examples:
  kairos migrate-instance 0190c3e2-...                          # to the latest version, same ids
  kairos migrate-instance 0190c3e2-... --to-version 3 --map review=check
  kairos migrate-instance 0190c3e2-... --to-definition order:4:0190... --map sp=stage --map inner=work
  kairos migrate-instance --all-of 0190aa... --map review=check       # every instance of a version

Every activity a token is at (or inside) moves to the activity --map names, else to the one with
the same id; it must be the same kind of element in the mapped scope. Waits are re-armed from the
new version (renamed messages are listened for under their new names); a timer that is the same
in both keeps its due date. Refused, naming the activity, with nothing changed: an activity the
target lacks, another kind, another scope; also a suspended instance, a job running right now,
a dead letter of the instance.")]
    MigrateInstance(MigrateInstanceArgs),
    /// Quartz cron expressions: `kairos cron next EXPR` prints the next fire times
    Cron(crate::commands::cron::CronArgs),
    /// The scheduler's triggers: list, add, pause, resume (a trigger or a group)
    Triggers(crate::commands::triggers::TriggersArgs),
    /// Benchmarks (measurements, not tests)
    Bench(BenchArgs),
}

/// `kairos serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Bind a handler name models use (a Java class, ${delegate}, a bean method svc.post, a task type such as mail) to
    /// topic:TOPIC (an external worker), http:URL (an endpoint posted to) or handler:NAME; repeat for several
    #[arg(long = "bind-handler", value_name = "NAME=TARGET")]
    pub bind_handlers: Vec<String>,
    /// A JSON file of handler bindings, {"NAME": "TARGET", ...} with the targets --bind-handler takes
    #[arg(long, value_name = "FILE")]
    pub handler_bindings: Option<std::path::PathBuf>,
    /// Let handlers bound to http:URL reach loopback, private and link-local addresses (off: an SSRF guard)
    #[arg(long)]
    pub bind_allow_private: bool,
    /// Where the outbox's http sink posts an event that names no URL (SPEC C4); its host must pass the guard too
    #[arg(long, value_name = "URL")]
    pub outbox_base_url: Option<String>,
    /// A host an outbox event's URL may name (exact, or *.example.com); repeat for several. None: every event URL is refused
    #[arg(long = "outbox-allow-host", value_name = "HOST")]
    pub outbox_allow_hosts: Vec<String>,
    /// Let the outbox's http sink reach loopback, private and link-local addresses (off: an SSRF guard)
    #[arg(long)]
    pub outbox_allow_private: bool,
    /// How long a publisher's claim holds its outbox events; a killed node's events are sent again after it [default: PT60S]
    #[arg(long, value_parser = parse::duration, value_name = "DUR")]
    pub outbox_lease: Option<SignedDuration>,
    /// Run the command worker on this business database's workflow_command table (SPEC C6); off without it
    #[arg(long, env = "KAIROS_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
    pub business_db: Option<String>,
    /// How long a command the worker claimed stays its own; a crashed node's commands are taken over after it [default: PT30S]
    #[arg(long, value_parser = parse::duration, value_name = "DUR", requires = "business_db")]
    pub command_lease: Option<SignedDuration>,
    /// Reconcile business records with the engine on this cluster (SPEC C7): the JSON
    /// configuration `kairos reconcile --config` takes; passes run on --reconcile-every through
    /// the scheduler (one node per firing), and on demand with POST /reconcile
    #[arg(long, value_name = "FILE")]
    pub reconcile: Option<std::path::PathBuf>,
    /// How often the scheduler runs a reconciliation pass; PT0S: only on demand
    #[arg(long, default_value = "PT5M", value_parser = parse::duration_or_zero, value_name = "DUR", requires = "reconcile")]
    pub reconcile_every: SignedDuration,
    /// Recover the two-phase transactions (SPEC C11) between this business database (PostgreSQL) and --db: on start and every 30 s
    #[arg(long, env = "KAIROS_TWO_PHASE_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
    pub two_phase_recovery: Option<String>,
    /// Address to listen on, HOST:PORT (port 0 picks a free port; the start line shows it)
    #[arg(long, default_value = "127.0.0.1:8080", value_parser = parse::listen_addr, value_name = "ADDR")]
    pub listen: String,
    /// This node's id, the LOCK_OWNER_ of its leases; unique in the cluster [default: HOST-PID]
    #[arg(long, value_name = "ID")]
    pub node_id: Option<String>,
    /// Jobs run at once on this node [default: 32]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "N")]
    pub workers: Option<u32>,
    /// Lease length of a running job, ISO 8601, e.g. PT5M [default: PT5M]
    #[arg(long, value_parser = parse::duration, value_name = "DUR")]
    pub lock_time: Option<SignedDuration>,
    /// Longest idle sleep of the executor; work enqueued on other nodes is seen this late at most [default: PT0.5S]
    #[arg(long, value_parser = parse::duration, value_name = "DUR")]
    pub poll_interval: Option<SignedDuration>,
    /// Jobs taken per acquisition at most [default: 512]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "N")]
    pub acquire_batch: Option<u32>,
    /// Acquired jobs that may wait on this node for a free worker (the local queue; it holds
    /// only what the workers are expected to start within 200 ms); 0 turns it off [default: 1024]
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000), value_name = "N")]
    pub prefetch: Option<u32>,
    /// How far ahead of their due date jobs are taken, to start on time; a job taken ahead
    /// waits on this node, and a take-over before it started spends no retry; PT0S takes
    /// jobs only once due [default: PT0.1S]
    #[arg(long, value_parser = parse::duration_or_zero, value_name = "DUR")]
    pub lookahead: Option<SignedDuration>,
    /// How often the node heartbeats and looks for dead nodes [default: PT2S]
    #[arg(long, value_parser = parse::duration, value_name = "DUR")]
    pub heartbeat_interval: Option<SignedDuration>,
    /// A node silent this long is declared dead and its jobs are taken over [default: PT10S]
    #[arg(long, value_parser = parse::duration, value_name = "DUR")]
    pub dead_after: Option<SignedDuration>,
    /// Callers of the HTTP API must send `Authorization: Bearer TOKEN` (GET /health stays
    /// open); at least 16 printable characters. Prefer the environment variable: a flag's value
    /// shows in the process list
    #[arg(long, env = "KAIROS_API_TOKEN", hide_env_values = true, value_parser = parse::api_token, value_name = "TOKEN")]
    pub api_token: Option<String>,
    /// Serve the API without a token on an address beyond loopback: anyone who reaches the
    /// port can deploy models, run their scripts and delete work. Without this flag (or a
    /// token) such a node refuses to start
    #[arg(long, conflicts_with_all = ["api_token", "users"])]
    pub allow_no_auth: bool,
    /// Let users in: their id and password (HTTP Basic, as Camunda's and Flowable's clients
    /// send them) or an API token of theirs (Bearer), each with the role their groups give
    /// (kairos users). With --api-token too, the token stays an admin credential
    #[arg(long, env = "KAIROS_USERS")]
    pub users: bool,
    /// Mark the console's session cookie Secure on every login, for a node behind a TLS proxy
    /// that does not send X-Forwarded-Proto: https (with it, the cookie is Secure anyway)
    #[arg(long, env = "KAIROS_SECURE_COOKIES")]
    pub secure_cookies: bool,
    /// Without an API token, a host name (besides IP addresses, localhost and the --listen
    /// host) the API answers to: requests with another Host are refused, so a web page cannot
    /// reach the node by DNS rebinding. Repeatable; `.example.com` also allows its subdomains
    #[arg(long = "allowed-host", value_parser = parse::allowed_host, value_name = "NAME")]
    pub allowed_hosts: Vec<String>,
    /// Without an API token, a web page origin (`https://console.example.com`) that may call
    /// the API besides the node's own; other sites' pages are refused. Repeatable
    #[arg(long = "allowed-origin", value_parser = parse::allowed_origin, value_name = "ORIGIN")]
    pub allowed_origins: Vec<String>,
    /// A request's headers must arrive within this, or its connection is closed; also how long
    /// a kept-alive connection may stay idle
    #[arg(long, default_value = "PT30S", value_parser = parse::duration, value_name = "DUR")]
    pub header_read_timeout: SignedDuration,
    /// A request's body must arrive within this of its headers, or it is answered 408
    #[arg(long, default_value = "PT60S", value_parser = parse::duration, value_name = "DUR")]
    pub body_read_timeout: SignedDuration,
    /// HTTP connections open at once; at the limit the longest-idle one (or one still sending
    /// its headers) is closed to make room. Lowered at start to fit the descriptor limit
    /// (`ulimit -n`, raised to its hard value first) less 128 kept for the database and files
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=1_000_000), value_name = "N")]
    pub max_connections: u32,
    /// Run models' JavaScript (script tasks, script conditions, camunda:script parameters) in
    /// the sandbox: no host access, 64 MiB, bounded CPU. off: a model with a script is refused
    /// at deployment, naming the element and its line
    #[arg(long, default_value = "on", value_parser = parse::on_off, value_name = "on|off")]
    pub scripts: bool,
    /// Do not run jobs on this node (jobs are stored and wait; SPEC J10)
    #[arg(long)]
    pub no_executor: bool,
    /// On SIGTERM, how long running jobs may take to finish before they are handed back
    #[arg(long, default_value = "PT30S", value_parser = parse::duration, value_name = "DUR")]
    pub shutdown_grace: SignedDuration,
    /// Process history to write, as Flowable's levels: none (instances only), activity (+
    /// ACT_HI_ACTINST and ACT_HI_VARINST), audit (+ ACT_HI_TASKINST) or full (+ ACT_HI_DETAIL,
    /// one row per variable change)
    #[arg(long, default_value = "audit", value_name = "LEVEL")]
    pub history_level: kairos::process::HistoryLevel,
    /// How often this node deletes history past its definition's historyTimeToLive and job log
    /// rows past --job-log-retention; PT0S switches the cleanup off
    #[arg(long, default_value = "PT1H", value_parser = parse::duration_or_zero, value_name = "DUR")]
    pub history_cleanup_every: SignedDuration,
    /// The shortest interval between two fires of a repeating job, a simple trigger or a BPMN
    /// timer cycle; a shorter one is refused naming the field
    #[arg(long, default_value = "PT1S", value_parser = parse::duration, value_name = "DUR")]
    pub min_repeat_interval: SignedDuration,
    /// How long the job log keeps the row of an ended attempt; PT0S keeps every row
    #[arg(long, default_value = "P30D", value_parser = parse::duration_or_zero, value_name = "DUR")]
    pub job_log_retention: SignedDuration,
    // Test-only flags of the chaos suite (crates/cli/tests/chaos.rs, docs/chaos.md), hidden from
    // --help: `--chaos` registers the `chaos` handler (an autocommit side-effect row, a sleep,
    // and a transactional effect row staged with write_on_success; its tables are created by
    // the test), and `--clock-skew DUR` sets this node's own clock that far ahead, to show that
    // no due date or lease is judged by a node's clock.
    #[arg(long, hide = true)]
    pub chaos: bool,
    #[arg(long, hide = true, value_parser = parse::duration, value_name = "DUR")]
    pub clock_skew: Option<SignedDuration>,
}

/// `kairos jobs`.
#[derive(Debug, Args)]
#[command(
    args_conflicts_with_subcommands = true,
    after_help = "Examples:
  kairos jobs                              # the live jobs (ACT_RU_JOB)
  kairos jobs --dead --json                # dead letters as JSON
  kairos jobs enqueue --handler log --payload '{\"hello\":\"world\"}' --in PT5M
  kairos jobs retry 0190c3e2-... --retries 3
  kairos jobs log --job 0190c3e2-..."
)]
pub struct JobsArgs {
    #[command(subcommand)]
    pub command: Option<JobsCommand>,
    #[command(flatten)]
    pub list: ListArgs,
}

#[derive(Debug, Subcommand)]
pub enum JobsCommand {
    /// List jobs: id, type, handler, due date, retries, lock owner, exception
    List(ListArgs),
    /// Enqueue a standalone job (prints its id, or the job with --json)
    #[command(after_help = "Examples:
  kairos jobs enqueue --handler log --payload '{\"order\":42}'
  kairos jobs enqueue --handler sleep --payload '{\"ms\":500}' --due 2026-01-01T08:00:00Z
  kairos jobs enqueue --handler log --repeat R3/PT5M        # a timer firing three times
  kairos jobs enqueue --handler fail --retry-cycle R5/PT10M --payload @job.json

The CLI knows the built-in handlers (log, sleep, fail, noop); jobs for handlers of your own are
enqueued from your code or through the HTTP API of a node that registered them.")]
    Enqueue(EnqueueArgs),
    /// Move a dead letter back to ACT_RU_JOB with fresh retries
    Retry(RetryArgs),
    /// Print the stored error chain of a job's last failure
    Stacktrace(IdArg),
    /// Delete a job (refused while a live node holds its lock, unless --force)
    Delete(DeleteArgs),
    /// Every attempt of jobs, from ACT_HI_JOB_LOG (also of jobs already gone)
    Log(LogArgs),
}

#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// List dead letters (ACT_RU_DEADLETTER_JOB) instead of live jobs
    #[arg(long, conflicts_with = "suspended")]
    pub dead: bool,
    /// List jobs of suspended instances (ACT_RU_SUSPENDED_JOB)
    #[arg(long)]
    pub suspended: bool,
    /// Only jobs of this process instance
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Only jobs with this handler (HANDLER_TYPE_)
    #[arg(long, value_name = "H")]
    pub handler: Option<String>,
    /// Only jobs of this type
    #[arg(long = "type", value_enum, value_name = "TYPE")]
    pub job_type: Option<JobTypeArg>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Clone, Args)]
pub struct PageArgs {
    /// Skip this many rows
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub start: u64,
    /// Show at most this many rows
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000), value_name = "N")]
    pub size: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum JobTypeArg {
    Timer,
    Message,
    ExternalWorker,
}

#[derive(Debug, Args)]
pub struct EnqueueArgs {
    /// The handler that runs the job (HANDLER_TYPE_)
    #[arg(long, value_name = "H")]
    pub handler: String,
    /// The job's JSON payload, or @FILE to read it from a file (@- for stdin); 1 MiB at most
    #[arg(long, value_name = "JSON")]
    pub payload: Option<String>,
    /// Due at this RFC 3339 instant, e.g. 2026-01-01T08:00:00Z
    #[arg(long, value_parser = parse::instant, conflicts_with = "due_in", value_name = "INSTANT")]
    pub due: Option<Timestamp>,
    /// Due after this ISO 8601 duration from now (database clock), e.g. PT5M
    #[arg(long = "in", value_parser = parse::duration_text, value_name = "DUR")]
    pub due_in: Option<String>,
    /// Attempts before the job becomes a dead letter [default: 3, or as the retry cycle says]
    #[arg(long, allow_negative_numbers = true, value_name = "N")]
    pub retries: Option<i32>,
    /// Waits between failed attempts: R5/PT10M, or a list like PT1M,PT5M,PT1H
    #[arg(long, value_parser = parse::retry_cycle, value_name = "CYCLE")]
    pub retry_cycle: Option<String>,
    /// Make it a repeating timer: R3/PT5M, R/2026-01-01T08:00:00Z/P1D, ...
    #[arg(long, value_parser = parse::repeat_cycle, value_name = "CYCLE")]
    pub repeat: Option<String>,
    /// At most one job with this key runs at a time, cluster-wide
    #[arg(long, value_name = "K")]
    pub exclusive_key: Option<String>,
    /// TENANT_ID_ of the job
    #[arg(long, value_name = "T")]
    pub tenant: Option<String>,
}

#[derive(Debug, Args)]
pub struct RetryArgs {
    /// The dead letter's id
    pub id: String,
    /// Retries the job gets back
    #[arg(long, default_value_t = 3, allow_negative_numbers = true, value_name = "N")]
    pub retries: i32,
}

#[derive(Debug, Args)]
pub struct IdArg {
    /// The job's id (looked up in ACT_RU_JOB, then the dead letters, then the suspended jobs)
    pub id: String,
}

#[derive(Debug, Args)]
pub struct DeleteArgs {
    /// The job's id
    pub id: String,
    /// Delete a dead letter (ACT_RU_DEADLETTER_JOB)
    #[arg(long, conflicts_with = "suspended")]
    pub dead: bool,
    /// Delete a job of a suspended instance (ACT_RU_SUSPENDED_JOB)
    #[arg(long)]
    pub suspended: bool,
    /// Delete even while a live node holds the job's lock (it may be running right now)
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct LogArgs {
    /// Only attempts of this job
    #[arg(long, value_name = "ID")]
    pub job: Option<String>,
    /// Only attempts of jobs of this process instance
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Diagnose the process instance with this business key
    #[arg(long, conflicts_with = "instance", value_name = "K")]
    pub business_key: Option<String>,
    /// Diagnose this process instance
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
}

/// `kairos unreadable`.
#[derive(Debug, Args)]
pub struct UnreadableArgs {
    /// Show at most this many rows
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..=10_000), value_name = "N")]
    pub size: u64,
}

/// `kairos deploy`.
#[derive(Debug, Args)]
pub struct DeployArgs {
    /// BPMN 2.0 XML documents (.bpmn, .bpmn20.xml); each is one deployment named after its file
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<std::path::PathBuf>,
    /// The tenant the deployments are made for: their definitions (and versions) are its own
    #[arg(long, value_name = "T")]
    pub tenant: Option<String>,
}

/// Process variables given on the command line (`kairos start`, `kairos complete`).
#[derive(Debug, Clone, Args)]
pub struct VarsArgs {
    /// A process variable, NAME=VALUE (repeatable); VALUE is JSON when it parses, else text
    #[arg(long = "var", value_parser = var_arg, value_name = "NAME=VALUE")]
    pub vars: Vec<VarArg>,
    /// Process variables as one JSON object, or @FILE to read it from a file (@- for stdin)
    #[arg(long, value_name = "JSON")]
    pub vars_json: Option<String>,
}

/// One `--var NAME=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct VarArg {
    pub name: String,
    pub value: serde_json::Value,
}

/// Parses `NAME=VALUE`: the name is checked as the engine checks it, the value is JSON when it
/// parses as JSON, else the text itself (so `--var note=hello` needs no quoting).
pub fn var_arg(s: &str) -> Result<VarArg, String> {
    let Some((name, text)) = s.split_once('=') else {
        return Err("expected NAME=VALUE, e.g. --var approved=true".into());
    };
    kairos_process::validate_variable_name(name).map_err(|e| e.message)?;
    let value = serde_json::from_str(text).unwrap_or_else(|_| serde_json::Value::String(text.to_string()));
    Ok(VarArg { name: name.to_string(), value })
}

/// `kairos start`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The process definition key (the BPMN process id); its latest version starts
    #[arg(value_name = "KEY")]
    pub key: String,
    /// A business key to find the instance by later (kairos instances --business-key)
    #[arg(long, value_name = "K")]
    pub business_key: Option<String>,
    #[command(flatten)]
    pub vars: VarsArgs,
    /// The user starting the instance (START_USER_ID_; a start event's initiator variable)
    #[arg(long, value_name = "U")]
    pub user: Option<String>,
    /// Makes the start idempotent: run again with the same id and arguments, it prints the
    /// instance the first run started instead of starting another (kept 7 days)
    #[arg(long, value_name = "ID")]
    pub request_id: Option<String>,
    /// Binds the instance to a business object, TYPE:ID (SPEC C3): at most one instance per
    /// lifecycle; run again, it prints the lifecycle's instance instead of starting another
    #[arg(long, value_name = "TYPE:ID")]
    pub bind: Option<String>,
    /// The binding's process type (default: the definition key)
    #[arg(long, value_name = "T", requires = "bind")]
    pub process_type: Option<String>,
    /// The binding's lifecycle (default: the active one, else the next: a resubmission)
    #[arg(long, value_name = "N", requires = "bind")]
    pub lifecycle: Option<i64>,
    /// The tenant whose latest version of KEY starts (default: the definitions of no tenant)
    #[arg(long, value_name = "T")]
    pub tenant: Option<String>,
}

/// `kairos bindings`.
#[derive(Debug, Args)]
pub struct BindingsArgs {
    /// The business object, TYPE:ID (e.g. ASSET_PUBLISH:1001)
    #[arg(value_name = "TYPE:ID", required_unless_present = "instance", conflicts_with = "instance")]
    pub business: Option<String>,
    /// The binding of this process instance instead
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
}

/// `kairos commands`.
#[derive(Debug, Args)]
pub struct CommandsArgs {
    /// The business database holding workflow_command (sqlite: or postgres: URL)
    #[arg(long, global = true, env = "KAIROS_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
    pub business_db: Option<String>,
    #[command(subcommand)]
    pub command: CommandsCommand,
}

#[derive(Debug, Subcommand)]
pub enum CommandsCommand {
    /// Commands, oldest first
    List {
        /// Only commands in this status (PENDING, PROCESSING, SUCCEEDED, RETRY, FAILED)
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        #[arg(long, value_name = "TYPE")]
        business_type: Option<String>,
        #[arg(long, value_name = "ID")]
        business_id: Option<String>,
        /// At most this many rows
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: u32,
    },
    /// One command by its request id
    Show {
        #[arg(value_name = "REQUEST_ID")]
        id: String,
    },
    /// Create the table and its indexes if they are missing
    Schema,
}

/// `kairos reconcile`.
#[derive(Debug, Args)]
pub struct ReconcileArgs {
    /// The reconciliation configuration (JSON)
    #[arg(long, value_name = "FILE")]
    pub config: std::path::PathBuf,
    /// Where the business tables are, when not in kairos's database
    #[arg(long, env = "KAIROS_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
    pub business_db: Option<String>,
    /// Classify and report; repair nothing, open no incident
    #[arg(long)]
    pub dry_run: bool,
}

/// `kairos incidents`.
#[derive(Debug, Args)]
pub struct IncidentsArgs {
    #[command(subcommand)]
    pub command: IncidentsCommand,
}

#[derive(Debug, Subcommand)]
pub enum IncidentsCommand {
    /// Incidents and repairs, newest first
    List {
        /// OPEN, APPROVED, EXECUTED or CLOSED
        #[arg(long, value_name = "STATUS")]
        status: Option<String>,
        /// incident or repair
        #[arg(long, value_name = "KIND")]
        kind: Option<String>,
        #[arg(long, value_name = "TYPE")]
        business_type: Option<String>,
        #[arg(long, value_name = "ID")]
        business_id: Option<String>,
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: u32,
    },
    /// One incident with its evidence, plan, before/after and audit trail
    Show { id: String },
    /// OPEN → APPROVED
    Approve {
        id: String,
        #[arg(long, value_name = "NAME")]
        user: String,
        /// The plan to run (default: the rule's)
        #[arg(long, value_name = "TEXT")]
        plan: Option<String>,
    },
    /// APPROVED → EXECUTED, by another person than the approver
    Execute {
        id: String,
        #[arg(long, value_name = "NAME")]
        user: String,
        /// The action, as JSON
        #[arg(long, value_name = "JSON")]
        action: String,
        /// The reconciliation configuration (for write-back)
        #[arg(long, value_name = "FILE")]
        config: Option<std::path::PathBuf>,
        #[arg(long, env = "KAIROS_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
        business_db: Option<String>,
    },
    /// → CLOSED (an OPEN one is dismissed)
    Close {
        id: String,
        #[arg(long, value_name = "NAME")]
        user: String,
        #[arg(long, value_name = "TEXT")]
        note: String,
    },
}

/// `kairos twophase`.
#[derive(Debug, Args)]
pub struct TwophaseArgs {
    /// The business database of the two-phase transactions (a postgres: URL)
    #[arg(long, global = true, env = "KAIROS_BUSINESS_DB", hide_env_values = true, value_name = "URL")]
    pub business_db: Option<String>,
    #[command(subcommand)]
    pub command: TwophaseCommand,
}

#[derive(Debug, Subcommand)]
pub enum TwophaseCommand {
    /// The coordinator log's rows not final (all with --all), oldest first, and what is prepared now
    List {
        /// Also COMMITTED and ROLLED_BACK rows
        #[arg(long)]
        all: bool,
        /// At most this many rows
        #[arg(long, default_value_t = 100, value_name = "N")]
        limit: u32,
    },
    /// Finish the in-doubt transactions once: commit where the decision is recorded, roll back where not
    Recover {
        /// Leave alone what changed more recently than this; PT0S only when no coordinator runs
        #[arg(long, default_value = "PT60S", value_parser = parse::duration_or_zero, value_name = "DUR")]
        grace: SignedDuration,
    },
}

/// `kairos users`.
#[derive(Debug, Args)]
pub struct UsersArgs {
    #[command(subcommand)]
    pub command: UsersCommand,
}

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Add a user; groups named that do not exist are created
    Add {
        #[arg(value_name = "ID")]
        id: String,
        /// Read the password from standard input (one line; without it the user cannot log in)
        #[arg(long)]
        password_stdin: bool,
        /// Member of kairos-admin
        #[arg(long, conflicts_with = "operator")]
        admin: bool,
        /// Member of kairos-operator
        #[arg(long)]
        operator: bool,
        /// Member of this group too (repeatable)
        #[arg(long = "group", value_name = "GROUP")]
        groups: Vec<String>,
        #[arg(long, value_name = "NAME")]
        first_name: Option<String>,
        #[arg(long, value_name = "NAME")]
        last_name: Option<String>,
        #[arg(long, value_name = "ADDRESS")]
        email: Option<String>,
        /// The tenant the user belongs to
        #[arg(long, value_name = "TENANT")]
        tenant: Option<String>,
    },
    /// Every user with their groups and role
    List,
    /// Replace a user's password (read from standard input)
    Passwd {
        #[arg(value_name = "ID")]
        id: String,
        /// Read the password from standard input (required: the only way in)
        #[arg(long)]
        password_stdin: bool,
    },
    /// Delete a user, their memberships and API tokens
    Delete {
        #[arg(value_name = "ID")]
        id: String,
    },
    /// Make an API token for a user and print it (once: only its SHA-256 is kept)
    Token {
        #[arg(value_name = "ID")]
        id: String,
        /// What the token is for
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
    },
}

/// `kairos instances`.
#[derive(Debug, Args)]
pub struct InstancesArgs {
    /// Only instances of this process definition key
    #[arg(long, value_name = "KEY")]
    pub key: Option<String>,
    /// Only instances with this business key
    #[arg(long, value_name = "K")]
    pub business_key: Option<String>,
    /// Also ended and deleted instances (from history); running ones only by default
    #[arg(long)]
    pub all: bool,
    #[command(flatten)]
    pub page: PageArgs,
}

/// `kairos instance`.
#[derive(Debug, Args)]
pub struct InstanceArgs {
    /// The process instance's id
    #[arg(value_name = "ID")]
    pub id: String,
}

/// `kairos tasks`.
#[derive(Debug, Args)]
pub struct TasksArgs {
    /// Only tasks of this process instance
    #[arg(long, value_name = "ID")]
    pub instance: Option<String>,
    /// Only tasks assigned to this user
    #[arg(long, value_name = "U")]
    pub assignee: Option<String>,
    /// Only unassigned tasks this user is a candidate for
    #[arg(long, value_name = "U")]
    pub candidate_user: Option<String>,
    /// Only unassigned tasks this group is a candidate for
    #[arg(long, value_name = "G")]
    pub candidate_group: Option<String>,
    #[command(flatten)]
    pub page: PageArgs,
}

/// `kairos migrate-instance`.
#[derive(Debug, Args)]
pub struct MigrateInstanceArgs {
    /// The process instance's id
    #[arg(value_name = "ID", required_unless_present = "all_of", conflicts_with = "all_of")]
    pub id: Option<String>,
    /// Instead of one instance: every running instance of this process definition (id), each
    /// moved on its own; those that cannot move are listed with why
    #[arg(long, value_name = "DEFINITION_ID")]
    pub all_of: Option<String>,
    /// The target process definition's id
    #[arg(long, value_name = "ID", conflicts_with_all = ["to_version", "to_key"])]
    pub to_definition: Option<String>,
    /// The target version of --to-key (default: the latest)
    #[arg(long, value_name = "N")]
    pub to_version: Option<i64>,
    /// The target definition key (default: the instance's own)
    #[arg(long, value_name = "KEY")]
    pub to_key: Option<String>,
    /// FROM=TO: a token at activity FROM moves to activity TO (repeatable)
    #[arg(long = "map", value_name = "FROM=TO", value_parser = crate::parse::activity_mapping)]
    pub mappings: Vec<(String, String)>,
}

/// `kairos complete`.
#[derive(Debug, Args)]
pub struct CompleteArgs {
    /// The task's id (kairos tasks lists them)
    #[arg(value_name = "TASK_ID")]
    pub task_id: String,
    #[command(flatten)]
    pub vars: VarsArgs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    #[command(subcommand)]
    pub command: BenchCommand,
}

#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// Job throughput (drain of pre-enqueued no-op jobs) and timer lateness
    #[command(after_help = "Examples:
  kairos bench jobs --db sqlite:///tmp/bench.db --jobs 100000 --workers 64 --reset
  kairos bench jobs --db \"$KAIROS_TEST_PG_URL\" --jobs 100000 --workers 64 --reset

Phase 1 enqueues --jobs no-op jobs with the executor off, then starts it and measures the drain
rate and each job's lateness (start minus due date, database clock); the job log must hold one
`succeeded` row per job. Phase 2 (skipped with --timers 0) enqueues --timers-pending timers due
in a day, then --timers timers due over --spread starting 2 s from now, and measures their
lateness. Prints one JSON line on stdout; progress goes to stderr.

The job table must be empty for a fresh measurement: --reset deletes every job and the job log
first. A node running against the same database makes the bench refuse to start.")]
    Jobs(BenchJobsArgs),
    /// Process instances per second: start → service task (`log`) → end, with audit history
    #[command(after_help = "Examples:
  kairos bench process --db sqlite:///tmp/bench.db --instances 20000 --mode sync --reset
  kairos bench process --db \"$KAIROS_TEST_PG_URL\" --instances 20000 --mode async --reset

sync runs each instance to its end inside its start (from --concurrency starters at once);
async puts asyncBefore on the service task, so each start commits a job that the executor
(--workers) finishes. The clock runs from the first start until the last instance has ended.
--reset deletes every process and job row first. Prints one JSON line.")]
    Process(BenchProcessArgs),
    /// Fires per second and firing lateness of the scheduler's triggers
    Scheduler(crate::bench::scheduler::BenchSchedulerArgs),
    /// Outbox events per second to a local HTTP sink, and commit-to-delivery latency
    Outbox(crate::bench::outbox::BenchOutboxArgs),
    /// One reconciliation pass over many bindings, and timer lateness without and with it
    Reconcile(crate::bench::reconcile::BenchReconcileArgs),
}

#[derive(Debug, Args)]
pub struct BenchProcessArgs {
    /// Instances to start
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=10_000_000), value_name = "N")]
    pub instances: u64,
    /// sync: the instance runs in its start; async: asyncBefore on the service task
    #[arg(long, value_enum, default_value = "sync")]
    pub mode: ProcessMode,
    /// Starts in flight at once
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u32).range(1..=1_000), value_name = "C")]
    pub concurrency: u32,
    /// Executor workers (async mode)
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "W")]
    pub workers: u32,
    /// Give up after this long
    #[arg(long, default_value = "PT10M", value_parser = parse::duration, value_name = "DUR")]
    pub timeout: SignedDuration,
    /// Delete every process and job row first
    #[arg(long)]
    pub reset: bool,
}

/// `kairos bench process --mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ProcessMode {
    Sync,
    Async,
}

#[derive(Debug, Args)]
pub struct BenchJobsArgs {
    /// No-op jobs to enqueue and drain
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000), value_name = "N")]
    pub jobs: u64,
    /// Executor workers (jobs run at once)
    #[arg(long, default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "W")]
    pub workers: u32,
    /// Jobs taken per acquisition at most [default: the engine's, 512; never more than free
    /// workers plus room in the local queue]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000), value_name = "B")]
    pub batch: Option<u32>,
    /// Local queue ahead of the workers, jobs at most; 0 turns it off [default: the engine's, 1024]
    #[arg(long, value_parser = clap::value_parser!(u32).range(0..=100_000), value_name = "Q")]
    pub prefetch: Option<u32>,
    /// Completions written per transaction at most [default: the engine's, 512]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=100_000), value_name = "C")]
    pub completion_batch: Option<u32>,
    /// Completion batches written at once on PostgreSQL [default: the engine's, 8]
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64), value_name = "N")]
    pub completion_writers: Option<u32>,
    /// Jobs per enqueue transaction
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000), value_name = "N")]
    pub chunk: u32,
    /// Phases to run, in this order: `drain` (N jobs enqueued, then drained), `steady` (jobs
    /// enqueued at --rate while the executor runs), `timers` (T timers due over --spread while
    /// P pending timers wait), `backlog` (T timers due over --spread, from --lead on, while N
    /// async jobs enqueued before them drain)
    #[arg(long, value_delimiter = ',', default_value = "drain,timers", value_name = "PHASES")]
    pub phases: Vec<BenchPhase>,
    /// Steady phase: jobs enqueued per second (job i is due at start + i/R)
    #[arg(long, default_value_t = 1_000, value_parser = clap::value_parser!(u32).range(1..=1_000_000), value_name = "R")]
    pub rate: u32,
    /// Steady phase: jobs enqueued in total
    #[arg(long, default_value_t = 20_000, value_parser = clap::value_parser!(u64).range(1..=100_000_000), value_name = "N")]
    pub steady_jobs: u64,
    /// Timers due in a day that wait while the measured timers fire
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(0..=100_000_000), value_name = "P")]
    pub timers_pending: u64,
    /// Timers whose lateness is measured (0 skips phase 2)
    #[arg(long, default_value_t = 2_000, value_parser = clap::value_parser!(u64).range(0..=10_000_000), value_name = "T")]
    pub timers: u64,
    /// The measured timers are due evenly over this span, starting --lead after they are enqueued
    #[arg(long, default_value = "PT10S", value_parser = parse::duration, value_name = "DUR")]
    pub spread: SignedDuration,
    /// The first measured timer is due this long after their enqueueing starts
    #[arg(long, default_value = "PT2S", value_parser = parse::duration, value_name = "DUR")]
    pub lead: SignedDuration,
    /// Steady and timers phases: stop waiting this long after the last due date and report the
    /// jobs that had not started as `partial` (lateness then a lower bound)
    #[arg(long, default_value = "PT60S", value_parser = parse::duration, value_name = "DUR")]
    pub slack: SignedDuration,
    /// Give up on a phase after this long
    #[arg(long, default_value = "PT10M", value_parser = parse::duration, value_name = "DUR")]
    pub timeout: SignedDuration,
    /// Delete all jobs and job-log rows first (needed when ACT_RU_JOB is not empty)
    #[arg(long)]
    pub reset: bool,
    /// Leave the pending timers in the store afterwards (they are deleted by default)
    #[arg(long)]
    pub keep: bool,
}

/// A phase of `kairos bench jobs`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchPhase {
    Drain,
    Steady,
    Timers,
    Backlog,
}
