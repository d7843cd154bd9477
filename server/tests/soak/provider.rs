//! The soak's provider: OpenAI's wire on loopback, in the test's process (so it
//! outlives every server it serves), answering each request as its task's script
//! says and counting requests by task and model.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use crate::script::{self, Reply};

/// What the provider received.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Received {
    /// Requests by task index and model.
    pub by_task: HashMap<usize, HashMap<String, usize>>,
    /// Every request.
    pub total: usize,
    /// Requests no script has: an unknown prompt, or more requests for a task's
    /// model than its script sends (so one was sent twice).
    pub unexpected: Vec<String>,
}

/// The provider's record, shared with the test.
pub type Log = Arc<Mutex<Received>>;

/// Start the provider: its base URL, and its record.
pub fn start() -> (String, Log) {
    let log = Log::default();
    let router = axum::Router::new()
        .route("/v1/chat/completions", axum::routing::post(completions))
        .with_state(log.clone());
    (crate::common::serve_on_loopback(router), log)
}

async fn completions(State(log): State<Log>, Json(body): Json<Value>) -> Response {
    let prompt = body["messages"][0]["content"].as_str().unwrap_or_default();
    let model = body["model"].as_str().unwrap_or_default().to_owned();
    let Some(index) = script::index_of(prompt) else {
        log.lock()
            .unwrap()
            .unexpected
            .push(format!("{model}: {prompt:?}"));
        return (StatusCode::BAD_REQUEST, "no such task").into_response();
    };
    let nth = {
        let mut received = log.lock().unwrap();
        received.total += 1;
        let count = received
            .by_task
            .entry(index)
            .or_default()
            .entry(model.clone())
            .or_insert(0);
        *count += 1;
        *count
    };
    let reply = script::script_of(index).reply(&model, nth);
    let Some(reply) = reply else {
        log.lock()
            .unwrap()
            .unexpected
            .push(format!("request {nth} to {model} for {prompt:?}"));
        return (StatusCode::BAD_REQUEST, "the script has no such request").into_response();
    };
    // Calls take a while (5 to 24 ms), so kills find some of them in flight.
    tokio::time::sleep(Duration::from_millis(5 + (index as u64 * 7) % 20)).await;
    answer(reply)
}

/// The answer to one request, in OpenAI's wire format.
fn answer(reply: Reply) -> Response {
    let error = |status: StatusCode, body: &'static str| {
        (status, [("content-type", "application/json")], body).into_response()
    };
    match reply {
        Reply::Answer => stream(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":null}]}"#,
            r#"{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]),
        Reply::BrokenStream => stream(&[
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":"Hel"},"finish_reason":null}]}"#,
        ]),
        Reply::Throttled => {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", "0".parse().unwrap());
            headers.insert("content-type", "application/json".parse().unwrap());
            let body = r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#;
            (StatusCode::TOO_MANY_REQUESTS, headers, body).into_response()
        }
        Reply::Overloaded => error(
            StatusCode::from_u16(529).unwrap(),
            r#"{"error":{"message":"The engine is currently overloaded, please try again later","type":"server_error","param":null,"code":null}}"#,
        ),
        Reply::ServerError => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
        ),
        Reply::Unauthorized => error(
            StatusCode::UNAUTHORIZED,
            r#"{"error":{"message":"Incorrect API key provided: sk-soak. You can find your API key at https://platform.openai.com/account/api-keys.","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}"#,
        ),
        Reply::InvalidRequest => error(
            StatusCode::BAD_REQUEST,
            r#"{"error":{"message":"Invalid value for 'messages': the soak asks for a refusal.","type":"invalid_request_error","param":"messages","code":null}}"#,
        ),
    }
}

/// 200 and these `data:` events, then the end of the body.
fn stream(events: &[&str]) -> Response {
    let mut text = String::new();
    for event in events {
        text.push_str("data: ");
        text.push_str(event);
        text.push_str("\n\n");
    }
    ([("content-type", "text/event-stream")], text).into_response()
}
