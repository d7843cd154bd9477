//! The official OpenAI and Anthropic Python SDKs (pinned with hashes in
//! `scripts/gateway-sdks/requirements.lock`, installed by `scripts/setup`)
//! against the real binary's gateway, guarded by an admin token and called
//! with a client key, on a loopback mock provider whose answers this test
//! scripts in the order `scripts/gateway-sdks/check.py` calls: a throttle then
//! an answer, an overloaded candidate skipped, a stream cut after its first
//! piece, an unknown model, a wrong key, a client that gives up mid-wait.

use std::path::PathBuf;
use std::time::Duration;

use providers::mock::{MockProvider, MockResponse};
use serde_json::{Value, json};

use crate::common::{request_with, serve};

const ADMIN: &str = "sdk-test-admin-token-0123456789";

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
    let server = serve(dir.path(), &[], &[("SWITCHBACK_ADMIN_TOKEN", ADMIN)]);
    let address = server.address().to_owned();
    let provider = |name: &str| {
        admin(
            &address,
            "POST",
            "/api/providers",
            &json!({"name": name, "kind": "openai_compatible", "base_url": mock.base_url()}),
        )["id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // A provider each, so that no circuit one opens holds another's calls.
    let (patient, over, good, cut) = (
        provider("patient"),
        provider("over"),
        provider("good"),
        provider("cut"),
    );
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
            "unknown_model",
            "wrong_key",
            "left_while_waiting"
        ],
        "{stdout}"
    );
    assert_eq!(mock.hits(), 6, "each answer scripted was asked for once");

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
    assert_eq!(stopped.len(), 4, "{stopped:?}");
    assert!(stopped.iter().all(|task| task["kind"] == "gateway"));
    assert_eq!(stopped[0]["route"]["cause"], "cancelled_by_client");
    assert_eq!(stopped[1]["profile_name"], "cut");
    assert_eq!(stopped[1]["route"]["state"], "held");
    assert_eq!(stopped[1]["route"]["cause"], "unsafe_effect");
    assert_eq!(stopped[2]["route"]["state"], "completed");
    assert_eq!(stopped[3]["route"]["state"], "completed");
    let answered = seen[0]["id"].as_str().unwrap();
    assert_eq!(stopped[3]["id"], answered, "the answer's id is its task's");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openai_sdk_gets_recovery_through_the_gateway() {
    scenarios("openai").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_anthropic_sdk_gets_recovery_through_the_gateway() {
    scenarios("anthropic").await;
}
