//! Agent-CLI providers through the API: made with their settings (checked
//! field by field), stored, and run by the engine as any provider is, a
//! scripted stand-in playing the CLI (`providers/tests/cli.rs` covers each
//! preset's events).

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::events::Stream;
use super::{Api, fields};

/// A stand-in for Claude Code in `dir` that prints `events` (JSON lines).
fn claude_code(dir: &std::path::Path, events: &[Value]) -> String {
    claude_code_by_run(dir, &[events])
}

/// A stand-in for Claude Code in `dir` whose n-th run prints `runs[n - 1]`
/// (the last for any run after), counting its runs in `dir/runs`.
fn claude_code_by_run(dir: &std::path::Path, runs: &[&[Value]]) -> String {
    let echo = |events: &[Value]| -> String {
        events
            .iter()
            .map(|event| format!("echo '{}'\n", event.to_string().replace('\'', r"'\''")))
            .collect()
    };
    let cases: String = runs
        .iter()
        .enumerate()
        .map(|(index, events)| {
            let pattern = if index + 1 == runs.len() {
                "*".to_owned()
            } else {
                (index + 1).to_string()
            };
            format!("{pattern})\n{};;\n", echo(events))
        })
        .collect();
    script(
        dir,
        "claude",
        &format!(
            "cat > /dev/null\nruns=$(( $(cat '{0}/runs' 2>/dev/null || echo 0) + 1 ))\necho $runs > '{0}/runs'\ncase $runs in\n{cases}esac\n",
            dir.display()
        ),
    )
}

/// An executable shell script `name` in `dir` running `body`.
fn script(dir: &std::path::Path, name: &str, body: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

/// How many times the stand-in in `dir` ran.
fn runs(dir: &std::path::Path) -> u32 {
    std::fs::read_to_string(dir.join("runs")).map_or(0, |runs| runs.trim().parse().unwrap())
}

/// Claude Code's usage window, as it prints it (`providers/tests/cli.rs`
/// cites where each event comes from).
fn usage_window() -> Vec<Value> {
    let limit = "You've hit your limit · resets 3pm (Europe/Berlin)";
    vec![
        json!({"type": "assistant", "error": "rate_limit", "message": {"model": "<synthetic>", "role": "assistant", "content": [{"type": "text", "text": limit}]}}),
        json!({"type": "result", "subtype": "success", "is_error": true, "result": limit}),
    ]
}

/// Claude Code's answer.
fn answer(text: &str) -> Vec<Value> {
    vec![
        json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": text}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": text}),
    ]
}

/// The README's recipe: the subscription CLI first, waiting for a usage
/// window that resets within 30 minutes and skipping otherwise, then an API
/// candidate (simulated here). Answers the CLI provider and the profile's id.
async fn recipe(api: &Api, program: &str) -> (Value, Value) {
    let (cli, _) = provider_and_profile(api, program).await;
    let (status, anthropic) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "Anthropic API", "kind": "simulated", "script": [{"reply": "From the API."}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{anthropic}");
    let policy = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 500},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": true, "max_wait_s": 1800}, "on_exhausted": "skip"}});
    let (status, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "subscription first", "candidates": [
                {"provider_id": cli["id"], "model": "sonnet", "enabled": true, "max_tokens": 1000, "policy": policy},
                {"provider_id": anthropic["id"], "model": "claude-sonnet-4-5", "enabled": true, "max_tokens": 1000}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{profile}");
    (cli, profile["id"].clone())
}

/// Sets the clock to `time` on 30 November 2026 in Berlin.
fn berlin(api: &Api, time: &str) {
    // Central European Time: UTC+1 in November.
    let at: jiff::Timestamp = format!("2026-11-30T{time}:00+01:00").parse().unwrap();
    api.clock
        .set(api::Timestamp::from_millis(at.as_millisecond()));
}

async fn task(api: &Api, id: &str) -> Value {
    let (status, task) = api
        .call(Method::GET, &format!("/api/tasks/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::OK, "{task}");
    task
}

/// A `cli` provider running `program` as Claude Code, and a profile of it;
/// answers the provider and the profile's id.
async fn provider_and_profile(api: &Api, program: &str) -> (Value, Value) {
    let (status, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "Claude Code", "kind": "cli", "cli": {
                "preset": "claude_code",
                "command": [program, "-p", "--output-format", "stream-json", "--verbose", "--model", "{model}"],
                "env": ["PATH", "HOME"],
                "time_zone": "Europe/Berlin"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{provider}");
    let (status, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "agent", "candidates": [{"provider_id": provider["id"], "model": "sonnet", "enabled": true, "max_tokens": 1000}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{profile}");
    (provider, profile["id"].clone())
}

async fn start(api: &Api, profile_id: &Value) -> String {
    let (status, task) = api
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"profile_id": profile_id, "prompt": "Fix the build"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    task["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_cli_provider_made_through_the_api_runs_a_task() {
    let api = Api::new().await;
    let dir = tempfile::tempdir().unwrap();
    let program = claude_code(
        dir.path(),
        &[
            json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": "The build is fixed."}]}}),
            json!({"type": "result", "subtype": "success", "is_error": false, "result": "The build is fixed."}),
        ],
    );
    let (provider, profile_id) = provider_and_profile(&api, &program).await;
    assert_eq!(
        (provider["family"].as_str(), provider["base_url"].as_str()),
        (Some("claude_code"), Some("")),
        "the preset's family; no URL"
    );
    assert_eq!(provider["cli"]["command"][0], program.as_str());
    let (_, read_back) = api
        .call(
            Method::GET,
            &format!("/api/providers/{}", provider["id"].as_str().unwrap()),
            None,
        )
        .await;
    assert_eq!(read_back["cli"], provider["cli"], "stored as sent");

    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until(&id, "completed").await;
    let (_, task) = api
        .call(Method::GET, &format!("/api/tasks/{id}"), None)
        .await;
    assert_eq!(task["turns"][0]["answer"], "The build is fixed.");

    // An update that leaves the settings out keeps them.
    let (status, updated) = api
        .call(
            Method::PUT,
            &format!("/api/providers/{}", provider["id"].as_str().unwrap()),
            Some(json!({"name": "Claude", "kind": "cli", "revision": provider["revision"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["cli"], provider["cli"]);
    assert_eq!(updated["family"], "claude_code", "still the preset's");
}

#[tokio::test]
async fn a_usage_window_opens_the_providers_circuit_until_its_reset() {
    let api = Api::new().await;
    let dir = tempfile::tempdir().unwrap();
    let program = claude_code(dir.path(), &usage_window());
    let (provider, profile_id) = provider_and_profile(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until_settled(&id).await;
    let (_, task) = api
        .call(Method::GET, &format!("/api/tasks/{id}"), None)
        .await;
    let attempt = &task["attempts"][0];
    assert_eq!(attempt["code"], "usage_limited", "{attempt}");
    assert_eq!(
        attempt["safe_cause"]
            .as_str()
            .map(|cause| cause.contains("unsafe")),
        Some(false),
        "{attempt}"
    );
    let reset: api::Timestamp = serde_json::from_value(attempt["reset_at"].clone())
        .expect("the reset the CLI printed, read in its zone");
    let provider_id = api::ProviderId::new(provider["id"].as_str().unwrap());
    let circuits = api
        .services
        .store
        .circuits_over(&provider_id, "sonnet")
        .await
        .unwrap();
    assert_eq!(circuits.len(), 1, "{circuits:?}");
    assert_eq!(
        circuits[0].key.model, None,
        "the whole provider closed: {circuits:?}"
    );
    assert_eq!(
        circuits[0].until_ms,
        reset.as_millis(),
        "until the window resets"
    );
}

#[tokio::test]
async fn cli_settings_are_checked_field_by_field_and_only_for_a_cli() {
    let api = Api::new().await;
    for (body, expected) in [
        (
            json!({"name": "a", "kind": "cli"}),
            vec![("cli", "required")],
        ),
        (
            json!({"name": "b", "kind": "anthropic", "base_url": "https://api.anthropic.com", "api_key_env": "ANTHROPIC_API_KEY", "cli": {"preset": "claude_code"}}),
            vec![("cli", "unknown_field")],
        ),
        (
            json!({"name": "c", "kind": "cli", "cli": {"preset": "codex", "command": [""],
                "working_dir": "relative/dir", "env": ["HOME", "GITHUB_TOKEN", "HOME", "not a name"],
                "time_zone": "Berlin time!"}}),
            vec![
                ("cli.command[0]", "required"),
                ("cli.working_dir", "type"),
                ("cli.env[1]", "enum"),
                ("cli.env[2]", "unique"),
                ("cli.env[3]", "type"),
                ("cli.time_zone", "type"),
            ],
        ),
        (
            json!({"name": "d", "kind": "cli", "cli": {"preset": "aider"}}),
            vec![("cli.preset", "enum")],
        ),
        (
            json!({"name": "e", "kind": "cli", "base_url": "http://localhost:1", "api_key_env": "OPENAI_API_KEY",
                "family": "openai", "cli": {"preset": "generic"}}),
            vec![
                ("base_url", "unknown_field"),
                ("api_key_env", "unknown_field"),
                ("cli.command", "required"),
            ],
        ),
        (
            json!({"name": "f", "kind": "cli", "family": "openai", "cli": {"preset": "codex"}}),
            vec![("family", "enum")],
        ),
        (
            // A key pasted into the command would be stored and shown.
            json!({"name": "h", "kind": "cli", "cli": {"preset": "claude_code",
                "command": ["claude", "-p", "--api-key", "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"]}}),
            vec![("cli.command[3]", "type")],
        ),
        (
            // A zone's form is checked everywhere, whether it exists by the server.
            json!({"name": "g", "kind": "cli", "cli": {"preset": "codex", "time_zone": "Mars/Olympus_Mons"}}),
            vec![("cli.time_zone", "not_found")],
        ),
    ] {
        let (status, answer) = api
            .call(Method::POST, "/api/providers", Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}: {answer}");
        let expected: Vec<(String, String)> = expected
            .into_iter()
            .map(|(field, code)| (field.to_owned(), code.to_owned()))
            .collect();
        assert_eq!(fields(&answer), expected, "{body}");
    }
    let (_, listed) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(listed, json!([]), "nothing stored");
}

#[tokio::test]
async fn a_usage_window_past_the_wait_moves_on_to_the_api_candidate() {
    let api = Api::new().await;
    berlin(&api, "10:00");
    let dir = tempfile::tempdir().unwrap();
    let program = claude_code(dir.path(), &usage_window());
    let (_, profile_id) = recipe(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until(&id, "completed").await;
    let task = task(&api, &id).await;
    assert_eq!(task["turns"][0]["answer"], "From the API.");
    let attempts: Vec<(u64, &str, &str)> = task["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|attempt| {
            (
                attempt["candidate_index"].as_u64().unwrap(),
                attempt["outcome"].as_str().unwrap(),
                attempt["code"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        attempts,
        [(0, "failed", "usage_limited"), (1, "answered", "-")],
        "five hours to the window's reset is past the 30 minutes the policy waits"
    );
    assert_eq!(runs(dir.path()), 1, "the CLI ran once");
}

#[tokio::test]
async fn a_usage_window_near_enough_is_waited_for_then_the_cli_runs_again() {
    let api = Api::new().await;
    berlin(&api, "14:45");
    let dir = tempfile::tempdir().unwrap();
    let program = claude_code_by_run(dir.path(), &[&usage_window(), &answer("Fixed.")]);
    let (_, profile_id) = recipe(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until(&id, "waiting_for_reset").await;

    // The route view names the window, its provider and the zone to show its
    // reset in.
    let waiting = task(&api, &id).await;
    let reset: api::Timestamp =
        serde_json::from_value(waiting["route"]["deadline"].clone()).unwrap();
    assert_eq!(
        reset.as_millis() - server::clock::Clock::now(&*api.clock).as_millis(),
        15 * 60 * 1_000,
        "15:00 in Berlin, 15 minutes on"
    );
    assert_eq!(
        (
            &waiting["candidates"][0]["provider"],
            &waiting["candidates"][0]["time_zone"]
        ),
        (&json!("Claude Code"), &json!("Europe/Berlin"))
    );
    assert!(
        waiting["candidates"][1].get("time_zone").is_none(),
        "not a CLI"
    );
    let page = api
        .send(
            axum::http::Request::get(format!("/tasks/{id}"))
                .header(axum::http::header::HOST, super::HOST)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    assert!(
        page.text
            .replace("<!>", "")
            .contains("Claude Code usage window resets at <time datetime=\"2026-11-30T14:00:00Z\">14:00:00 UTC</time> (<span role=\"timer\" class=\"countdown\">in 15 min</span>)"),
        "{}",
        page.text
    );
    assert_eq!(runs(dir.path()), 1, "nothing runs during the wait");

    api.clock.advance_ms(15 * 60 * 1_000);
    stream.until(&id, "completed").await;
    let done = task(&api, &id).await;
    assert_eq!(done["turns"][0]["answer"], "Fixed.");
    assert_eq!(done["attempts"][1]["candidate_index"], 0, "the CLI again");
    assert_eq!(runs(dir.path()), 2);
}

#[tokio::test]
async fn work_before_a_failure_holds_the_route_and_the_cli_never_runs_again() {
    let api = Api::new().await;
    let dir = tempfile::tempdir().unwrap();
    let program = claude_code(
        dir.path(),
        &[
            json!({"type": "assistant", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_1", "name": "Edit", "input": {"file_path": "src/lib.rs"}}]}}),
            json!({"type": "result", "subtype": "success", "is_error": true, "api_error_status": 529,
                "result": "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}),
        ],
    );
    let (_, profile_id) = recipe(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until(&id, "held").await;
    let held = task(&api, &id).await;
    assert_eq!(held["route"]["cause"], "unsafe_effect", "{held}");
    assert_eq!(
        held["attempts"][0]["code"], "overloaded",
        "a transient failure, yet held"
    );
    // Nothing comes due: the hold waits for a person.
    api.clock.advance_ms(3_600_000);
    let later = task(&api, &id).await;
    assert_eq!(later["route"]["state"], "held");
    assert_eq!(later["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(runs(dir.path()), 1, "the edit was never made twice");
}

#[tokio::test]
async fn stopping_a_task_kills_its_cli_and_what_the_cli_started() {
    let api = Api::new().await;
    let dir = tempfile::tempdir().unwrap();
    let program = script(
        dir.path(),
        "claude",
        &format!(
            "cat > /dev/null\necho $$ > '{0}/cli'\nsleep 300 &\necho $! > '{0}/helper'\n\
             echo '{{\"type\":\"system\",\"subtype\":\"init\",\"model\":\"sonnet\"}}'\nwait\n",
            dir.path().display()
        ),
    );
    let (_, profile_id) = provider_and_profile(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    stream.until(&id, "running").await;
    // Running once its helper started.
    // A pid once its file is written whole (the shell creates it first).
    let pid = |name: &str| {
        std::fs::read_to_string(dir.path().join(name))
            .ok()
            .filter(|pid| pid.ends_with('\n') && pid.trim().parse::<u32>().is_ok())
    };
    tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while pid("helper").is_none() {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the CLI started its helper");
    let (cli, helper) = (pid("cli").unwrap(), pid("helper").unwrap());
    assert!(alive(&cli) && alive(&helper), "both run");

    let running = task(&api, &id).await;
    let (status, body) = api
        .call(
            Method::POST,
            &format!("/api/tasks/{id}/actions"),
            Some(json!({"action": "stop", "generation": running["route"]["generation"]})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["route"]["state"], "stopped");
    assert!(gone(&cli).await, "the CLI {cli} was killed");
    assert!(
        gone(&helper).await,
        "its helper {helper} was killed with it"
    );
}

/// Whether the process `pid` runs: it exists, and is no zombie (killed,
/// waiting to be reaped by whoever adopted it).
fn alive(pid: &str) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.trim())).unwrap_or_default();
    !stat.is_empty() && stat.split_whitespace().nth(2) != Some("Z")
}

/// Whether the process `pid` is gone, looked at a bounded number of times.
async fn gone(pid: &str) -> bool {
    for _ in 0..500 {
        if !alive(pid) {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(4)).await;
    }
    false
}
