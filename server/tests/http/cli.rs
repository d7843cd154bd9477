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
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("claude");
    let lines: String = events
        .iter()
        .map(|event| format!("echo '{}'\n", event.to_string().replace('\'', r"'\''")))
        .collect();
    std::fs::write(&path, format!("#!/bin/sh\ncat > /dev/null\n{lines}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
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
    let limit = "You've hit your limit · resets 3pm (Europe/Berlin)";
    let program = claude_code(
        dir.path(),
        &[
            json!({"type": "assistant", "error": "rate_limit", "message": {"model": "<synthetic>", "role": "assistant", "content": [{"type": "text", "text": limit}]}}),
            json!({"type": "result", "subtype": "success", "is_error": true, "result": limit}),
        ],
    );
    let (provider, profile_id) = provider_and_profile(&api, &program).await;
    let mut stream = Stream::open(&api, None).await;
    let id = start(&api, &profile_id).await;
    // The attempt ends (the route leaves `running`), within a bound.
    tokio::time::timeout(std::time::Duration::from_secs(60), async {
        loop {
            let event = stream.next().await;
            if event.data["task_id"] == id.as_str()
                && event.data["state"] != "running"
                && event.data["state"] != "queued"
            {
                break;
            }
        }
    })
    .await
    .expect("the attempt ended");
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
