//! A loopback mock provider for tests (feature `mock`): an HTTP server on
//! `127.0.0.1:0` that speaks both wire formats, Anthropic's at `/v1/messages` and
//! OpenAI's at `/v1/chat/completions`, from one queue of scripted responses.
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use providers::mock::{MockProvider, MockResponse, MockStop};
//! use providers::{Adapter, CallOutcome, CallRequest, Message, StopReason};
//!
//! let mock = MockProvider::start().await;
//! mock.push(MockResponse::Reply { text: "Hello there".into(), stop: MockStop::End });
//! let adapter = Adapter::new(mock.config(policy::ProviderKind::Anthropic), providers::http_client());
//! let request = CallRequest { model: "m".into(), max_tokens: 10, messages: vec![Message::user("Hi")], call_index: 0 };
//! assert_eq!(
//!     adapter.call(&request).await,
//!     CallOutcome::Answered { text: "Hello there".into(), stop: StopReason::End },
//! );
//! assert_eq!(mock.hits(), 1);
//! assert_eq!(mock.requests()[0].path, "/v1/messages");
//! # });
//! ```

use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use bytes::Bytes;
use futures_util::stream::{self, BoxStream, StreamExt};
use serde_json::{Value, json};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config::{ProviderConfig, Timeouts};

/// One scripted answer, given to the next request whichever endpoint it hits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MockResponse {
    /// 200 and a complete stream: the text in several chunks, in the endpoint's format.
    Reply {
        /// The answer's text.
        text: String,
        /// How it stops.
        stop: MockStop,
    },
    /// A non-200 answer with these headers and this body.
    Error {
        /// The HTTP status.
        status: u16,
        /// Response headers, e.g. `("retry-after", "20")`.
        headers: Vec<(String, String)>,
        /// The body, sent as `application/json`.
        body: String,
    },
    /// 200 and a stream: `text_before` in chunks (none if empty), then an error event
    /// in the endpoint's format (`event: error` for Anthropic, a `data:` chunk for OpenAI).
    StreamError {
        /// Text streamed before the error.
        text_before: String,
        /// The error event's JSON, e.g. `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`.
        event: String,
    },
    /// No response at all, until the client goes away.
    HangBeforeHeaders,
    /// 200 and stream headers, then nothing, until the client goes away.
    HangAfterHeaders,
    /// 200 and a stream: `text_before` in chunks, then nothing, until the client goes
    /// away (an idle stream).
    StallMidStream {
        /// Text streamed before the stream goes quiet.
        text_before: String,
    },
    /// 200 and a stream: `text_before` in chunks, then the connection is dropped.
    CloseMidStream {
        /// Text streamed before the connection drops.
        text_before: String,
    },
    /// 200 and a stream of exactly these SSE chunks, whichever endpoint was hit (for
    /// streams the other variants do not make), then `end`.
    ///
    /// ```
    /// let response = providers::mock::MockResponse::Events {
    ///     chunks: vec!["data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n".into()],
    ///     end: providers::mock::MockEnd::Stall,
    /// };
    /// # drop(response);
    /// ```
    Events {
        /// Raw SSE text, one body chunk each (`event: ...\ndata: ...\n\n`).
        chunks: Vec<String>,
        /// What happens after the last chunk.
        end: MockEnd,
    },
}

/// How a [`MockResponse::Events`] stream ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockEnd {
    /// The body ends cleanly.
    Finish,
    /// Nothing more is sent, until the client goes away (counted as abandoned).
    Stall,
    /// The connection is dropped.
    Close,
}

/// How a mocked reply stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MockStop {
    /// `end_turn` / `stop`.
    End,
    /// `max_tokens` / `length`.
    MaxTokens,
}

/// A request the mock received. The key is not kept: only which header carried one
/// and how long the credential was.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceivedRequest {
    /// `/v1/messages` or `/v1/chat/completions`.
    pub path: String,
    /// Every header but `x-api-key` and `authorization`, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The credential, if one came.
    pub auth: Option<ReceivedAuth>,
    /// The JSON body (a string of the raw text if it was not JSON).
    pub body: Value,
}

impl ReceivedRequest {
    /// The first value of a header other than the key's.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Which header carried a key, and the key's length (after `Bearer ` for `authorization`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedAuth {
    /// `x-api-key` or `authorization`.
    pub header: String,
    /// Whether `authorization` said `Bearer `.
    pub bearer: bool,
    /// The key's length in bytes.
    pub credential_length: usize,
}

/// What the handlers share with the test.
#[derive(Debug)]
struct Shared {
    queue: Mutex<VecDeque<MockResponse>>,
    requests: Mutex<Vec<ReceivedRequest>>,
    hits: watch::Sender<usize>,
    abandoned: watch::Sender<usize>,
}

/// The mock server; it stops accepting connections when dropped.
#[derive(Debug)]
pub struct MockProvider {
    address: SocketAddr,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
}

impl Drop for MockProvider {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Which format an endpoint speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Anthropic,
    OpenAi,
}

impl MockProvider {
    /// Starts a server on a free loopback port, on the current tokio runtime.
    ///
    /// # Panics
    /// If no loopback port can be bound (a broken test machine).
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free loopback port");
        let address = listener
            .local_addr()
            .expect("a bound listener has an address");
        let shared = Arc::new(Shared {
            queue: Mutex::new(VecDeque::new()),
            requests: Mutex::new(Vec::new()),
            hits: watch::Sender::new(0),
            abandoned: watch::Sender::new(0),
        });
        let router = Router::new()
            .route(
                "/v1/messages",
                post(|state, headers, body| handle(Format::Anthropic, state, headers, body)),
            )
            .route(
                "/v1/chat/completions",
                post(|state, headers, body| handle(Format::OpenAi, state, headers, body)),
            )
            .with_state(shared.clone());
        let server = tokio::spawn(async move {
            // Ends only with an accept error or when aborted on drop.
            let _ = axum::serve(listener, router).await;
        });
        Self {
            address,
            shared,
            server,
        }
    }

    /// `http://127.0.0.1:PORT`, the base URL to configure.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// A provider of `kind` at this mock, its default family, no key, default timeouts.
    pub fn config(&self, kind: policy::ProviderKind) -> ProviderConfig {
        ProviderConfig {
            kind,
            family: kind.default_family(),
            base_url: self.base_url(),
            api_key_env: None,
            timeouts: Timeouts::default(),
            script: Vec::new(),
        }
    }

    /// Queues a response for a later request (first in, first out; with the queue
    /// empty, requests get a reply of `ok`).
    pub fn push(&self, response: MockResponse) {
        lock(&self.shared.queue).push_back(response);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ReceivedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many requests have arrived.
    pub fn hits(&self) -> usize {
        *self.shared.hits.borrow()
    }

    /// Waits until at least `count` requests have arrived (no sleeping: it is woken
    /// by each arrival).
    pub async fn wait_for_hits(&self, count: usize) {
        wait_for(&self.shared.hits, count).await;
    }

    /// How many hanging responses ([`MockResponse::HangBeforeHeaders`],
    /// [`MockResponse::HangAfterHeaders`], [`MockResponse::StallMidStream`], and
    /// [`MockResponse::Events`] ending in [`MockEnd::Stall`]) were abandoned: their
    /// client closed the connection.
    pub fn abandoned(&self) -> usize {
        *self.shared.abandoned.borrow()
    }

    /// Waits until at least `count` hanging responses were abandoned.
    pub async fn wait_for_abandoned(&self, count: usize) {
        wait_for(&self.shared.abandoned, count).await;
    }
}

async fn wait_for(counter: &watch::Sender<usize>, count: usize) {
    let mut receiver = counter.subscribe();
    receiver
        .wait_for(|seen| *seen >= count)
        .await
        .expect("the sender lives as long as the mock");
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A panicking test thread leaves plain data behind: still readable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Counts a hanging response as abandoned when hyper drops it (the connection closed).
struct AbandonedOnDrop(Arc<Shared>);

impl Drop for AbandonedOnDrop {
    fn drop(&mut self) {
        self.0.abandoned.send_modify(|count| *count += 1);
    }
}

async fn handle(
    format: Format,
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    record(&shared, format, &headers, &body);
    let response = lock(&shared.queue)
        .pop_front()
        .unwrap_or(MockResponse::Reply {
            text: "ok".into(),
            stop: MockStop::End,
        });
    match response {
        MockResponse::Reply { text, stop } => {
            let mut frames = opening(format);
            frames.extend(text_frames(format, &text));
            frames.extend(closing(format, stop));
            event_stream(frames_then(frames, MockEnd::Finish, shared))
        }
        MockResponse::Error {
            status,
            headers,
            body,
        } => {
            let mut builder = Response::builder()
                .status(StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR))
                .header("content-type", "application/json");
            for (name, value) in headers {
                builder = builder.header(name, value);
            }
            builder
                .body(Body::from(body))
                .expect("scripted headers are valid")
        }
        MockResponse::StreamError { text_before, event } => {
            let mut frames = opening(format);
            frames.extend(text_frames(format, &text_before));
            frames.push(match format {
                Format::Anthropic => sse_event("error", &event),
                Format::OpenAi => sse_data(&event),
            });
            event_stream(frames_then(frames, MockEnd::Finish, shared))
        }
        MockResponse::HangBeforeHeaders => {
            let _abandoned = AbandonedOnDrop(shared);
            std::future::pending::<Response>().await
        }
        MockResponse::HangAfterHeaders => event_stream(silence(shared).boxed()),
        MockResponse::StallMidStream { text_before } => {
            let mut frames = opening(format);
            frames.extend(text_frames(format, &text_before));
            event_stream(frames_then(frames, MockEnd::Stall, shared))
        }
        MockResponse::CloseMidStream { text_before } => {
            let mut frames = opening(format);
            frames.extend(text_frames(format, &text_before));
            event_stream(frames_then(frames, MockEnd::Close, shared))
        }
        MockResponse::Events { chunks, end } => {
            let frames = chunks.into_iter().map(Bytes::from).collect();
            event_stream(frames_then(frames, end, shared))
        }
    }
}

/// `frames`, then the stream's end.
fn frames_then(
    frames: Vec<Bytes>,
    end: MockEnd,
    shared: Arc<Shared>,
) -> BoxStream<'static, Result<Bytes, io::Error>> {
    let frames = stream::iter(frames.into_iter().map(Ok));
    match end {
        MockEnd::Finish => frames.boxed(),
        MockEnd::Stall => frames.chain(silence(shared)).boxed(),
        MockEnd::Close => {
            let cut = stream::once(async {
                // One turn away first, so hyper flushes the text before the error
                // makes it drop the connection (it would drop the unsent text too).
                tokio::task::yield_now().await;
                Err(io::Error::other("the mock drops the connection mid-stream"))
            });
            frames.chain(cut).boxed()
        }
    }
}

fn record(shared: &Shared, format: Format, headers: &HeaderMap, body: &Bytes) {
    let mut kept = Vec::new();
    let mut auth = None;
    for (name, value) in headers {
        let text = String::from_utf8_lossy(value.as_bytes()).into_owned();
        match name.as_str() {
            "x-api-key" => {
                auth = Some(ReceivedAuth {
                    header: name.as_str().to_owned(),
                    bearer: false,
                    credential_length: text.len(),
                });
            }
            "authorization" => {
                let credential = text.strip_prefix("Bearer ");
                auth = Some(ReceivedAuth {
                    header: name.as_str().to_owned(),
                    bearer: credential.is_some(),
                    credential_length: credential.unwrap_or(&text).len(),
                });
            }
            _ => kept.push((name.as_str().to_owned(), text)),
        }
    }
    let body = serde_json::from_slice(body)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(body).into_owned()));
    let path = match format {
        Format::Anthropic => "/v1/messages",
        Format::OpenAi => "/v1/chat/completions",
    };
    lock(&shared.requests).push(ReceivedRequest {
        path: path.to_owned(),
        headers: kept,
        auth,
        body,
    });
    shared.hits.send_modify(|hits| *hits += 1);
}

/// A body that sends nothing more and counts itself abandoned when hyper drops it.
fn silence(shared: Arc<Shared>) -> impl futures_util::Stream<Item = Result<Bytes, io::Error>> {
    stream::unfold(AbandonedOnDrop(shared), |_guard| std::future::pending())
}

fn event_stream(frames: BoxStream<'static, Result<Bytes, io::Error>>) -> Response {
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "text/event-stream")
        .header("cache-control", "no-cache")
        .body(Body::from_stream(frames))
        .expect("fixed headers are valid")
}

fn sse_event(name: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

fn sse_data(data: &str) -> Bytes {
    Bytes::from(format!("data: {data}\n\n"))
}

/// What a stream sends before its first text.
fn opening(format: Format) -> Vec<Bytes> {
    match format {
        Format::Anthropic => vec![
            sse_event(
                "message_start",
                &json!({"type": "message_start", "message": {
                    "id": "msg_mock", "type": "message", "role": "assistant", "model": "mock",
                    "content": [], "stop_reason": null, "stop_sequence": null,
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
            &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
                "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": null}]})
            .to_string(),
        )],
    }
}

/// The text in up to three chunks (split on character boundaries).
fn text_frames(format: Format, text: &str) -> Vec<Bytes> {
    pieces(text)
        .into_iter()
        .map(|piece| match format {
            Format::Anthropic => sse_event(
                "content_block_delta",
                &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": piece}})
                .to_string(),
            ),
            Format::OpenAi => sse_data(
                &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": null}]})
                .to_string(),
            ),
        })
        .collect()
}

fn pieces(text: &str) -> Vec<&str> {
    let characters = text.chars().count();
    let size = characters.div_ceil(3).max(1);
    let mut pieces = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let end = rest
            .char_indices()
            .nth(size)
            .map_or(rest.len(), |(index, _)| index);
        let (piece, tail) = rest.split_at(end);
        pieces.push(piece);
        rest = tail;
    }
    pieces
}

/// What a complete stream sends after its text.
fn closing(format: Format, stop: MockStop) -> Vec<Bytes> {
    match format {
        Format::Anthropic => {
            let reason = match stop {
                MockStop::End => "end_turn",
                MockStop::MaxTokens => "max_tokens",
            };
            vec![
                sse_event(
                    "content_block_stop",
                    r#"{"type":"content_block_stop","index":0}"#,
                ),
                sse_event(
                    "message_delta",
                    &json!({"type": "message_delta",
                        "delta": {"stop_reason": reason, "stop_sequence": null},
                        "usage": {"output_tokens": 3}})
                    .to_string(),
                ),
                sse_event("message_stop", r#"{"type":"message_stop"}"#),
            ]
        }
        Format::OpenAi => {
            let reason = match stop {
                MockStop::End => "stop",
                MockStop::MaxTokens => "length",
            };
            vec![
                sse_data(
                    &json!({"id": "chatcmpl-mock", "object": "chat.completion.chunk", "created": 0, "model": "mock",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
                    .to_string(),
                ),
                sse_data("[DONE]"),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn text_splits_into_at_most_three_pieces() {
        let rows: [(&str, &[&str]); 5] = [
            ("", &[]),
            ("a", &["a"]),
            ("abcd", &["ab", "cd"]),
            ("Hello there", &["Hell", "o th", "ere"]),
            ("héllo", &["hé", "ll", "o"]),
        ];
        for (text, expected) in rows {
            assert_eq!(super::pieces(text), expected, "{text:?}");
        }
    }
}
