//! Agent CLIs as providers, each played by a small shell script standing in for
//! the real CLI: it prints the events the CLI prints, and writes down what it was
//! given (arguments, standard input, environment) for the test to read.
//!
//! Where the events' shapes come from:
//! - Claude Code: the Agent SDK's message types (`sdk.d.ts` in the npm package
//!   `@anthropic-ai/claude-agent-sdk`: `SDKAssistantMessage.error`,
//!   `SDKAPIRetryMessage`, `SDKResultSuccess`/`SDKResultError`), and lines quoted
//!   in anthropics/claude-code issues #38673 (init, assistant, result), #79500
//!   (an API error as `"subtype":"success"` with `is_error`), #19912 (an error
//!   result with `errors`); the usage-window wording as the CLI prints it ("You've
//!   hit your limit · resets 3pm (Europe/Berlin)").
//! - Codex: `codex-rs/exec/src/exec_events.rs` and `docs/exec.md` in openai/codex
//!   (thread, turn and item events), openai/codex#32984 ("Reconnecting... n/m"
//!   then `turn.failed`), `codex-rs/protocol/src/error.rs` (the usage-limit words).
//! - Gemini CLI: `packages/core/src/output/types.ts` and the snapshots in
//!   `packages/cli/src/__snapshots__/nonInteractiveCli.test.ts.snap` in
//!   google-gemini/gemini-cli (init, message deltas, tool_use, result), and
//!   `validateNonInterActiveAuth.ts` (a failed login: stderr only, exit 41).

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use catalogue::Transport;
use providers::{
    Adapter, CallOutcome, CallRequest, CliConfig, CliPreset, Message, Observer, ProviderConfig,
    StopReason, Timeouts,
};

/// A fake CLI: `script` as an executable `/bin/sh` script in `dir`.
fn fake(dir: &Path, script: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("cli");
    std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

/// Writes down the arguments, standard input and environment the CLI got.
const RECORD: &str = r#"printf '%s\n' "$@" > "$(dirname "$0")/args"
cat > "$(dirname "$0")/stdin"
env > "$(dirname "$0")/env""#;

/// A provider running `program` with `preset`'s arguments, PATH passed through.
fn provider(preset: CliPreset, program: &Path, timeouts: Timeouts) -> Adapter {
    // The preset's arguments after the fake program (the generic preset has none).
    let mut command: Vec<String> = preset.command().into_iter().skip(1).collect();
    command.insert(0, program.display().to_string());
    let cli = CliConfig {
        env: vec!["PATH".to_owned()],
        time_zone: Some("Europe/Berlin".to_owned()),
        command,
        ..CliConfig::preset(preset)
    };
    let config = ProviderConfig {
        kind: policy::ProviderKind::Cli,
        cli: Some(cli),
        timeouts,
        ..ProviderConfig::simulated(Vec::new())
    };
    Adapter::new(config, providers::http_client())
}

fn request(prompt: &str) -> CallRequest {
    CallRequest {
        model: "model-x".into(),
        max_tokens: 100,
        messages: vec![Message::user(prompt)],
        call_index: 0,
        client: None,
    }
}

#[derive(Default)]
struct Pieces(Mutex<Vec<String>>);

impl Observer for Pieces {
    fn text(&self, piece: &str) {
        self.0.lock().unwrap().push(piece.to_owned());
    }
}

async fn run(preset: CliPreset, script: &str) -> (CallOutcome, Vec<String>, tempfile::TempDir) {
    run_with(preset, script, Timeouts::default()).await
}

async fn run_with(
    preset: CliPreset,
    script: &str,
    timeouts: Timeouts,
) -> (CallOutcome, Vec<String>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let program = fake(dir.path(), script);
    let pieces = Pieces::default();
    let outcome = provider(preset, &program, timeouts)
        .call_observed(&request("Fix the test"), &pieces)
        .await;
    (outcome, pieces.0.into_inner().unwrap(), dir)
}

fn failed(outcome: CallOutcome) -> (catalogue::Evidence, String) {
    match outcome {
        CallOutcome::Failed {
            evidence,
            partial_output,
        } => (evidence, partial_output),
        other => panic!("expected a failure, got {other:?}"),
    }
}

/// The evidence of a failure before any work (safe to recover).
fn safe_failure(outcome: CallOutcome) -> catalogue::Evidence {
    let (evidence, partial) = failed(outcome);
    assert_eq!(partial, "", "nothing was done: safe to recover");
    evidence
}

fn answered(outcome: CallOutcome) -> String {
    match outcome {
        CallOutcome::Answered {
            text,
            stop,
            tool_calls,
        } => {
            assert_eq!((stop, tool_calls), (StopReason::End, Vec::new()));
            text
        }
        other => panic!("expected an answer, got {other:?}"),
    }
}

fn read(dir: &tempfile::TempDir, name: &str) -> String {
    std::fs::read_to_string(dir.path().join(name)).unwrap()
}

/// What the catalogue makes of the evidence, observed at a fixed time.
fn verdict(evidence: &catalogue::Evidence) -> policy::Classification {
    catalogue::classify(evidence, NOW_MS).classification
}

const NOW_MS: i64 = 1_796_000_000_000;

#[tokio::test]
async fn claude_code_answers_with_its_messages_given_the_prompt_on_stdin_and_no_retries_of_its_own()
{
    let (outcome, pieces, dir) = run(
        CliPreset::ClaudeCode,
        &format!(
            r#"{RECORD}
echo '{{"type":"system","subtype":"init","cwd":"/w","session_id":"s","model":"model-x"}}'
echo '{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"Looking."}}]}}}}'
echo '{{"type":"assistant","message":{{"role":"assistant","content":[{{"type":"text","text":"Fixed."}}]}}}}'
echo '{{"type":"result","subtype":"success","is_error":false,"result":"Fixed.","usage":{{"input_tokens":3,"output_tokens":6}}}}'"#
        ),
    )
    .await;
    assert_eq!(answered(outcome), "Looking.\n\nFixed.");
    assert_eq!(
        pieces.concat(),
        "Looking.\n\nFixed.",
        "passed on as it came"
    );
    assert_eq!(
        read(&dir, "args").lines().collect::<Vec<_>>(),
        [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--model",
            "model-x"
        ]
    );
    assert_eq!(read(&dir, "stdin"), "Fix the test");
    let env = read(&dir, "env");
    assert!(
        env.lines().any(|line| line == "CLAUDE_CODE_MAX_RETRIES=0"),
        "{env}"
    );
    assert!(
        env.lines().any(|line| line.starts_with("PATH=")),
        "passed through: {env}"
    );
    assert!(
        !env.contains("CARGO_MANIFEST_DIR"),
        "everything not passed through is cleared: {env}"
    );
}

#[tokio::test]
async fn a_usage_window_before_any_work_is_safe_and_read_with_its_reset() {
    // An API error comes as a synthetic assistant message with `error`, then a
    // result that says "success" with `is_error` (and, as reported, exit 0).
    let (outcome, pieces, _dir) = run(
        CliPreset::ClaudeCode,
        r#"cat > /dev/null
echo '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You'"'"'ve hit your limit · resets 3pm (Europe/Berlin)"}]},"error":"rate_limit"}'
echo '{"type":"result","subtype":"success","is_error":true,"result":"You'"'"'ve hit your limit · resets 3pm (Europe/Berlin)"}'"#,
    )
    .await;
    assert!(pieces.is_empty(), "an error's words are not the answer");
    let evidence = safe_failure(outcome);
    assert_eq!(evidence.provider, "claude_code");
    assert_eq!(evidence.time_zone.as_deref(), Some("Europe/Berlin"));
    let output = evidence.output.clone().unwrap();
    assert_eq!(
        output.matches("hit your limit").count(),
        1,
        "the same words once: {output}"
    );
    let verdict = verdict(&evidence);
    assert_eq!(
        verdict.code,
        policy::SemanticCode::UsageLimited,
        "{verdict:?}"
    );
    assert!(verdict.reset_at_ms.is_some(), "{verdict:?}");
}

#[tokio::test]
async fn a_retry_of_its_own_is_the_failure_and_the_whole_group_is_stopped() {
    // The CLI starts a helper, says it will retry a 529, then would wait.
    let (outcome, _, dir) = run(
        CliPreset::ClaudeCode,
        r#"cat > /dev/null
sleep 300 &
echo $! > "$(dirname "$0")/helper"
echo '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":10,"retry_delay_ms":510,"error_status":529,"error":"overloaded"}'
wait"#,
    )
    .await;
    let evidence = safe_failure(outcome);
    assert_eq!(evidence.status, Some(529));
    assert!(
        evidence
            .output
            .as_deref()
            .unwrap()
            .contains("about to retry it on its own"),
        "{evidence:?}"
    );
    assert_eq!(verdict(&evidence).code, policy::SemanticCode::Overloaded);
    let helper = read(&dir, "helper");
    assert!(
        gone(helper.trim()).await,
        "the helper {helper} was killed with the CLI"
    );
}

/// Whether the process `pid` is gone: killed processes are reaped by whoever
/// adopts them, so this looks a bounded number of times.
async fn gone(pid: &str) -> bool {
    for _ in 0..500 {
        let status = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        // Gone, or a zombie: killed, waiting to be reaped.
        if status.is_empty() || status.split_whitespace().nth(2) == Some("Z") {
            return true;
        }
        tokio::task::yield_now().await;
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    false
}

#[tokio::test]
async fn a_failure_after_work_carries_the_work_and_so_is_unsafe() {
    let (outcome, _, _dir) = run(
        CliPreset::ClaudeCode,
        r#"cat > /dev/null
echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Editing."},{"type":"tool_use","id":"t1","name":"Edit","input":{"file_path":"src/lib.rs"}}]}}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":500,"result":"API Error: 500 Internal server error"}'
exit 1"#,
    )
    .await;
    let (evidence, partial) = failed(outcome);
    assert_eq!(
        partial,
        "Editing.\n[tool call Edit {\"file_path\":\"src/lib.rs\"}]"
    );
    assert_eq!(evidence.status, Some(500));
    assert!(
        evidence
            .output
            .as_deref()
            .unwrap()
            .contains("exited with status 1")
    );
}

#[tokio::test]
async fn codex_answers_with_its_last_turn_and_survives_a_warning() {
    let (outcome, _, dir) = run(
        CliPreset::Codex,
        &format!(
            r#"{RECORD}
echo '{{"type":"thread.started","thread_id":"t"}}'
echo '{{"type":"turn.started"}}'
echo '{{"type":"item.completed","item":{{"id":"item_0","type":"error","message":"model rerouted"}}}}'
echo '{{"type":"item.completed","item":{{"id":"item_1","type":"reasoning","text":"Thinking"}}}}'
echo '{{"type":"item.completed","item":{{"id":"item_2","type":"agent_message","text":"Done."}}}}'
echo '{{"type":"turn.completed","usage":{{"input_tokens":10,"cached_input_tokens":0,"output_tokens":2}}}}'"#
        ),
    )
    .await;
    assert_eq!(answered(outcome), "Done.");
    assert_eq!(read(&dir, "stdin"), "Fix the test");
    assert_eq!(
        read(&dir, "args").lines().collect::<Vec<_>>(),
        ["exec", "--json", "--model", "model-x"]
    );
}

#[tokio::test]
async fn codex_reconnecting_on_its_own_is_stopped_and_a_failed_turn_is_read() {
    let (outcome, _, _dir) = run(
        CliPreset::Codex,
        r#"cat > /dev/null
echo '{"type":"turn.started"}'
echo '{"type":"error","message":"Reconnecting... 1/5 (stream disconnected before completion: stream closed before response.completed)"}'
sleep 300"#,
    )
    .await;
    let evidence = safe_failure(outcome);
    assert!(
        evidence
            .output
            .as_deref()
            .unwrap()
            .starts_with("Reconnecting... 1/5")
    );

    let (outcome, _, _dir) = run(
        CliPreset::Codex,
        r#"cat > /dev/null
echo '{"type":"error","message":"You'"'"'ve hit your usage limit. Upgrade to Pro or try again in 2 hours 5 minutes."}'
echo '{"type":"turn.failed","error":{"message":"You'"'"'ve hit your usage limit. Upgrade to Pro or try again in 2 hours 5 minutes."}}'
exit 1"#,
    )
    .await;
    let evidence = safe_failure(outcome);
    assert_eq!(evidence.provider, "codex");
    let verdict = verdict(&evidence);
    assert_eq!(
        verdict.code,
        policy::SemanticCode::UsageLimited,
        "{verdict:?}"
    );
    assert_eq!(
        verdict.reset_at_ms,
        Some(NOW_MS + (2 * 60 + 5) * 60 * 1_000)
    );
}

#[tokio::test]
async fn gemini_streams_pieces_takes_the_prompt_as_an_argument_and_reads_its_result() {
    let (outcome, pieces, dir) = run(
        CliPreset::GeminiCli,
        &format!(
            r#"{RECORD}
echo '{{"type":"init","session_id":"s","model":"model-x"}}'
echo '{{"type":"message","role":"user","content":"Fix the test"}}'
echo '{{"type":"message","role":"assistant","content":"Fi","delta":true}}'
echo '{{"type":"message","role":"assistant","content":"xed.","delta":true}}'
echo '{{"type":"result","status":"success","stats":{{"total_tokens":3}}}}'"#
        ),
    )
    .await;
    assert_eq!(answered(outcome), "Fixed.");
    assert_eq!(pieces, ["Fi", "xed."]);
    assert_eq!(
        read(&dir, "args").lines().collect::<Vec<_>>(),
        [
            "--output-format",
            "stream-json",
            "--model",
            "model-x",
            "--prompt=Fix the test"
        ]
    );
    assert_eq!(read(&dir, "stdin"), "", "no prompt on stdin");

    let (outcome, _, _dir) = run(
        CliPreset::GeminiCli,
        r#"echo '{"type":"error","severity":"error","message":"retrying"}'
echo '{"type":"result","status":"error","error":{"type":"unknown","message":"[API Error: You exceeded your current quota, please check your plan and billing details. (Status: RESOURCE_EXHAUSTED)]"}}'
exit 1"#,
    )
    .await;
    let (evidence, partial) = failed(outcome);
    assert_eq!(
        (partial.as_str(), evidence.provider.as_str()),
        ("", "gemini_cli")
    );
    assert!(
        evidence
            .output
            .as_deref()
            .unwrap()
            .contains("RESOURCE_EXHAUSTED")
    );

    // A login that fails prints no event: its words are on stderr.
    let (outcome, _, _dir) = run(
        CliPreset::GeminiCli,
        r#"echo 'Please set an Auth method in your settings or specify one of the following environment variables before running: GEMINI_API_KEY' >&2
exit 41"#,
    )
    .await;
    let evidence = safe_failure(outcome);
    let output = evidence.output.unwrap();
    assert!(
        output.contains("GEMINI_API_KEY") && output.ends_with("exited with status 41"),
        "{output}"
    );
}

#[tokio::test]
async fn a_generic_command_answers_with_its_stdout_and_any_stdout_is_work() {
    let (outcome, _, _dir) = run(CliPreset::Generic, "cat; echo; echo done").await;
    assert_eq!(answered(outcome), "Fix the test\ndone\n");
    let (outcome, _, _dir) = run(CliPreset::Generic, "echo half; echo 'boom' >&2; exit 3").await;
    let (evidence, partial) = failed(outcome);
    assert_eq!(partial, "half\n");
    assert_eq!(
        evidence.output.as_deref(),
        Some("boom\nexited with status 3")
    );
    let (outcome, _, _dir) = run(CliPreset::Generic, "echo 'no such model' >&2; exit 2").await;
    assert_eq!(failed(outcome).1, "", "nothing printed: safe");
}

#[tokio::test]
async fn a_missing_program_fails_before_anything_runs() {
    let config = ProviderConfig {
        kind: policy::ProviderKind::Cli,
        cli: Some(CliConfig {
            command: vec!["/nonexistent/claude".into(), "-p".into()],
            ..CliConfig::preset(CliPreset::ClaudeCode)
        }),
        ..ProviderConfig::simulated(Vec::new())
    };
    let outcome = Adapter::new(config, providers::http_client())
        .call(&request("hi"))
        .await;
    let evidence = safe_failure(outcome);
    assert!(
        evidence
            .output
            .as_deref()
            .unwrap()
            .starts_with("could not start `/nonexistent/claude`"),
        "{evidence:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_cli_silent_past_its_first_event_timeout_is_stopped() {
    let timeouts = Timeouts {
        first_byte_ms: 30_000,
        ..Timeouts::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let program = fake(
        dir.path(),
        r#"sleep 300 &
echo $! > "$(dirname "$0")/helper.tmp"
mv "$(dirname "$0")/helper.tmp" "$(dirname "$0")/helper"
wait"#,
    );
    let helper = dir.path().join("helper");
    let (adapter, asked) = (
        provider(CliPreset::ClaudeCode, &program, timeouts),
        request("Fix the test"),
    );
    let call = adapter.call(&asked);
    // The clock is the test's, and moves only when the runtime is idle: kept
    // busy until the CLI has started its helper, so the timeout comes after.
    let started = async {
        while !helper.exists() {
            tokio::task::yield_now().await;
        }
    };
    let (outcome, ()) = tokio::join!(call, started);
    let (evidence, partial) = failed(outcome);
    assert_eq!(
        (evidence.transport, partial.as_str()),
        (Some(Transport::Timeout), "")
    );
    let helper = std::fs::read_to_string(&helper).unwrap();
    assert!(
        gone(helper.trim()).await,
        "the helper {helper} was killed with the CLI"
    );
}

#[tokio::test]
async fn a_structured_cli_that_exits_without_a_verdict_did_not_answer() {
    // A flag it does not know: a help text, exit 0, no events.
    let (outcome, _, _dir) = run(
        CliPreset::ClaudeCode,
        "cat > /dev/null; echo 'Usage: claude [options] [command] [prompt]'",
    )
    .await;
    let evidence = safe_failure(outcome);
    let output = evidence.output.unwrap();
    assert!(
        output.contains("Usage: claude") && output.contains("gave no verdict"),
        "{output}"
    );
}

#[tokio::test]
async fn much_written_to_stderr_neither_blocks_the_cli_nor_fills_the_evidence() {
    // Far more than a pipe holds, then the answer.
    let (outcome, _, _dir) = run(
        CliPreset::Generic,
        "head -c 300000 /dev/zero | tr '\\0' x >&2; echo ok",
    )
    .await;
    assert_eq!(answered(outcome), "ok\n");
    let (outcome, _, _dir) = run(
        CliPreset::Generic,
        "head -c 300000 /dev/zero | tr '\\0' x >&2; exit 1",
    )
    .await;
    let output = failed(outcome).0.output.unwrap();
    assert!(output.len() < 70_000, "{} bytes kept", output.len());
}
