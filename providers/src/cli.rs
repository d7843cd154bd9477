//! Agent CLIs as providers: Claude Code, Codex, the Gemini CLI, or any command
//! that reads a prompt and prints an answer. One process per call, in a
//! process group of its own; its structured events become the answer's text as
//! they come, and its failure (exit status, stderr, its final error event)
//! becomes the evidence the catalogue reads with the CLI's family.
//!
//! The CLI's own retries are turned off where it allows (Claude Code's
//! `CLAUDE_CODE_MAX_RETRIES=0`); where a CLI retries anyway, its first retry
//! event is taken as the failure and the process is stopped, so the
//! candidate's policy and circuits decide what happens next, not the CLI.
//!
//! What an agent did before it failed is an effect: assistant text, a tool
//! call, a command, a file change. Any of it in the call's output makes the
//! failure unsafe to re-run (`partial_output` is not empty); a failure before
//! any (a usage window, a bad login, a missing binary) is safe to recover. The
//! structured presets know which events are work; the generic preset counts
//! any stdout as work.

use std::process::Stdio;

use catalogue::{Evidence, Transport};
use policy::{CliConfig, CliPreset, MODEL_PLACEHOLDER, PROMPT_PLACEHOLDER};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::time::{Instant, timeout_at};

use crate::call::{CallOutcome, CallRequest, Observer, StopReason};
use crate::config::Timeouts;
use crate::key::{ApiKey, read_key};

/// The most of a CLI's stderr kept as evidence, in bytes.
const MAX_STDERR_BYTES: usize = 64 * 1024;

/// How long a CLI has, once its events are read (or once it gave its verdict),
/// to exit and close its pipes before its group is killed and the call goes on.
const GRACE: std::time::Duration = std::time::Duration::from_secs(1);

/// What the adapter knows of each preset beyond its command.
trait Run {
    /// Settings the process always gets, whatever the provider passes through:
    /// the CLI's own retries off where it has a switch for them.
    fn settings(self) -> &'static [(&'static str, &'static str)];
    /// What one line of its stdout says.
    fn read(self, line: &str) -> Vec<Said>;
}

impl Run for CliPreset {
    fn settings(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::ClaudeCode => &[
                ("CLAUDE_CODE_MAX_RETRIES", "0"),
                ("DISABLE_AUTOUPDATER", "1"),
            ],
            Self::Codex | Self::GeminiCli | Self::Generic => &[],
        }
    }

    fn read(self, line: &str) -> Vec<Said> {
        match self {
            Self::Generic => vec![Said::Work(Work::Piece(format!("{line}\n")))],
            structured => match serde_json::from_str::<Value>(line) {
                Ok(event) => match structured {
                    Self::ClaudeCode => claude_code(&event),
                    Self::Codex => codex(&event),
                    _ => gemini_cli(&event),
                },
                // Not an event: a line a CLI printed around its events. Kept for
                // the evidence, but it is not work.
                Err(_) => vec![Said::Note(line.to_owned())],
            },
        }
    }
}

/// The prompt an agent CLI is given for a conversation: a single message as it
/// is; otherwise the system text and each message under its speaker's name.
///
/// ```
/// assert_eq!(providers::cli::prompt_of("", &[("user", "Hi".into())]), "Hi");
/// assert_eq!(
///     providers::cli::prompt_of("Be brief.", &[("user", "Hi".into())]),
///     "System: Be brief.\n\nUser: Hi",
/// );
/// ```
pub fn prompt_of(system: &str, messages: &[(&str, String)]) -> String {
    if let ([("user", only)], "") = (messages, system) {
        return only.clone();
    }
    let mut parts = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        parts.push(format!("System: {system}"));
    }
    for (role, text) in messages {
        let speaker = if *role == "assistant" {
            "Assistant"
        } else {
            "User"
        };
        parts.push(format!("{speaker}: {text}"));
    }
    parts.join("\n\n")
}

/// Work an agent did, as its output shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Work {
    /// A piece of assistant text, streamed: the next piece follows it directly.
    Piece(String),
    /// A whole assistant message: a paragraph of the answer.
    Message(String),
    /// A tool call, a command or a file change, described.
    Act(String),
}

/// What a line of a CLI's output says.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Said {
    /// The agent worked.
    Work(Work),
    /// The CLI is about to retry a failed request on its own: the failure, with
    /// the status it names.
    Retrying(String, Option<u16>),
    /// The run failed: what the CLI says of it, with the status it names.
    Error(String, Option<u16>),
    /// An error the CLI reports and may carry on after (a warning): kept for
    /// the evidence, should the run fail.
    Warning(String),
    /// The run ended well; the final answer when the CLI repeats it whole.
    Done(Option<String>),
    /// A line that is neither: kept for the evidence only.
    Note(String),
}

fn text_of(value: &Value) -> Option<&str> {
    value.as_str().filter(|text| !text.is_empty())
}

fn status_of(value: &Value) -> Option<u16> {
    value.as_u64().and_then(|status| u16::try_from(status).ok())
}

/// A JSON value as short text, for a tool call's description.
fn brief(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(200) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Claude Code's `stream-json` events: whole assistant messages (text and
/// tool calls), `api_retry` notices, and the final `result`, whose `is_error`
/// is the verdict (an API error can end with `"subtype": "success"` and exit
/// status 0). An API error also comes as a synthetic assistant message with an
/// `error` field: its text is the error, not the agent's work.
fn claude_code(event: &Value) -> Vec<Said> {
    let blocks = || event["message"]["content"].as_array().into_iter().flatten();
    match event["type"].as_str() {
        Some("assistant") if !event["error"].is_null() => {
            let text: Vec<&str> = blocks()
                .filter_map(|block| text_of(&block["text"]))
                .collect();
            vec![Said::Warning(text.join("\n"))]
        }
        Some("assistant") => blocks()
            .filter_map(|block| match block["type"].as_str() {
                Some("text") => {
                    text_of(&block["text"]).map(|text| Said::Work(Work::Message(text.to_owned())))
                }
                Some("tool_use") => Some(Said::Work(Work::Act(format!(
                    "[tool call {} {}]",
                    block["name"].as_str().unwrap_or("?"),
                    brief(&block["input"])
                )))),
                _ => None,
            })
            .collect(),
        Some("system") if event["subtype"] == "api_retry" => {
            let error = text_of(&event["error"]).unwrap_or("an API error");
            let status = status_of(&event["error_status"]);
            let with_status = status
                .map(|status| format!(" ({status})"))
                .unwrap_or_default();
            vec![Said::Retrying(
                format!(
                    "API Error{with_status}: {error}; Claude Code was about to retry it on its own"
                ),
                status,
            )]
        }
        Some("result") => {
            let failed = event["is_error"] == Value::Bool(true)
                || event["subtype"]
                    .as_str()
                    .is_some_and(|subtype| subtype.starts_with("error"));
            let result = text_of(&event["result"]).map(str::to_owned);
            if failed {
                let errors: Vec<&str> = event["errors"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(text_of)
                    .collect();
                let text = result
                    .or_else(|| (!errors.is_empty()).then(|| errors.join("\n")))
                    .unwrap_or_else(|| {
                        format!(
                            "Claude Code ended with {}",
                            event["subtype"].as_str().unwrap_or("an error")
                        )
                    });
                vec![Said::Error(text, status_of(&event["api_error_status"]))]
            } else {
                vec![Said::Done(result)]
            }
        }
        _ => Vec::new(),
    }
}

/// Codex's `exec --json` events: whole items (messages, commands, file
/// changes, tool calls), and `turn.completed` or `turn.failed` as the verdict.
/// An `error` event may be a warning the turn survives; "Reconnecting... 1/5"
/// is Codex retrying a stream on its own.
fn codex(event: &Value) -> Vec<Said> {
    let item = &event["item"];
    match event["type"].as_str() {
        Some("item.completed") => match item["type"].as_str() {
            Some("agent_message") => text_of(&item["text"])
                .map(|text| Said::Work(Work::Message(text.to_owned())))
                .into_iter()
                .collect(),
            Some("error") => vec![Said::Warning(
                text_of(&item["message"]).unwrap_or("an error").to_owned(),
            )],
            Some("reasoning" | "todo_list") | None => Vec::new(),
            Some(kind) => vec![Said::Work(Work::Act(format!("[{kind} {}]", brief(item))))],
        },
        // A command or a tool call is work from the moment it starts.
        Some("item.started") => match item["type"].as_str() {
            Some(kind @ ("command_execution" | "mcp_tool_call" | "file_change" | "web_search")) => {
                vec![Said::Work(Work::Act(format!("[{kind} {}]", brief(item))))]
            }
            _ => Vec::new(),
        },
        Some("turn.completed") => vec![Said::Done(None)],
        Some("turn.failed") => vec![Said::Error(
            text_of(&event["error"]["message"])
                .unwrap_or("Codex's turn failed")
                .to_owned(),
            None,
        )],
        Some("error") => {
            let message = text_of(&event["message"]).unwrap_or("Codex reported an error");
            // Codex says it reconnects before retrying a stream on its own.
            if message.to_ascii_lowercase().starts_with("reconnecting") {
                vec![Said::Retrying(message.to_owned(), None)]
            } else {
                vec![Said::Warning(message.to_owned())]
            }
        }
        _ => Vec::new(),
    }
}

/// The Gemini CLI's `stream-json` events: assistant text in pieces, tool
/// calls, and the final `result`, whose `status` is the verdict (an `error`
/// event is a warning the run may survive).
fn gemini_cli(event: &Value) -> Vec<Said> {
    match event["type"].as_str() {
        Some("message") if event["role"] == "assistant" => text_of(&event["content"])
            .map(|text| Said::Work(Work::Piece(text.to_owned())))
            .into_iter()
            .collect(),
        Some("tool_use") => vec![Said::Work(Work::Act(format!(
            "[tool call {} {}]",
            event["tool_name"].as_str().unwrap_or("?"),
            brief(&event["parameters"])
        )))],
        Some("error") => vec![Said::Warning(
            text_of(&event["message"])
                .unwrap_or("the Gemini CLI reported an error")
                .to_owned(),
        )],
        Some("result") if event["status"] == "success" => vec![Said::Done(None)],
        Some("result") => vec![Said::Error(
            text_of(&event["error"]["message"])
                .unwrap_or("the Gemini CLI's run failed")
                .to_owned(),
            None,
        )],
        _ => Vec::new(),
    }
}

/// A process group: the CLI and whatever it started. Killed when the call
/// has read what it needs, and when the call is dropped.
struct Group(Option<nix::unistd::Pid>);

impl Group {
    fn kill(&self) {
        if let Some(group) = self.0 {
            // Already gone is fine: every process in it has exited.
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What a call has seen so far.
struct Seen<'a> {
    observer: &'a dyn Observer,
    secrets: &'a [ApiKey],
    /// Secrets no header could carry: replaced as they are, and line by line.
    raw_secrets: &'a [String],
    /// The answer's text, as passed on.
    text: String,
    /// Everything the agent did, text and acts, for a failure's `partial_output`.
    work: String,
    /// Errors and warnings the CLI reported, and the lines that were not events.
    errors: Vec<String>,
    notes: Vec<String>,
    status: Option<u16>,
    /// The CLI said the run failed.
    failed: bool,
    /// A retry the CLI was about to make on its own.
    retrying: bool,
    done: Option<Option<String>>,
}

impl Seen<'_> {
    /// Whether the CLI has said how the run ended.
    fn verdict(&self) -> bool {
        self.done.is_some() || self.failed
    }

    fn pass_on(&mut self, piece: String) {
        self.observer.text(&piece);
        self.text.push_str(&piece);
        self.work.push_str(&piece);
    }

    fn scrub(&self, text: &str) -> String {
        let text = self
            .secrets
            .iter()
            .fold(text.to_owned(), |text, secret| secret.scrub(&text));
        self.raw_secrets.iter().fold(text, |text, secret| {
            secret
                .lines()
                .filter(|line| line.trim().len() >= 8)
                .fold(text.replace(secret.as_str(), "[redacted]"), |text, line| {
                    text.replace(line.trim(), "[redacted]")
                })
        })
    }

    fn take(&mut self, said: Said) {
        match said {
            Said::Work(Work::Piece(piece)) => self.pass_on(piece),
            // Messages of one run are paragraphs of one answer.
            Said::Work(Work::Message(text)) if self.text.is_empty() => self.pass_on(text),
            Said::Work(Work::Message(text)) => self.pass_on(format!("\n\n{text}")),
            Said::Work(Work::Act(act)) => {
                if !self.work.is_empty() {
                    self.work.push('\n');
                }
                self.work.push_str(&act);
            }
            Said::Retrying(error, status) => {
                self.errors.push(error);
                self.status = self.status.or(status);
                self.retrying = true;
            }
            Said::Error(error, status) => {
                self.errors.push(error);
                self.status = self.status.or(status);
                self.failed = true;
            }
            Said::Warning(warning) => self.errors.push(warning),
            Said::Done(answer) => self.done = Some(answer),
            Said::Note(note) => self.notes.push(note),
        }
    }
}

/// The PATH the program is looked up in: the one passed through, if it is.
fn path_of(command: &tokio::process::Command) -> String {
    command
        .as_std()
        .get_envs()
        .find(|(name, _)| *name == "PATH")
        .and_then(|(_, value)| value)
        .map_or_else(
            || "not passed through".to_owned(),
            |value| value.to_string_lossy().into_owned(),
        )
}

/// How the process ended, as far as the call saw.
enum End {
    /// It exited with this status.
    Exited(std::process::ExitStatus),
    /// It was stopped: it began a retry of its own.
    Stopped,
    /// No first event, or too long between events.
    TimedOut,
    /// Its output could not be read.
    Unreadable(String),
    /// It gave its verdict, then did not exit (or close its output) in time.
    Lingered,
}

/// The time zone a CLI's wall-clock resets ("resets 3pm") are read in: the
/// provider's own setting, else the server's (`None` when the server's has no
/// name).
pub fn reset_zone(cli: &CliConfig) -> Option<String> {
    cli.time_zone
        .clone()
        .or_else(|| jiff::tz::TimeZone::system().iana_name().map(str::to_owned))
}

/// Runs the CLI for one call. Everything is awaited here: dropping the future
/// kills the process group.
pub(crate) async fn call(
    cli: &CliConfig,
    provider_family: &str,
    timeouts: &Timeouts,
    request: &CallRequest,
    observer: &dyn Observer,
) -> CallOutcome {
    let family: &str = match cli.preset.family() {
        Some(family) => family.as_str(),
        None => provider_family,
    };
    let zone = reset_zone(cli);
    let evidence = || {
        let evidence = Evidence::new(family);
        match &zone {
            Some(zone) => evidence.with_time_zone(zone),
            None => evidence,
        }
    };
    let prompt = match &request.client {
        Some(client) => match client.prompt() {
            Ok(prompt) => prompt,
            Err(refused) => {
                return CallOutcome::failed(evidence().with_output(&format!("not run: {refused}")));
            }
        },
        None => {
            let messages: Vec<(&str, String)> = request
                .messages
                .iter()
                .map(|message| (message.role.as_str(), message.content.clone()))
                .collect();
            prompt_of("", &messages)
        }
    };
    let words = cli.program_and_arguments();
    let Some((program, arguments)) = words.split_first() else {
        return CallOutcome::failed(
            evidence().with_output("not run: the provider names no command"),
        );
    };
    let prompt_in_arguments = arguments
        .iter()
        .any(|word| word.contains(PROMPT_PLACEHOLDER));
    let mut command = tokio::process::Command::new(program);
    command
        .args(arguments.iter().map(|word| {
            word.replace(MODEL_PLACEHOLDER, &request.model)
                .replace(PROMPT_PLACEHOLDER, &prompt)
        }))
        .env_clear()
        .stdin(if prompt_in_arguments {
            Stdio::null()
        } else {
            Stdio::piped()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    // The variables passed through; the values of those that look like secrets
    // are scrubbed from whatever the CLI prints.
    let mut secrets = Vec::new();
    let mut raw_secrets = Vec::new();
    for name in &cli.env {
        if let Some(value) = std::env::var_os(name) {
            if policy::looks_like_a_secret(name) {
                match read_key(Some(name)) {
                    Ok(Some(secret)) => secrets.push(secret),
                    // Not a value an HTTP header could carry (several lines, not
                    // ASCII): taken out as it is.
                    _ => raw_secrets.extend(
                        value
                            .to_str()
                            .map(str::trim)
                            .filter(|value| !value.is_empty())
                            .map(str::to_owned),
                    ),
                }
            }
            command.env(name, value);
        }
    }
    command.envs(cli.preset.settings().iter().copied());
    if let Some(dir) = &cli.working_dir {
        command.current_dir(dir);
    }
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(error) => {
            let looked = match &cli.working_dir {
                Some(dir) => format!(" (in {dir}, with PATH {})", path_of(&command)),
                None => format!(" (with PATH {})", path_of(&command)),
            };
            return CallOutcome::failed(
                evidence().with_output(&format!("could not start `{program}`{looked}: {error}")),
            );
        }
    };
    let group = Group(
        child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(nix::unistd::Pid::from_raw),
    );
    let (Some(stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return CallOutcome::failed(evidence().with_output("could not read the CLI's output"));
    };
    let stdin = child.stdin.take();
    let mut seen = Seen {
        observer,
        secrets: &secrets,
        raw_secrets: &raw_secrets,
        text: String::new(),
        work: String::new(),
        errors: Vec::new(),
        notes: Vec::new(),
        status: None,
        failed: false,
        retrying: false,
        done: None,
    };
    // Set once the events are read: what still writes the prompt or reads
    // stderr then has `GRACE` to finish (a process that left the group can
    // hold a pipe open for ever).
    let (finished, _) = tokio::sync::watch::channel(false);
    let after_grace = || {
        let mut finished = finished.subscribe();
        async move {
            let _ = finished.wait_for(|done| *done).await;
            tokio::time::sleep(GRACE).await;
        }
    };
    let give_prompt = async {
        if let Some(mut stdin) = stdin {
            // A CLI that exits without reading its input is not an error here.
            tokio::select! {
                _ = stdin.write_all(prompt.as_bytes()) => {}
                () = after_grace() => {}
            }
        }
    };
    let read_errors = async {
        // The first 64 KiB are kept; the rest is read and dropped, so a CLI
        // that writes much to stderr never blocks on it.
        let mut kept = Vec::new();
        let mut buffer = [0_u8; 8_192];
        let grace = after_grace();
        tokio::pin!(grace);
        loop {
            tokio::select! {
                read = stderr.read(&mut buffer) => match read {
                    Ok(0) | Err(_) => break,
                    Ok(read) => {
                        let room = MAX_STDERR_BYTES.saturating_sub(kept.len());
                        kept.extend_from_slice(&buffer[..read.min(room)]);
                    }
                },
                () = &mut grace => break,
            }
        }
        String::from_utf8_lossy(&kept).into_owned()
    };
    let read_events = async {
        let mut lines = BufReader::new(stdout);
        let mut line = Vec::new();
        let mut deadline = Instant::now() + timeouts.first_byte();
        loop {
            // Once the CLI has given its verdict, it has `GRACE` to exit.
            if seen.verdict() {
                deadline = deadline.min(Instant::now() + GRACE);
            }
            line.clear();
            match timeout_at(deadline, lines.read_until(b'\n', &mut line)).await {
                Err(_elapsed) if seen.verdict() => return End::Lingered,
                Err(_elapsed) => return End::TimedOut,
                Ok(Err(error)) => return End::Unreadable(error.to_string()),
                Ok(Ok(0)) => break,
                Ok(Ok(_)) => {
                    deadline = Instant::now() + timeouts.idle();
                    let text = String::from_utf8_lossy(&line);
                    let text = seen.scrub(text.strip_suffix('\n').unwrap_or(&text));
                    if text.trim().is_empty() && cli.preset != CliPreset::Generic {
                        continue;
                    }
                    for said in cli.preset.read(&text) {
                        seen.take(said);
                    }
                    if seen.retrying {
                        return End::Stopped;
                    }
                }
            }
        }
        match timeout_at(deadline.min(Instant::now() + GRACE), child.wait()).await {
            Ok(Ok(status)) => End::Exited(status),
            Ok(Err(error)) => End::Unreadable(error.to_string()),
            Err(_elapsed) if seen.verdict() => End::Lingered,
            Err(_elapsed) => End::TimedOut,
        }
    };
    let read_events = async {
        let end = read_events.await;
        // Whatever the CLI left running goes with it (and so its ends of the
        // pipes: the prompt's writer and stderr's reader finish).
        group.kill();
        let _ = finished.send(true);
        end
    };
    let ((), end, stderr) = tokio::join!(give_prompt, read_events, read_errors);
    let stderr = seen.scrub(&stderr);
    outcome(seen, end, &stderr, evidence(), cli.preset)
}

fn outcome(
    seen: Seen<'_>,
    end: End,
    stderr: &str,
    evidence: Evidence,
    preset: CliPreset,
) -> CallOutcome {
    // A structured CLI answers only with a verdict of success: a run that
    // printed no events (a wrong flag, a help text) is a failure.
    let exited_well = match &end {
        End::Exited(status) => status.success(),
        End::Lingered => true,
        _ => false,
    };
    let answered =
        exited_well && !seen.failed && (preset == CliPreset::Generic || seen.done.is_some());
    if answered {
        let mut text = seen.text;
        if text.is_empty()
            && let Some(Some(answer)) = seen.done
        {
            seen.observer.text(&answer);
            text = answer;
        }
        return CallOutcome::Answered {
            text,
            stop: StopReason::End,
            tool_calls: Vec::new(),
        };
    }
    // The same words often come twice (a CLI's error event, then its verdict).
    let mut output: Vec<String> = Vec::new();
    for line in seen.errors.into_iter().chain(seen.notes) {
        if !line.is_empty() && !output.contains(&line) {
            output.push(line);
        }
    }
    if !stderr.trim().is_empty() {
        output.push(stderr.trim_end().to_owned());
    }
    if matches!(end, End::Exited(ref status) if status.success()) && !seen.failed {
        output.push("it gave no verdict: no event said the run succeeded".to_owned());
    }
    let evidence = match end {
        End::Exited(status) => {
            output.push(match status.code() {
                Some(code) => format!("exited with status {code}"),
                None => "killed by a signal".to_owned(),
            });
            evidence
        }
        End::TimedOut => evidence.with_transport(Transport::Timeout),
        End::Stopped => {
            output.push("stopped: Switchback's policy decides retries, not the CLI".to_owned());
            evidence
        }
        End::Unreadable(error) => {
            output.push(format!("its output could not be read: {error}"));
            evidence
        }
        End::Lingered => {
            output.push("it gave its verdict but did not exit; stopped".to_owned());
            evidence
        }
    };
    let evidence = match seen.status {
        Some(status) => evidence.with_status(status),
        None => evidence,
    };
    CallOutcome::Failed {
        evidence: evidence.with_output(&output.join("\n")),
        partial_output: seen.work,
    }
}
