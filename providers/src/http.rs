//! One streaming call over HTTP, in either wire format, with its timeouts, and the
//! evidence it leaves when it fails.

use catalogue::{Evidence, Headers, Transport};
use eventsource_stream::EventStreamError;
use futures_util::StreamExt;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use tokio::time::{Instant, timeout, timeout_at};

use crate::call::{CallOutcome, CallRequest, Observer, StopReason, ToolPiece};
use crate::config::ProviderConfig;
use crate::key::{ApiKey, StreamScrubber, read_key};
use crate::transport::{Phase, chain_text, transport_of};
use crate::wire::{EventMeaning, Progress, Wire, events};

/// The most of an error body kept as evidence, in bytes.
pub const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// Sends `request` and reads its stream. Everything is awaited here, in the caller's
/// task: dropping the returned future drops the response and so the connection.
pub(crate) async fn call(
    client: &reqwest::Client,
    config: &ProviderConfig,
    wire: Wire,
    request: &CallRequest,
    observer: &dyn Observer,
) -> CallOutcome {
    let family = config.family.as_str();
    let key = match read_key(config.api_key_env.as_deref()) {
        Ok(key) => key,
        Err(error) => {
            return CallOutcome::failed(Evidence::new(family).with_body(&error.to_string()));
        }
    };
    let outcome = send_and_read(client, config, wire, request, key.as_ref(), observer).await;
    // A provider (or a proxy before it) may send the key back: in an error message,
    // a page printing the request's headers, a response header, a stream's error
    // event, or a model's answer. Whatever the call brought back is scrubbed of the
    // exact key it sent before the catalogue, the store, a page or a log sees it.
    match &key {
        Some(key) => scrubbed(outcome, key),
        None => outcome,
    }
}

/// Sends `request` with `key` (if any) and reads its answer.
async fn send_and_read(
    client: &reqwest::Client,
    config: &ProviderConfig,
    wire: Wire,
    request: &CallRequest,
    key: Option<&ApiKey>,
    observer: &dyn Observer,
) -> CallOutcome {
    let family = config.family.as_str();
    let url = format!("{}{}", config.base_url.trim_end_matches('/'), wire.path());
    // The engine asks `Adapter::carries` first; a request that cannot be carried
    // fails here, before anything is sent, rather than go out with fields dropped.
    let body = match wire.request_body(request) {
        Ok(body) => body.to_string(),
        Err(refused) => {
            return CallOutcome::failed(
                Evidence::new(family).with_body(&format!("not sent: {refused}")),
            );
        }
    };
    let mut builder = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "text/event-stream")
        .body(body);
    for (name, value) in wire.fixed_headers() {
        builder = builder.header(*name, *value);
    }
    if let Some(key) = key {
        let (name, value) = key.header(wire.bearer());
        builder = builder.header(name, value);
    }

    let timeouts = config.timeouts;
    // One deadline for the headers and the first event together.
    let first_event_deadline = Instant::now() + timeouts.first_byte();
    let response = match timeout_at(first_event_deadline, builder.send()).await {
        Err(_elapsed) => {
            return CallOutcome::failed(Evidence::new(family).with_transport(Transport::Timeout));
        }
        Ok(Err(error)) => return CallOutcome::failed(request_error_evidence(family, &error)),
        Ok(Ok(response)) => response,
    };
    let evidence = response_evidence(family, &response);
    if !response.status().is_success() || !is_event_stream(&response) {
        let body = read_capped_body(response, timeouts.idle()).await;
        return CallOutcome::failed(evidence.with_body(&body));
    }
    let mut streamed = Streamed {
        observer,
        scrubber: key.map(ApiKey::stream_scrubber),
        key,
        tool: None,
        passed_on: 0,
    };
    let outcome = read_stream(
        response,
        wire,
        evidence,
        first_event_deadline,
        timeouts.idle(),
        &mut streamed,
    )
    .await;
    streamed.finish();
    outcome
}

/// The answer passed on to an observer as it streams, scrubbed of the key: its
/// text, and its tool calls' arguments, each through a scrubber of its own, so a
/// key split across pieces is caught. What a scrubber holds back is passed on
/// before anything that follows it (the next tool call, text after a tool call).
struct Streamed<'a> {
    observer: &'a dyn Observer,
    scrubber: Option<StreamScrubber<'a>>,
    /// The key, scrubbed from tool calls.
    key: Option<&'a ApiKey>,
    /// The tool call whose arguments stream now, and their scrubber.
    tool: Option<(usize, StreamScrubber<'a>)>,
    /// How many bytes of the progress's text were passed on.
    passed_on: usize,
}

impl<'a> Streamed<'a> {
    /// Pass on the tokens a complete answer used, if the provider said.
    fn usage(&self, usage: Option<crate::call::Usage>) {
        if let Some(usage) = usage {
            self.observer.usage(usage);
        }
    }

    /// Pass on what `text` (the answer so far) has beyond what was passed on.
    fn pass_on(&mut self, text: &str) {
        let Some(piece) = text.get(self.passed_on..).filter(|piece| !piece.is_empty()) else {
            return;
        };
        self.passed_on = text.len();
        self.end_tool();
        match &mut self.scrubber {
            Some(scrubber) => {
                let scrubbed = scrubber.push(piece);
                if !scrubbed.is_empty() {
                    self.observer.text(&scrubbed);
                }
            }
            None => self.observer.text(piece),
        }
    }

    /// Pass on the pieces of tool calls read since the last event.
    fn tools(&mut self, pieces: Vec<ToolPiece>) {
        for piece in pieces {
            let Some(key) = self.key else {
                self.observer.tool(&piece);
                continue;
            };
            match piece {
                ToolPiece::Begin { index, id, name } => {
                    // The text before the call, and the call before it, end here.
                    self.end_text(key);
                    self.end_tool();
                    self.tool = Some((index, key.stream_scrubber()));
                    self.observer.tool(&ToolPiece::Begin {
                        index,
                        id: key.scrub(&id),
                        name: key.scrub(&name),
                    });
                }
                ToolPiece::Arguments { index, json } => {
                    let json = match &mut self.tool {
                        Some((current, scrubber)) if *current == index => scrubber.push(&json),
                        _ => key.scrub(&json),
                    };
                    if !json.is_empty() {
                        self.observer.tool(&ToolPiece::Arguments { index, json });
                    }
                }
            }
        }
    }

    /// Pass on what the text's scrubber held back, and scrub what follows afresh.
    fn end_text(&mut self, key: &'a ApiKey) {
        if let Some(scrubber) = self.scrubber.replace(key.stream_scrubber()) {
            let rest = scrubber.finish();
            if !rest.is_empty() {
                self.observer.text(&rest);
            }
        }
    }

    /// Pass on what the current tool call's scrubber held back.
    fn end_tool(&mut self) {
        if let Some((index, scrubber)) = self.tool.take() {
            let json = scrubber.finish();
            if !json.is_empty() {
                self.observer.tool(&ToolPiece::Arguments { index, json });
            }
        }
    }

    /// Pass on what the scrubbers held back, once the stream is over.
    fn finish(mut self) {
        self.end_tool();
        if let Some(scrubber) = self.scrubber {
            let rest = scrubber.finish();
            if !rest.is_empty() {
                self.observer.text(&rest);
            }
        }
    }
}

/// How long a finished answer's stream is read on the side for its end.
const DRAIN_LIMIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Reads the event stream until the answer is complete or the call fails.
async fn read_stream(
    response: reqwest::Response,
    wire: Wire,
    evidence: Evidence,
    first_event_deadline: Instant,
    idle: std::time::Duration,
    streamed: &mut Streamed<'_>,
) -> CallOutcome {
    let mut events = events(response.bytes_stream());
    let mut progress = Progress::default();
    let mut deadline = first_event_deadline;
    let evidence = loop {
        let next = timeout_at(deadline, events.next()).await;
        deadline = Instant::now() + idle;
        match next {
            Ok(Some(Ok(event))) => {
                let meaning = wire.read_event(&event, &mut progress);
                streamed.pass_on(&progress.text);
                streamed.tools(progress.take_tool_pieces());
                match meaning {
                    EventMeaning::Continue => continue,
                    EventMeaning::Finished => {
                        // Read what is left (at most the end of the body) on the side,
                        // so the connection goes back to the pool instead of being
                        // closed.
                        tokio::spawn(async move {
                            let drain = async { while events.next().await.is_some() {} };
                            let _ = tokio::time::timeout(DRAIN_LIMIT, drain).await;
                        });
                        streamed.usage(progress.usage);
                        return CallOutcome::Answered {
                            text: progress.text,
                            stop: progress.stop.unwrap_or(StopReason::End),
                            tool_calls: progress.tool_calls,
                        };
                    }
                    EventMeaning::Failed { body } => {
                        return CallOutcome::Failed {
                            evidence: evidence.with_body(&body),
                            partial_output: progress.output(),
                        };
                    }
                }
            }
            Err(_elapsed) => break evidence.with_transport(Transport::Timeout),
            Ok(None) => break evidence.with_transport(Transport::ClosedEarly),
            Ok(Some(Err(EventStreamError::Transport(error)))) => {
                let transport = transport_of(&error, Phase::Body).unwrap_or(Transport::ClosedEarly);
                break evidence.with_transport(transport);
            }
            Ok(Some(Err(EventStreamError::Utf8(_)))) => {
                break evidence.with_body("the event stream was not valid UTF-8");
            }
            Ok(Some(Err(EventStreamError::Parser(_)))) => {
                break evidence
                    .with_body("the event stream could not be parsed as server-sent events");
            }
        }
    };
    // The stream stopped short of its terminal event.
    match progress.stop {
        Some(stop) if wire.complete_at_stop() => {
            streamed.usage(progress.usage);
            CallOutcome::Answered {
                text: progress.text,
                stop,
                tool_calls: progress.tool_calls,
            }
        }
        _ => CallOutcome::Failed {
            evidence,
            partial_output: progress.output(),
        },
    }
}

/// `outcome` with every trace of `key` scrubbed from the texts it carries: the
/// answer, the output streamed before a failure, and the evidence's headers, body,
/// output and transport name.
fn scrubbed(outcome: CallOutcome, key: &ApiKey) -> CallOutcome {
    match outcome {
        CallOutcome::Answered {
            text,
            stop,
            tool_calls,
        } => CallOutcome::Answered {
            text: key.scrub(&text),
            stop,
            tool_calls: tool_calls
                .into_iter()
                .map(|call| crate::call::ToolCall {
                    id: key.scrub(&call.id),
                    name: key.scrub(&call.name),
                    arguments: key.scrub(&call.arguments),
                })
                .collect(),
        },
        CallOutcome::Failed {
            evidence,
            partial_output,
        } => {
            let mut headers = Headers::default();
            for (name, value) in evidence.headers.iter() {
                headers.insert(name, &key.scrub(value));
            }
            let scrub = |text: Option<String>| text.map(|text| key.scrub(&text));
            CallOutcome::Failed {
                evidence: Evidence {
                    headers,
                    body: scrub(evidence.body),
                    output: scrub(evidence.output),
                    transport: evidence.transport.map(|transport| match transport {
                        Transport::Other(name) => Transport::Other(key.scrub(&name)),
                        known => known,
                    }),
                    ..evidence
                },
                partial_output: key.scrub(&partial_output),
            }
        }
    }
}

/// The evidence a request that got no response leaves.
fn request_error_evidence(family: &str, error: &reqwest::Error) -> Evidence {
    match transport_of(error, Phase::Request) {
        Some(transport) => Evidence::new(family).with_transport(transport),
        None => Evidence::new(family).with_body(&chain_text(error)),
    }
}

/// The status and every header of a response.
fn response_evidence(family: &str, response: &reqwest::Response) -> Evidence {
    let mut evidence = Evidence::new(family).with_status(response.status().as_u16());
    for (name, value) in response.headers() {
        evidence
            .headers
            .insert(name.as_str(), &String::from_utf8_lossy(value.as_bytes()));
    }
    evidence
}

/// Whether a successful response is the event stream asked for (a server that
/// names no type is given the benefit of the doubt).
fn is_event_stream(response: &reqwest::Response) -> bool {
    match response.headers().get(CONTENT_TYPE) {
        None => true,
        Some(value) => value.to_str().is_ok_and(|text| {
            text.trim()
                .to_ascii_lowercase()
                .starts_with("text/event-stream")
        }),
    }
}

/// The body, up to [`MAX_ERROR_BODY_BYTES`]; what arrived before a failure or a
/// stall longer than `idle` is kept, since the status already says the most.
async fn read_capped_body(mut response: reqwest::Response, idle: std::time::Duration) -> String {
    let mut body: Vec<u8> = Vec::new();
    while body.len() < MAX_ERROR_BODY_BYTES {
        match timeout(idle, response.chunk()).await {
            Ok(Ok(Some(chunk))) => {
                let room = MAX_ERROR_BODY_BYTES - body.len();
                body.extend_from_slice(&chunk[..chunk.len().min(room)]);
            }
            Ok(Ok(None)) | Ok(Err(_)) | Err(_) => break,
        }
    }
    String::from_utf8_lossy(&body).into_owned()
}
