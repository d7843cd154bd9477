//! A loopback mock provider for tests and benches (feature `mock`): an HTTP
//! server on `127.0.0.1:0` that speaks both wire formats, Anthropic's at
//! `/v1/messages` and OpenAI's at `/v1/chat/completions`, answering either from
//! one queue of scripted responses ([`MockProvider::start`]) or by a script that
//! sees each request's model, prompt and how many times that prompt was asked
//! ([`MockProvider::scripted`], counting by model and prompt).
//!
//! ```
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! use providers::mock::{MockProvider, MockResponse, MockStop};
//! use providers::{Adapter, CallOutcome, CallRequest, Message, StopReason};
//!
//! let mock = MockProvider::start().await;
//! mock.push(MockResponse::Reply { text: "Hello there".into(), stop: MockStop::End });
//! let adapter = Adapter::new(mock.config(policy::ProviderKind::Anthropic), providers::http_client());
//! let request = CallRequest { model: "m".into(), max_tokens: 10, messages: vec![Message::user("Hi")], call_index: 0, client: None };
//! assert_eq!(
//!     adapter.call(&request).await,
//!     CallOutcome::Answered { text: "Hello there".into(), stop: StopReason::End, tool_calls: vec![] },
//! );
//! assert_eq!(mock.hits(), 1);
//! assert_eq!(mock.requests()[0].path, "/v1/messages");
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

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
    /// `response`, after `delay` (a provider's latency).
    After {
        /// How long before answering.
        delay: Duration,
        /// The answer then.
        response: Box<MockResponse>,
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

impl MockResponse {
    /// A complete reply of `text`, stopping at its end.
    pub fn reply(text: &str) -> Self {
        Self::Reply {
            text: text.to_owned(),
            stop: MockStop::End,
        }
    }

    /// A non-200 answer with these headers and this JSON body.
    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Self::Error {
            status,
            headers: headers
                .iter()
                .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
                .collect(),
            body: body.to_owned(),
        }
    }

    /// OpenAI's 429 for too many requests, `retry-after: 0`: throttled, with
    /// nothing to wait for.
    pub fn openai_throttled() -> Self {
        Self::status(
            429,
            &[("retry-after", "0")],
            r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#,
        )
    }

    /// OpenAI's 500: the server had an error.
    pub fn openai_server_error() -> Self {
        Self::status(
            500,
            &[],
            r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
        )
    }

    /// This answer after `delay`.
    pub fn after(self, delay: Duration) -> Self {
        Self::After {
            delay,
            response: Box::new(self),
        }
    }
}

/// One request, as a script sees it.
#[derive(Debug, Clone, Copy)]
pub struct MockCall<'a> {
    /// `/v1/messages` or `/v1/chat/completions`.
    pub path: &'static str,
    /// The request's `model`.
    pub model: &'a str,
    /// The text of the first message (its first text part, when its content is
    /// a list of parts).
    pub prompt: &'a str,
    /// How many requests this model has had with this prompt, this one included.
    pub nth: u32,
}

/// A script: each request's answer.
type Script = Box<dyn Fn(&MockCall<'_>) -> MockResponse + Send + Sync>;

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
struct Shared {
    queue: Mutex<VecDeque<MockResponse>>,
    /// Answers every request instead of the queue, when set; its requests are
    /// counted, not kept.
    script: Option<Script>,
    requests: Mutex<Vec<ReceivedRequest>>,
    /// Requests so far by model and prompt (scripted only).
    calls: Mutex<HashMap<(String, String), u32>>,
    hits: watch::Sender<usize>,
    abandoned: watch::Sender<usize>,
    /// Requests whose answer has not begun (its status and headers not sent),
    /// and the most there ever were at once.
    in_flight: AtomicU64,
    peak_in_flight: AtomicU64,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Shared")
            .field("scripted", &self.script.is_some())
            .finish_non_exhaustive()
    }
}

/// The mock server; it stops accepting connections when dropped.
#[derive(Debug)]
pub struct MockProvider {
    address: SocketAddr,
    shared: Arc<Shared>,
    server: JoinHandle<()>,
    /// The thread of its own runtime, when it has one: ended when this drops.
    _apart: Option<tokio::sync::oneshot::Sender<()>>,
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
        Self::serve(Shared::new(None), None).await
    }

    /// Starts a server that answers each request as `script` says, on the
    /// current tokio runtime; it counts requests by model and prompt
    /// ([`MockProvider::calls`]) and keeps none.
    ///
    /// # Panics
    /// If no loopback port can be bound (a broken test machine).
    pub async fn scripted(
        script: impl Fn(&MockCall<'_>) -> MockResponse + Send + Sync + 'static,
    ) -> Self {
        Self::serve(Shared::new(Some(Box::new(script))), None).await
    }

    /// [`MockProvider::scripted`] on a thread and runtime of its own, so its
    /// answers never wait on the caller's work (and a caller without a runtime
    /// can have one); both end when it drops.
    ///
    /// # Panics
    /// If the thread or its runtime cannot start, or no loopback port can be bound.
    pub fn scripted_apart(
        script: impl Fn(&MockCall<'_>) -> MockResponse + Send + Sync + 'static,
    ) -> Self {
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Runtime::new().expect("a runtime for the mock");
            let _ = handle_tx.send(runtime.handle().clone());
            // Until the mock drops (the sender with it).
            let _ = runtime.block_on(stop_rx);
        });
        let handle = handle_rx.recv().expect("the mock's runtime started");
        let shared = Shared::new(Some(Box::new(script)));
        let (mock_tx, mock_rx) = std::sync::mpsc::channel();
        handle.spawn(async move {
            let _ = mock_tx.send(Self::serve(shared, Some(stop_tx)).await);
        });
        mock_rx.recv().expect("the mock started")
    }

    async fn serve(shared: Shared, apart: Option<tokio::sync::oneshot::Sender<()>>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free loopback port");
        let address = listener
            .local_addr()
            .expect("a bound listener has an address");
        let shared = Arc::new(shared);
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
            _apart: apart,
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
            cli: None,
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

    /// A scripted mock's requests so far, by model and prompt.
    pub fn calls(&self) -> HashMap<(String, String), u32> {
        lock(&self.shared.calls).clone()
    }

    /// A scripted mock's requests so far with `prompt`, whatever their model.
    pub fn calls_for(&self, prompt: &str) -> u32 {
        lock(&self.shared.calls)
            .iter()
            .filter(|((_, asked), _)| asked == prompt)
            .map(|(_, count)| count)
            .sum()
    }

    /// The most requests that were ever waiting for their answer to begin at
    /// once.
    pub fn peak_in_flight(&self) -> u64 {
        self.shared.peak_in_flight.load(Ordering::Relaxed)
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

impl Shared {
    fn new(script: Option<Script>) -> Self {
        Self {
            queue: Mutex::new(VecDeque::new()),
            script,
            requests: Mutex::new(Vec::new()),
            calls: Mutex::new(HashMap::new()),
            hits: watch::Sender::new(0),
            abandoned: watch::Sender::new(0),
            in_flight: AtomicU64::new(0),
            peak_in_flight: AtomicU64::new(0),
        }
    }

    /// The script's answer to this request, counted by model and prompt.
    fn ask(&self, script: &Script, format: Format, body: &Value) -> MockResponse {
        let model = body["model"].as_str().unwrap_or_default();
        let content = &body["messages"][0]["content"];
        let prompt = content
            .as_str()
            .or_else(|| {
                content
                    .as_array()?
                    .iter()
                    .find_map(|part| part["text"].as_str())
            })
            .unwrap_or_default();
        let nth = {
            let mut calls = lock(&self.calls);
            let count = calls
                .entry((model.to_owned(), prompt.to_owned()))
                .or_insert(0);
            *count += 1;
            *count
        };
        script(&MockCall {
            path: format.path(),
            model,
            prompt,
            nth,
        })
    }
}

/// Counts a request in flight until it is answered.
struct InFlight(Arc<Shared>);

impl InFlight {
    fn new(shared: &Arc<Shared>) -> Self {
        let now = shared.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        shared.peak_in_flight.fetch_max(now, Ordering::Relaxed);
        Self(shared.clone())
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Format {
    fn path(self) -> &'static str {
        match self {
            Format::Anthropic => "/v1/messages",
            Format::OpenAi => "/v1/chat/completions",
        }
    }
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
    let _in_flight = InFlight::new(&shared);
    // A scripted mock answers a client that does not ask for a stream with one
    // JSON body; the queue's answers always stream.
    let (mut response, whole_for) = if let Some(script) = &shared.script {
        let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
        let response = shared.ask(script, format, &body);
        shared.hits.send_modify(|hits| *hits += 1);
        let whole_for = (body["stream"].as_bool() != Some(true))
            .then(|| body["model"].as_str().unwrap_or("mock").to_owned());
        (response, whole_for)
    } else {
        record(&shared, format, &headers, &body);
        let response = lock(&shared.queue)
            .pop_front()
            .unwrap_or(MockResponse::Reply {
                text: "ok".into(),
                stop: MockStop::End,
            });
        (response, None)
    };
    while let MockResponse::After {
        delay,
        response: then,
    } = response
    {
        tokio::time::sleep(delay).await;
        response = *then;
    }
    if let (Some(model), MockResponse::Reply { text, stop }) = (&whole_for, &response) {
        return whole(format, text, *stop, model);
    }
    match response {
        MockResponse::After { .. } => unreachable!("waited out above"),
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
    lock(&shared.requests).push(ReceivedRequest {
        path: format.path().to_owned(),
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

/// A reply as one JSON body, for a client that asked for no stream.
fn whole(format: Format, text: &str, stop: MockStop, model: &str) -> Response {
    let body = match format {
        Format::Anthropic => json!({"id": "msg_mock", "type": "message", "role": "assistant",
            "model": model, "content": [{"type": "text", "text": text}],
            "stop_reason": match stop { MockStop::End => "end_turn", MockStop::MaxTokens => "max_tokens" },
            "stop_sequence": null, "usage": {"input_tokens": 1, "output_tokens": 3}}),
        Format::OpenAi => json!({"id": "chatcmpl-mock", "object": "chat.completion", "created": 0,
            "model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": match stop { MockStop::End => "stop", MockStop::MaxTokens => "length" }}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 3, "total_tokens": 4}}),
    };
    Response::builder()
        .status(StatusCode::OK)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("fixed headers are valid")
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

/// An [`Observer`](crate::Observer) that keeps every piece of text and of tool
/// calls it is passed, for tests of what streams.
#[derive(Debug, Default)]
pub struct Pieces {
    text: std::sync::Mutex<Vec<String>>,
    tools: std::sync::Mutex<Vec<crate::ToolPiece>>,
}

impl Pieces {
    /// Every piece of text so far, in order.
    pub fn pieces(&self) -> Vec<String> {
        self.text.lock().expect("not poisoned").clone()
    }

    /// Every piece of a tool call so far, in order.
    pub fn tool_pieces(&self) -> Vec<crate::ToolPiece> {
        self.tools.lock().expect("not poisoned").clone()
    }
}

impl crate::Observer for Pieces {
    fn text(&self, piece: &str) {
        self.text
            .lock()
            .expect("not poisoned")
            .push(piece.to_owned());
    }

    fn tool(&self, piece: &crate::ToolPiece) {
        self.tools.lock().expect("not poisoned").push(piece.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::{MockProvider, MockResponse};
    use serde_json::{Value, json};
    use std::time::Duration;

    #[tokio::test]
    async fn a_scripted_mock_answers_by_model_and_prompt_and_counts() {
        let mock = MockProvider::scripted(|call| {
            if call.model == "slow" {
                MockResponse::reply("late").after(Duration::from_millis(300))
            } else if call.nth == 1 {
                MockResponse::openai_throttled()
            } else {
                MockResponse::reply(&format!("{} {} {}", call.path, call.model, call.prompt))
                    .after(Duration::from_millis(1))
            }
        })
        .await;
        let client = crate::http_client();
        let post = |path: &'static str, model: &str, content: Value| {
            client
                .post(format!("{}{path}", mock.base_url()))
                .header("content-type", "application/json")
                .body(
                    json!({"model": model, "messages": [{"role": "user", "content": content}]})
                        .to_string(),
                )
                .send()
        };
        let read = |response: reqwest::Response| async move {
            serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap()
        };
        let openai = "/v1/chat/completions";
        let throttled = post(openai, "m", json!("a")).await.unwrap();
        assert_eq!(throttled.status(), 429);
        assert_eq!(throttled.headers()["retry-after"], "0");
        // Not asked to stream: one JSON body.
        let answer = read(post(openai, "m", json!("a")).await.unwrap()).await;
        assert_eq!(
            answer["choices"][0]["message"]["content"],
            "/v1/chat/completions m a"
        );
        // Counted by model and prompt; a prompt given as parts is its first text.
        let other_model = post(openai, "n", json!([{"type": "text", "text": "a"}]))
            .await
            .unwrap();
        assert_eq!(other_model.status(), 429);
        let anthropic = read(post("/v1/messages", "n", json!("a")).await.unwrap()).await;
        assert_eq!(anthropic["content"][0]["text"], "/v1/messages n a");
        assert_eq!(mock.calls_for("a"), 4);
        assert_eq!(mock.calls()[&("n".to_owned(), "a".to_owned())], 2);
        assert_eq!(mock.hits(), 4);
        assert!(
            mock.requests().is_empty(),
            "a scripted mock keeps no request"
        );
        assert_eq!(mock.peak_in_flight(), 1, "one at a time so far");
        // Two at once, each answered after its delay: both wait together.
        let (first, second) = tokio::join!(
            post(openai, "slow", json!("b")),
            post(openai, "slow", json!("c"))
        );
        assert_eq!(
            (
                first.unwrap().status().as_u16(),
                second.unwrap().status().as_u16()
            ),
            (200, 200)
        );
        assert_eq!(mock.peak_in_flight(), 2);
    }

    #[test]
    fn a_mock_apart_serves_a_caller_without_a_runtime() {
        let mock = MockProvider::scripted_apart(|_| MockResponse::reply("hi"));
        let answer = tokio::runtime::Runtime::new().unwrap().block_on(async {
            let response = crate::http_client()
                .post(format!("{}/v1/chat/completions", mock.base_url()))
                .header("content-type", "application/json")
                .body(
                    json!({"model": "m", "messages": [{"role": "user", "content": "x"}]})
                        .to_string(),
                )
                .send()
                .await
                .unwrap();
            serde_json::from_slice::<Value>(&response.bytes().await.unwrap()).unwrap()
        });
        assert_eq!(answer["choices"][0]["message"]["content"], "hi");
        assert_eq!(mock.calls_for("x"), 1);
    }

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
