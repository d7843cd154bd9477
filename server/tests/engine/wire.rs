//! Both wire formats through the engine, over loopback: errors as status and body,
//! as SSE events before and after the first token, hangs, dropped connections and
//! resets with `retry-after`. The key is read from its variable and appears in no
//! stored evidence.

use policy::route::{RouteCause, RouteState};
use policy::{Class, SemanticCode};
use providers::mock::{MockProvider, MockResponse, MockStop};
use serde_json::json;

use crate::engine::harness::*;

const KEY: &str = "sk-mock-0123456789abcdef";

/// What the mock answers, and what the route does with it.
struct Row {
    name: &'static str,
    responses: Vec<MockResponse>,
    /// The state the route comes to rest in first, and its code.
    settles: RouteState,
    code: Option<SemanticCode>,
    cause: Option<RouteCause>,
}

fn rows(kind: &str) -> Vec<Row> {
    let (throttled, overloaded_event, invalid) = if kind == "anthropic" {
        (
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed the rate limit for your organization of 50 requests per minute."}}"#,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}"#,
        )
    } else {
        (
            r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
            r#"{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}}"#,
            r#"{"error":{"message":"Invalid value for 'messages'.","type":"invalid_request_error","param":"messages","code":null}}"#,
        )
    };
    vec![
        Row {
            name: "a reply",
            responses: vec![MockResponse::Reply {
                text: "Hello there".into(),
                stop: MockStop::End,
            }],
            settles: RouteState::Completed,
            code: None,
            cause: None,
        },
        Row {
            name: "429 with retry-after: a reset wait",
            responses: vec![MockResponse::Error {
                status: 429,
                headers: vec![("retry-after".into(), "7".into())],
                body: throttled.into(),
            }],
            settles: RouteState::WaitingForReset,
            code: Some(SemanticCode::RateLimited),
            cause: None,
        },
        Row {
            name: "an error event before the first token: a retry",
            responses: vec![MockResponse::StreamError {
                text_before: String::new(),
                event: overloaded_event.into(),
            }],
            settles: RouteState::RetryWait,
            code: None,
            cause: None,
        },
        Row {
            name: "an error event after text: held",
            responses: vec![MockResponse::StreamError {
                text_before: "Half an".into(),
                event: overloaded_event.into(),
            }],
            settles: RouteState::Held,
            code: None,
            cause: Some(RouteCause::UnsafeEffect),
        },
        Row {
            name: "a connection dropped after text: held",
            responses: vec![MockResponse::CloseMidStream {
                text_before: "Half an".into(),
            }],
            settles: RouteState::Held,
            code: None,
            cause: Some(RouteCause::UnsafeEffect),
        },
        Row {
            name: "a stream that goes quiet before any text: a timeout, retried",
            responses: vec![MockResponse::HangAfterHeaders],
            settles: RouteState::RetryWait,
            code: Some(SemanticCode::Timeout),
            cause: None,
        },
        Row {
            name: "400 invalid request: stopped",
            responses: vec![MockResponse::Error {
                status: 400,
                headers: vec![],
                body: invalid.into(),
            }],
            settles: RouteState::Stopped,
            code: None,
            cause: Some(RouteCause::Unrecoverable),
        },
    ]
}

#[tokio::test]
async fn both_wire_formats_through_the_engine() {
    // SAFETY: set before any other thread of this test process reads the environment
    // (nextest runs each test in its own process; the runtime here is one thread).
    unsafe { std::env::set_var("MOCK_API_KEY", KEY) };
    let h = Harness::new().await;
    let mut failures = Vec::new();
    for kind in ["anthropic", "openai"] {
        for row in rows(kind) {
            let mock = MockProvider::start().await;
            let provider = h
                .provider(json!({"name": format!("{kind} {}", uuid()), "kind": kind,
                    "base_url": mock.base_url(), "api_key_env": "MOCK_API_KEY",
                    "timeouts": {"connect_ms": 2000, "first_byte_ms": 2000, "idle_ms": 300}}))
                .await;
            let profile = h.profile(&[(&provider, "model-x", defaults())]).await;
            for response in row.responses {
                mock.push(response);
            }
            let task = h.task(&profile).await;
            let route = h.wait(&task.id, row.settles).await;
            let view = h.view(&task.id).await;
            let got = (route.state, route.cause, row.code.and(route.code));
            let want = (row.settles, row.cause, row.code);
            if got != want {
                failures.push(format!(
                    "{kind}, {}: got {got:?}, want {want:?}: {:#?}",
                    row.name, view.attempts
                ));
                continue;
            }
            // The request carried the key; no stored evidence does.
            let request = &mock.requests()[0];
            let auth = request.auth.as_ref().expect("an auth header");
            assert_eq!(auth.credential_length, KEY.len(), "{kind}");
            let stored = h.services.store.get_task(&task.id).await.unwrap();
            let evidence = serde_json::to_string(
                &stored
                    .attempts
                    .iter()
                    .map(|a| a.end.as_ref().and_then(|e| e.evidence.clone()))
                    .collect::<Vec<_>>(),
            )
            .unwrap();
            assert!(!evidence.contains(KEY), "{kind}, {}: {evidence}", row.name);
            if route.state == RouteState::WaitingForReset {
                assert_eq!(
                    route.deadline.map(|d| d.as_millis()),
                    Some(h.now_ms() + 7_000)
                );
                assert!(evidence.contains("retry-after"), "{evidence}");
                assert_eq!(route.class, Some(Class::Transient));
                // After the wait, the (now empty) mock answers "ok".
                h.advance_ms(7_000);
                h.wait(&task.id, RouteState::Completed).await;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
