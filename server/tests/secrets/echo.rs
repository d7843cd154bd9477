//! A loopback provider that echoes the credential it is sent: it speaks
//! Anthropic's `/v1/messages` and OpenAI's `/v1/chat/completions` streaming wire
//! formats, and puts the `authorization` and `x-api-key` headers it received,
//! verbatim, into its error bodies (JSON and a proxy's HTML page), its response
//! headers, the error events of a broken stream and the text of its answers.
//!
//! Each prompt has a script: the n-th request carrying that prompt as its first
//! message gets the n-th step (past the end, the last step repeats), in the format
//! of the endpoint it reached.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// 429 with `retry-after: 0`: a rate limit whose reset has already come.
    RateLimited,
    /// 529 `overloaded_error` (Anthropic), 503 "currently overloaded" (OpenAI).
    Overloaded,
    /// 500.
    ServerError,
    /// 401: the key was refused (a hard error).
    Unauthorized,
    /// 502 and a proxy's HTML error page.
    ProxyPage,
    /// 200 and a stream: some text, then an error event (a stream broken after output).
    BrokenStream,
    /// 200 and a complete stream whose text quotes the credential back.
    Reply,
}

/// Which wire format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Chat Completions API.
    OpenAi,
}

/// One request as the provider saw it: where it went, for which prompt, and the
/// credential headers it carried (verbatim: the test checks they were the keys).
#[derive(Debug, Clone)]
pub struct Received {
    /// The endpoint's format.
    pub format: Format,
    /// The conversation's first message.
    pub prompt: String,
    /// The `authorization` header, if one came.
    pub authorization: Option<String>,
    /// The `x-api-key` header, if one came.
    pub api_key: Option<String>,
}

/// What the handlers share with the test.
#[derive(Debug, Default)]
struct Shared {
    scripts: Mutex<HashMap<String, Vec<Step>>>,
    received: Mutex<Vec<Received>>,
}

/// The echoing provider, on a runtime of its own; it stops with the test process.
#[derive(Debug, Clone)]
pub struct EchoProvider {
    base_url: String,
    shared: Arc<Shared>,
}

impl EchoProvider {
    /// Starts the provider on a free loopback port.
    pub fn start() -> Self {
        let shared = Arc::new(Shared::default());
        let (address_tx, address_rx) = std::sync::mpsc::channel();
        let state = shared.clone();
        std::thread::spawn(move || {
            tokio::runtime::Runtime::new()
                .unwrap()
                .block_on(async move {
                    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                    address_tx.send(listener.local_addr().unwrap()).unwrap();
                    let router = axum::Router::new()
                        .route(
                            "/v1/messages",
                            post(|state, headers, body| {
                                answer(Format::Anthropic, state, headers, body)
                            }),
                        )
                        .route(
                            "/v1/chat/completions",
                            post(|state, headers, body| {
                                answer(Format::OpenAi, state, headers, body)
                            }),
                        )
                        .with_state(state);
                    axum::serve(listener, router).await.unwrap();
                });
        });
        Self {
            base_url: format!("http://{}", address_rx.recv().unwrap()),
            shared,
        }
    }

    /// `http://127.0.0.1:PORT`, the providers' base URL.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Scripts the answers to `prompt`.
    pub fn script(&self, prompt: &str, steps: &[Step]) {
        lock(&self.shared.scripts).insert(prompt.to_owned(), steps.to_vec());
    }

    /// Every request so far, in order of arrival.
    pub fn received(&self) -> Vec<Received> {
        lock(&self.shared.received).clone()
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The credential headers of one request, as text to echo.
struct Echo {
    /// The `authorization` header verbatim (`Bearer KEY`), or empty.
    authorization: String,
    /// The `x-api-key` header verbatim, or empty.
    api_key: String,
    /// The key itself, whichever header carried it.
    credential: String,
}

impl Echo {
    fn of(received: &Received) -> Self {
        let authorization = received.authorization.clone().unwrap_or_default();
        let api_key = received.api_key.clone().unwrap_or_default();
        let credential = match authorization.strip_prefix("Bearer ") {
            Some(bearer) => bearer.to_owned(),
            None if !api_key.is_empty() => api_key.clone(),
            None => authorization.clone(),
        };
        Self {
            authorization,
            api_key,
            credential,
        }
    }

    /// The headers as a sentence, in the words a careless upstream would use.
    fn sentence(&self) -> String {
        format!(
            "request carried authorization {} and x-api-key {} (credential {})",
            self.authorization, self.api_key, self.credential
        )
    }
}

async fn answer(
    format: Format,
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let header = |name: &str| {
        headers
            .get(name)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
    };
    let received = Received {
        format,
        prompt: body["messages"][0]["content"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
        authorization: header("authorization"),
        api_key: header("x-api-key"),
    };
    let echo = Echo::of(&received);
    let step = {
        let mut log = lock(&shared.received);
        let seen = log
            .iter()
            .filter(|earlier| earlier.prompt == received.prompt)
            .count();
        log.push(received.clone());
        let scripts = lock(&shared.scripts);
        let steps = scripts
            .get(&received.prompt)
            .map(Vec::as_slice)
            .unwrap_or(&[Step::Reply]);
        steps
            .get(seen)
            .or(steps.last())
            .copied()
            .unwrap_or(Step::Reply)
    };
    match step {
        Step::RateLimited => json_error(format, 429, &echo, &[("retry-after", "0")]),
        Step::Overloaded => json_error(format, overloaded_status(format), &echo, &[]),
        Step::ServerError => json_error(format, 500, &echo, &[]),
        Step::Unauthorized => json_error(format, 401, &echo, &[]),
        Step::ProxyPage => proxy_page(&echo),
        Step::BrokenStream => broken_stream(format, &echo),
        Step::Reply => reply(format, &echo),
    }
}

fn overloaded_status(format: Format) -> u16 {
    match format {
        Format::Anthropic => 529,
        Format::OpenAi => 503,
    }
}

/// A JSON error of the endpoint's shape for `status`, the credential echoed in its
/// message, in a field of its own, in its request id and in two response headers.
fn json_error(format: Format, status: u16, echo: &Echo, extra: &[(&str, &str)]) -> Response {
    let sentence = echo.sentence();
    let body = match format {
        Format::Anthropic => {
            let (kind, message) = match status {
                429 => (
                    "rate_limit_error",
                    "This request would exceed the rate limit for your organization",
                ),
                529 => ("overloaded_error", "Overloaded"),
                401 => ("authentication_error", "invalid x-api-key"),
                _ => ("api_error", "Internal server error"),
            };
            json!({"type": "error",
                "error": {"type": kind, "message": format!("{message}: {sentence}"),
                          "credential": echo.credential},
                "request_id": format!("req_{}", echo.credential)})
        }
        Format::OpenAi => {
            let (kind, code, message) = match status {
                429 => (
                    "requests",
                    "rate_limit_exceeded",
                    format!(
                        "Rate limit reached for requests on credential {}",
                        echo.credential
                    ),
                ),
                503 => (
                    "server_error",
                    "server_is_overloaded",
                    "The engine is currently overloaded, please try again later".to_owned(),
                ),
                401 => (
                    "invalid_request_error",
                    "invalid_api_key",
                    format!(
                        "Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.",
                        echo.credential
                    ),
                ),
                _ => (
                    "server_error",
                    "server_error",
                    "The server had an error while processing your request".to_owned(),
                ),
            };
            json!({"error": {"message": format!("{message} ({sentence})"), "type": kind,
                             "param": echo.authorization, "code": code}})
        }
    };
    let mut builder = Response::builder()
        .status(StatusCode::from_u16(status).unwrap())
        .header("content-type", "application/json")
        .header("x-upstream-credential", &echo.credential)
        .header(
            "www-authenticate",
            format!(r#"Bearer realm="api", credential="{}""#, echo.credential),
        );
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::from(body.to_string())).unwrap()
}

/// A proxy's 502 page that prints the request's credential headers (in its title,
/// which the catalogue takes as the cause, and in its text).
fn proxy_page(echo: &Echo) -> Response {
    let page = format!(
        "<!DOCTYPE html>\n<html><head><title>502 Bad Gateway {credential}</title></head>\n\
         <body><h1>502 Bad Gateway</h1><p>The upstream refused {credential}.</p>\n\
         <pre>authorization: {authorization}\nx-api-key: {api_key}</pre>\n\
         <hr><center>nginx</center></body></html>\n",
        credential = echo.credential,
        authorization = echo.authorization,
        api_key = echo.api_key,
    );
    Response::builder()
        .status(StatusCode::BAD_GATEWAY)
        .header("content-type", "text/html")
        .header("x-upstream-credential", &echo.credential)
        .body(Body::from(page))
        .unwrap()
}

/// Text that quotes the credential, then an error event that does too.
fn broken_stream(format: Format, echo: &Echo) -> Response {
    let mut frames = opening(format, echo);
    frames.extend(text_frames(
        format,
        &format!("Partial answer; {}; then", echo.sentence()),
    ));
    frames.push(match format {
        Format::Anthropic => sse_event(
            "error",
            &json!({"type": "error", "error": {"type": "overloaded_error",
                "message": format!("Overloaded mid-stream: {}", echo.sentence())}})
            .to_string(),
        ),
        Format::OpenAi => sse_data(
            &json!({"error": {"message": format!("upstream stream failed: {}", echo.sentence()),
                "type": "server_error", "code": 503}})
            .to_string(),
        ),
    });
    event_stream(frames)
}

/// A complete answer that quotes the credential, in small pieces (so each key is
/// split across several events).
fn reply(format: Format, echo: &Echo) -> Response {
    let mut frames = opening(format, echo);
    frames.extend(text_frames(
        format,
        &format!("Here is what you sent: {}.", echo.sentence()),
    ));
    frames.extend(closing(format));
    event_stream(frames)
}

fn event_stream(frames: Vec<String>) -> Response {
    let chunks = futures_util::stream::iter(
        frames
            .into_iter()
            .map(|frame| Ok::<_, std::io::Error>(axum::body::Bytes::from(frame))),
    );
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(chunks))
        .unwrap()
}

fn sse_event(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn sse_data(data: &str) -> String {
    format!("data: {data}\n\n")
}

/// What a stream sends before its first text; the message id quotes the credential.
fn opening(format: Format, echo: &Echo) -> Vec<String> {
    match format {
        Format::Anthropic => vec![
            sse_event(
                "message_start",
                &json!({"type": "message_start", "message": {
                    "id": format!("msg_{}", echo.credential), "type": "message",
                    "role": "assistant", "model": "echo", "content": [],
                    "stop_reason": null, "stop_sequence": null,
                    "usage": {"input_tokens": 1, "output_tokens": 1}}})
                .to_string(),
            ),
            sse_event(
                "content_block_start",
                r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
            ),
            sse_event("ping", r#"{"type": "ping"}"#),
        ],
        Format::OpenAi => vec![sse_data(
            &json!({"id": format!("chatcmpl-{}", echo.credential),
                "object": "chat.completion.chunk", "created": 0, "model": "echo",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""},
                             "finish_reason": null}]})
            .to_string(),
        )],
    }
}

/// The text in pieces of seven characters.
fn text_frames(format: Format, text: &str) -> Vec<String> {
    let characters: Vec<char> = text.chars().collect();
    characters
        .chunks(7)
        .map(|piece| {
            let piece: String = piece.iter().collect();
            match format {
                Format::Anthropic => sse_event(
                    "content_block_delta",
                    &json!({"type": "content_block_delta", "index": 0,
                        "delta": {"type": "text_delta", "text": piece}})
                    .to_string(),
                ),
                Format::OpenAi => sse_data(
                    &json!({"id": "chatcmpl-echo", "object": "chat.completion.chunk",
                        "created": 0, "model": "echo",
                        "choices": [{"index": 0, "delta": {"content": piece},
                                     "finish_reason": null}]})
                    .to_string(),
                ),
            }
        })
        .collect()
}

/// What a complete stream sends after its text.
fn closing(format: Format) -> Vec<String> {
    match format {
        Format::Anthropic => vec![
            sse_event(
                "content_block_stop",
                r#"{"type":"content_block_stop","index":0}"#,
            ),
            sse_event(
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}"#,
            ),
            sse_event("message_stop", r#"{"type":"message_stop"}"#),
        ],
        Format::OpenAi => vec![
            sse_data(
                r#"{"id":"chatcmpl-echo","object":"chat.completion.chunk","created":0,"model":"echo","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}"#,
            ),
            sse_data("[DONE]"),
        ],
    }
}
