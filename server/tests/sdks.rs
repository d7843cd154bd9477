//! The official OpenAI and Anthropic Python SDKs (pinned with hashes in
//! `scripts/gateway-sdks/requirements.lock`, installed by `scripts/setup`)
//! against the real binary's gateway, guarded by an admin token and called
//! with a client key, on a loopback mock provider whose answers this test
//! scripts in the order `scripts/gateway-sdks/check.py` calls: a throttle then
//! an answer, an overloaded candidate skipped, a stream cut after its first
//! piece, a tool call, an unknown model, a wrong key, a client that gives up
//! mid-wait.

use std::path::PathBuf;
use std::time::Duration;

use providers::mock::{MockEnd, MockProvider, MockResponse};
use serde_json::{Value, json};

use crate::common::{request_with, serve};

const ADMIN: &str = "sdk-test-admin-token-0123456789";
/// The variable that holds the (mock's) key of the Anthropic candidate.
const MOCK_KEY_ENV: &str = "SWITCHBACK_SDK_TEST_API_KEY";

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A candidate's policy: retry transient failures (briefly) and wait for a
/// stated reset when `patient`; otherwise skip to the next at once.
fn policy(patient: bool) -> Value {
    let hard = json!({"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "skip"});
    let transient = if patient {
        json!({"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 100},
               "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "stop"})
    } else {
        hard.clone()
    };
    json!({"version": 2, "transient": transient, "hard": hard})
}

fn admin(address: &str, method: &str, path: &str, body: &Value) -> Value {
    let bearer = format!("Bearer {ADMIN}");
    let (status, answer) = request_with(
        address,
        method,
        path,
        &[("authorization", bearer.as_str())],
        Some(body),
    );
    assert!(
        (200..300).contains(&status),
        "{method} {path}: {status} {answer}"
    );
    answer
}

/// One SDK's scenarios on a server and mock of their own.
async fn scenarios(sdk: &str) {
    let python = workspace().join("target/gateway-sdks/venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: scripts/setup installs the SDKs",
        python.display()
    );
    let mock = MockProvider::start().await;
    let dir = tempfile::tempdir().unwrap();
    let server = serve(
        dir.path(),
        &[],
        &[
            ("SWITCHBACK_ADMIN_TOKEN", ADMIN),
            (MOCK_KEY_ENV, "sk-ant-mock-key-for-the-sdk-test"),
        ],
    );
    let address = server.address().to_owned();
    let provider_of = |name: &str, kind: &str| {
        let mut provider = json!({"name": name, "kind": kind, "base_url": mock.base_url()});
        if kind == "anthropic" {
            provider["api_key_env"] = json!(MOCK_KEY_ENV);
        }
        admin(&address, "POST", "/api/providers", &provider)["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let provider = |name: &str| provider_of(name, "openai_compatible");
    // A provider each, so that no circuit one opens holds another's calls; tools
    // go to a candidate of the SDK's own protocol.
    let (patient, over, good, cut) = (
        provider("patient"),
        provider("over"),
        provider("good"),
        provider("cut"),
    );
    let tooling = match sdk {
        "anthropic" => provider_of("tooling", "anthropic"),
        _ => provider("tooling"),
    };
    let mut profiles = Vec::new();
    for (name, candidates) in [
        ("patient", vec![(&patient, "m-patient", true)]),
        (
            "fallback",
            vec![(&over, "m-over", false), (&good, "m-good", false)],
        ),
        (
            "cut",
            vec![(&cut, "m-cut", false), (&good, "m-good", false)],
        ),
        ("tools", vec![(&tooling, "m-tools", false)]),
    ] {
        let candidates: Vec<Value> = candidates
            .into_iter()
            .map(|(provider, model, patient)| {
                json!({"provider_id": provider, "model": model,
                "enabled": true, "max_tokens": 64, "policy": policy(patient)})
            })
            .collect();
        let profile = admin(
            &address,
            "POST",
            "/api/profiles",
            &json!({"name": name, "candidates": candidates}),
        );
        profiles.push(profile["id"].as_str().unwrap().to_owned());
    }
    let made = admin(
        &address,
        "POST",
        "/api/client-keys",
        &json!({"name": format!("{sdk} SDK"), "profile_ids": profiles}),
    );
    let key = made["key"].as_str().unwrap().to_owned();

    for response in [
        MockResponse::status(429, &[("retry-after", "1")], r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#),
        MockResponse::reply("Recovered after a throttle"),
        MockResponse::status(529, &[], r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#),
        MockResponse::reply("The second candidate answers"),
        MockResponse::StreamError {
            text_before: "Hel".to_owned(),
            event: r#"{"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}"#.to_owned(),
        },
        tool_call(sdk),
        MockResponse::status(429, &[("retry-after", "30")], r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#),
    ] {
        mock.push(response);
    }
    let output = tokio::process::Command::new(&python)
        .arg(workspace().join("scripts/gateway-sdks/check.py"))
        .arg(sdk)
        .env("SWITCHBACK_URL", format!("http://{address}"))
        .env("SWITCHBACK_CLIENT_KEY", &key)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{sdk}: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    let seen: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let scenarios: Vec<&str> = seen
        .iter()
        .map(|line| line["scenario"].as_str().unwrap())
        .collect();
    assert_eq!(
        scenarios,
        [
            "throttled_then_answered",
            "overloaded_skipped",
            "stream_cut",
            "tool_call",
            "unknown_model",
            "wrong_key",
            "left_while_waiting"
        ],
        "{stdout}"
    );
    assert_eq!(mock.hits(), 7, "each answer scripted was asked for once");
    assert!(
        mock.requests()[5].body["tools"][0]
            .to_string()
            .contains("read_file"),
        "the tools went to the candidate as sent"
    );

    // Each call is a task: the cut one held, the one its client left stopped.
    let bearer = format!("Bearer {ADMIN}");
    let tasks = || {
        let (status, page) = request_with(
            &address,
            "GET",
            "/api/tasks",
            &[("authorization", bearer.as_str())],
            None,
        );
        assert_eq!(status, 200);
        page["tasks"].as_array().unwrap().clone()
    };
    let stopped = testkit::eventually(Duration::from_secs(10), || {
        let tasks = tasks();
        (tasks[0]["route"]["state"] == "stopped").then_some(tasks)
    });
    assert_eq!(stopped.len(), 5, "{stopped:?}");
    assert!(stopped.iter().all(|task| task["kind"] == "gateway"));
    assert_eq!(stopped[0]["route"]["cause"], "cancelled_by_client");
    assert_eq!(stopped[1]["profile_name"], "tools");
    assert_eq!(stopped[1]["route"]["state"], "completed");
    assert_eq!(stopped[2]["profile_name"], "cut");
    assert_eq!(stopped[2]["route"]["state"], "held");
    assert_eq!(stopped[2]["route"]["cause"], "unsafe_effect");
    assert_eq!(stopped[3]["route"]["state"], "completed");
    assert_eq!(stopped[4]["route"]["state"], "completed");
    let answered = seen[0]["id"].as_str().unwrap();
    assert_eq!(stopped[4]["id"], answered, "the answer's id is its task's");
}

/// A candidate's answer that calls `read_file` with `{"path": "a.rs"}`, streamed
/// in the protocol of `sdk`'s own provider.
fn tool_call(sdk: &str) -> MockResponse {
    let chunks = match sdk {
        "anthropic" => {
            let event = |name: &str, data: Value| format!("event: {name}\ndata: {data}\n\n");
            vec![
                event(
                    "message_start",
                    json!({"type": "message_start", "message": {"id": "msg_1",
                      "type": "message", "role": "assistant", "content": [], "model": "m-tools",
                      "usage": {"input_tokens": 9, "output_tokens": 1}}}),
                ),
                event(
                    "content_block_start",
                    json!({"type": "content_block_start", "index": 0,
                      "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {}}}),
                ),
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "input_json_delta", "partial_json": "{\"path\": "}}),
                ),
                event(
                    "content_block_delta",
                    json!({"type": "content_block_delta", "index": 0,
                      "delta": {"type": "input_json_delta", "partial_json": "\"a.rs\"}"}}),
                ),
                event(
                    "content_block_stop",
                    json!({"type": "content_block_stop", "index": 0}),
                ),
                event(
                    "message_delta",
                    json!({"type": "message_delta",
                      "delta": {"stop_reason": "tool_use", "stop_sequence": null}, "usage": {"output_tokens": 12}}),
                ),
                event("message_stop", json!({"type": "message_stop"})),
            ]
        }
        _ => {
            let chunk = |delta: Value, finish: Value| {
                format!(
                    "data: {}\n\n",
                    json!({"id": "c", "object": "chat.completion.chunk", "created": 1,
                        "model": "m-tools", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
                )
            };
            vec![
                chunk(
                    json!({"role": "assistant", "tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                      "function": {"name": "read_file", "arguments": ""}}]}),
                    Value::Null,
                ),
                chunk(
                    json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"a.rs\"}"}}]}),
                    Value::Null,
                ),
                chunk(json!({}), json!("tool_calls")),
                "data: [DONE]\n\n".to_owned(),
            ]
        }
    };
    MockResponse::Events {
        chunks,
        end: MockEnd::Finish,
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_gets_recovery_through_the_gateway() {
    scenarios("openai").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_gets_recovery_through_the_gateway() {
    scenarios("anthropic").await;
}
