//! The two wire formats: the request each sends and what each stream event means,
//! and the server-sent events of a body ([`events`]).

use std::convert::Infallible;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use eventsource_stream::{Event, EventStream, EventStreamError, Eventsource};
use futures_util::stream::{self, Fuse};
use futures_util::{FutureExt, Stream, StreamExt};
use serde_json::{Value, json};

use crate::call::{CallRequest, StopReason, ToolCall, ToolPiece};

/// The answer as the stream has built it so far.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Every text piece so far, joined.
    pub(crate) text: String,
    /// The stop reason, once the provider gave one.
    pub(crate) stop: Option<StopReason>,
    /// The tokens used, as far as the provider said.
    pub(crate) usage: Option<crate::call::Usage>,
    /// The tool calls so far, in order.
    pub(crate) tool_calls: Vec<ToolCall>,
    /// The pieces of tool calls read since they were last taken
    /// ([`Progress::take_tool_pieces`]).
    tool_pieces: Vec<ToolPiece>,
    /// Anthropic: which content block (by its index) is which tool call.
    tool_blocks: Vec<(u64, usize)>,
}

impl Progress {
    /// A tool call begins.
    fn begin_tool(&mut self, id: &str, name: &str) -> usize {
        let index = self.tool_calls.len();
        self.read_tool(ToolPiece::Begin {
            index,
            id: id.to_owned(),
            name: name.to_owned(),
        });
        index
    }

    /// More of the `index`-th tool call's arguments.
    fn tool_arguments(&mut self, index: usize, json: &str) {
        if index < self.tool_calls.len() && !json.is_empty() {
            self.read_tool(ToolPiece::Arguments {
                index,
                json: json.to_owned(),
            });
        }
    }

    /// A piece read: into the calls so far, and kept to be passed on.
    fn read_tool(&mut self, piece: ToolPiece) {
        piece.add_to(&mut self.tool_calls);
        self.tool_pieces.push(piece);
    }

    /// The tool call pieces read since the last time.
    pub(crate) fn take_tool_pieces(&mut self) -> Vec<ToolPiece> {
        std::mem::take(&mut self.tool_pieces)
    }

    /// Everything the answer has streamed so far: its text, then each tool call
    /// as `[tool call NAME ARGUMENTS]` (what a failure leaves behind).
    pub(crate) fn output(&self) -> String {
        let mut output = self.text.clone();
        for call in &self.tool_calls {
            if !output.is_empty() {
                output.push('\n');
            }
            output.push_str(&format!("[tool call {} {}]", call.name, call.arguments));
        }
        output
    }

    /// Note what the provider said of the tokens used (either count may come
    /// alone: Anthropic gives the request's first and the answer's last).
    fn count(&mut self, input_tokens: Option<u64>, output_tokens: Option<u64>) {
        if input_tokens.is_none() && output_tokens.is_none() {
            return;
        }
        let usage = self.usage.get_or_insert_default();
        if let Some(input_tokens) = input_tokens {
            usage.input_tokens = input_tokens;
        }
        if let Some(output_tokens) = output_tokens {
            usage.output_tokens = output_tokens;
        }
    }
}

/// What one stream event means for the call.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum EventMeaning {
    /// Keep reading (text, if any, went into the progress).
    Continue,
    /// The answer is complete.
    Finished,
    /// The stream reported an error, or carried something unreadable: `body` is the
    /// event's data, for the catalogue.
    Failed {
        /// The event's data.
        body: String,
    },
}

/// A streaming wire protocol. Public for [`read_stream_chunks`]; the adapters pick
/// one by the provider's kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// Anthropic's Messages API.
    Anthropic,
    /// OpenAI's Chat Completions API (and every server that copies it).
    OpenAi,
}

impl Wire {
    /// The protocol's name as stored and shown: `anthropic`, `openai`.
    ///
    /// ```
    /// use providers::Wire;
    /// assert_eq!(Wire::from_name(Wire::OpenAi.as_str()), Some(Wire::OpenAi));
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::OpenAi => "openai",
        }
    }

    /// The protocol of a stored name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "anthropic" => Some(Self::Anthropic),
            "openai" => Some(Self::OpenAi),
            _ => None,
        }
    }

    /// The request path under the base URL.
    pub(crate) fn path(self) -> &'static str {
        match self {
            Self::Anthropic => "/v1/messages",
            Self::OpenAi => "/v1/chat/completions",
        }
    }

    /// Whether the key travels as `authorization: Bearer` (else `x-api-key`).
    pub(crate) fn bearer(self) -> bool {
        self == Self::OpenAi
    }

    /// Headers every request of this protocol carries, besides the key and the type.
    pub(crate) fn fixed_headers(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Self::Anthropic => &[("anthropic-version", "2023-06-01")],
            Self::OpenAi => &[],
        }
    }

    /// The JSON request body: a gateway client's own request as this protocol
    /// carries it (see [`crate::ClientRequest::body_for`]), or else the same shape
    /// for both protocols.
    pub(crate) fn request_body(
        self,
        request: &CallRequest,
    ) -> Result<Value, crate::translate::Unsupported> {
        if let Some(client) = &request.client {
            return client.body_for(self, &request.model, request.max_tokens);
        }
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|message| json!({"role": message.role.as_str(), "content": message.content}))
            .collect();
        Ok(json!({
            "model": request.model,
            "max_tokens": request.max_tokens,
            "messages": messages,
            "stream": true,
        }))
    }

    /// Reads one event into `progress`.
    pub(crate) fn read_event(self, event: &Event, progress: &mut Progress) -> EventMeaning {
        match self {
            Self::Anthropic => anthropic::read_event(event, progress),
            Self::OpenAi => openai::read_event(event, progress),
        }
    }

    /// Whether a stream that ends (or stalls) once a stop reason has arrived still
    /// gave a complete answer. OpenAI's `finish_reason` ends the answer (`[DONE]` and
    /// a usage chunk may follow); Anthropic's answer is complete only at `message_stop`.
    pub(crate) fn complete_at_stop(self) -> bool {
        self == Self::OpenAi
    }
}

/// The UTF-8 byte-order mark, which may open an event stream (once).
const BYTE_ORDER_MARK: &[u8] = "\u{feff}".as_bytes();

/// A comment line: the SSE parser reads it and ignores it.
const IGNORED_COMMENT: &[u8] = b":\n";

/// The server-sent events of a body (a stream of byte chunks).
///
/// eventsource-stream 0.2.3 strips a leading byte-order mark by slicing one byte off
/// the text, but U+FEFF is three bytes in UTF-8, so a body that opens with one panics
/// (jpopesculian/eventsource-stream#10). Here the parser is first handed a comment
/// line, which it ignores and after which it no longer looks for a mark, and the one
/// leading mark the SSE format allows is stripped before the parser sees the body,
/// even when its three bytes arrive in different chunks. Everything else is the
/// parser's, unchanged.
pub(crate) fn events<S, B, E>(body: S) -> EventStream<Body<S>>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    Body {
        chunks: body.fuse(),
        opening: Opening::Comment,
    }
    .eventsource()
}

/// A body as [`events`] hands it to the SSE parser: an ignored comment line first,
/// then the body without its leading byte-order mark.
pub(crate) struct Body<S> {
    chunks: Fuse<S>,
    opening: Opening,
}

/// How far into its opening a [`Body`] is.
enum Opening {
    /// The comment line is still to be handed over.
    Comment,
    /// The first bytes, held until they show whether the body opens with a mark.
    Held(Vec<u8>),
    /// Past the opening: chunks pass through as they come.
    Passed,
}

/// One piece of a [`Body`].
pub(crate) enum Piece<B> {
    /// A chunk as the body delivered it.
    Chunk(B),
    /// The opening comment line.
    Comment,
    /// The first bytes of the body, without a leading mark.
    Opening(Vec<u8>),
}

impl<B: AsRef<[u8]>> AsRef<[u8]> for Piece<B> {
    fn as_ref(&self) -> &[u8] {
        match self {
            Self::Chunk(chunk) => chunk.as_ref(),
            Self::Comment => IGNORED_COMMENT,
            Self::Opening(bytes) => bytes,
        }
    }
}

impl<S, B, E> Stream for Body<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: AsRef<[u8]>,
{
    type Item = Result<Piece<B>, E>;

    fn poll_next(self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let held = match &mut this.opening {
                Opening::Comment => {
                    this.opening = Opening::Held(Vec::new());
                    return Poll::Ready(Some(Ok(Piece::Comment)));
                }
                Opening::Passed => {
                    let next = ready!(this.chunks.poll_next_unpin(context));
                    return Poll::Ready(next.map(|chunk| chunk.map(Piece::Chunk)));
                }
                Opening::Held(held) => held,
            };
            match ready!(this.chunks.poll_next_unpin(context)) {
                Some(Ok(chunk)) => {
                    held.extend_from_slice(chunk.as_ref());
                    if held.len() < BYTE_ORDER_MARK.len() && BYTE_ORDER_MARK.starts_with(held) {
                        continue;
                    }
                }
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                // The body ended within its opening: what was held goes on as it came
                // (the start of a mark alone is not UTF-8, as the parser will say).
                None => {}
            }
            let mut opening = std::mem::take(held);
            if opening.starts_with(BYTE_ORDER_MARK) {
                opening.drain(..BYTE_ORDER_MARK.len());
            }
            this.opening = Opening::Passed;
            return Poll::Ready(Some(Ok(Piece::Opening(opening))));
        }
    }
}

/// How a body read by [`read_stream_chunks`] ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEnd {
    /// Its terminal event arrived (`message_stop`, `[DONE]`).
    Finished,
    /// An event reported an error, or could not be read.
    Failed {
        /// The event's data, which a call gives the catalogue as the body.
        body: String,
    },
    /// The bytes ran out before a terminal event.
    Closed,
    /// The bytes were not valid UTF-8.
    NotUtf8,
    /// The bytes could not be parsed as server-sent events.
    NotEvents,
}

/// What a whole body said, read by [`read_stream_chunks`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamReading {
    /// Every text piece before the end, joined.
    pub text: String,
    /// The stop reason, if the provider gave one.
    pub stop: Option<StopReason>,
    /// The tool calls before the end, in order.
    pub tool_calls: Vec<ToolCall>,
    /// How the body ended.
    pub end: StreamEnd,
}

/// Reads a whole body, delivered in `chunks`, event by event the way a call reads its
/// stream (the same SSE parsing, [`events`], and the same reading of each event), but
/// with every chunk at hand and so no timeouts. For the fuzz targets (`fuzz/`) and
/// tests: whatever the bytes and wherever the chunks split them, it never panics.
///
/// ```
/// use providers::{StreamEnd, Wire, read_stream_chunks};
/// let body = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
/// let (first, rest) = body.as_bytes().split_at(9);
/// let reading = read_stream_chunks(Wire::OpenAi, [first, rest]);
/// assert_eq!((reading.text.as_str(), reading.end), ("Hi", StreamEnd::Finished));
/// ```
pub fn read_stream_chunks<'a>(
    wire: Wire,
    chunks: impl IntoIterator<Item = &'a [u8]>,
) -> StreamReading {
    let body = stream::iter(chunks.into_iter().map(Ok::<_, Infallible>));
    let mut events = events(body);
    let mut progress = Progress::default();
    let end = loop {
        // Every chunk is at hand, so the stream is always ready.
        let Some(next) = events.next().now_or_never() else {
            break StreamEnd::Closed;
        };
        match next {
            None => break StreamEnd::Closed,
            Some(Ok(event)) => match wire.read_event(&event, &mut progress) {
                EventMeaning::Continue => continue,
                EventMeaning::Finished => break StreamEnd::Finished,
                EventMeaning::Failed { body } => break StreamEnd::Failed { body },
            },
            Some(Err(EventStreamError::Utf8(_))) => break StreamEnd::NotUtf8,
            Some(Err(EventStreamError::Parser(_))) => break StreamEnd::NotEvents,
            Some(Err(EventStreamError::Transport(never))) => match never {},
        }
    };
    StreamReading {
        text: progress.text,
        stop: progress.stop,
        tool_calls: progress.tool_calls,
        end,
    }
}

/// Anthropic's events: `message_start`, `content_block_start`, `content_block_delta`,
/// `content_block_stop`, `message_delta`, `message_stop`, `ping` and `error`.
mod anthropic {
    use eventsource_stream::Event;
    use serde::Deserialize;

    use super::{EventMeaning, Progress};
    use crate::call::StopReason;

    /// The fields of an event's data this adapter reads.
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Data {
        #[serde(rename = "type")]
        kind: String,
        index: u64,
        delta: Delta,
        content_block: ContentBlock,
        message: MessageData,
        usage: Option<UsageData>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct MessageData {
        usage: Option<UsageData>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct UsageData {
        input_tokens: Option<u64>,
        output_tokens: Option<u64>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Delta {
        #[serde(rename = "type")]
        kind: String,
        text: String,
        partial_json: String,
        stop_reason: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct ContentBlock {
        #[serde(rename = "type")]
        kind: String,
        text: String,
        id: String,
        name: String,
    }

    pub(super) fn read_event(event: &Event, progress: &mut Progress) -> EventMeaning {
        let data = serde_json::from_str::<Data>(&event.data);
        // The event's name says what it is; an unnamed event says it in its data.
        let kind = match (event.event.as_str(), &data) {
            ("message", Ok(data)) => data.kind.as_str(),
            (name, _) => name,
        };
        if kind == "error" {
            return EventMeaning::Failed {
                body: event.data.clone(),
            };
        }
        if !matches!(
            kind,
            "message_start"
                | "content_block_start"
                | "content_block_delta"
                | "message_delta"
                | "message_stop"
        ) {
            // `content_block_stop`, `ping`, and event types added after
            // this was written: nothing to read.
            return EventMeaning::Continue;
        }
        let Ok(data) = &data else {
            return EventMeaning::Failed {
                body: event.data.clone(),
            };
        };
        let usage = match kind {
            "message_start" => data.message.usage.as_ref(),
            _ => data.usage.as_ref(),
        };
        if let Some(usage) = usage {
            progress.count(usage.input_tokens, usage.output_tokens);
        }
        match kind {
            "content_block_start" if data.content_block.kind == "text" => {
                progress.text.push_str(&data.content_block.text);
            }
            "content_block_delta" if data.delta.kind == "text_delta" => {
                progress.text.push_str(&data.delta.text);
            }
            "content_block_start" if data.content_block.kind == "tool_use" => {
                let tool = progress.begin_tool(&data.content_block.id, &data.content_block.name);
                progress.tool_blocks.push((data.index, tool));
            }
            "content_block_delta" if data.delta.kind == "input_json_delta" => {
                let tool = progress
                    .tool_blocks
                    .iter()
                    .find(|(block, _)| *block == data.index)
                    .map(|(_, tool)| *tool);
                if let Some(tool) = tool {
                    progress.tool_arguments(tool, &data.delta.partial_json);
                }
            }
            "message_delta" => {
                if let Some(reason) = &data.delta.stop_reason {
                    progress.stop = Some(stop_reason(reason));
                }
            }
            "message_stop" => return EventMeaning::Finished,
            _ => {}
        }
        EventMeaning::Continue
    }

    /// `end_turn`/`stop_sequence` -> End, `max_tokens` -> MaxTokens.
    fn stop_reason(reason: &str) -> StopReason {
        match reason {
            "end_turn" | "stop_sequence" => StopReason::End,
            "max_tokens" => StopReason::MaxTokens,
            other => StopReason::Other(other.to_owned()),
        }
    }
}

/// OpenAI's chunks: `data: {"choices":[{"delta":{"content":"..."},"finish_reason":...}]}`
/// until `data: [DONE]`; some compatible servers send `data: {"error":{...}}` mid-stream.
mod openai {
    use eventsource_stream::Event;
    use serde::Deserialize;
    use serde_json::Value;

    use super::{EventMeaning, Progress};
    use crate::call::StopReason;

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Chunk {
        error: Option<Value>,
        choices: Vec<Choice>,
        usage: Option<UsageData>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct UsageData {
        prompt_tokens: Option<u64>,
        completion_tokens: Option<u64>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Choice {
        index: u32,
        delta: Delta,
        finish_reason: Option<String>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct Delta {
        content: Option<String>,
        // Some compatible servers send `null` for "none".
        tool_calls: Option<Vec<ToolCallDelta>>,
    }

    /// A piece of a tool call: the first of an index names it, the rest carry
    /// its arguments.
    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct ToolCallDelta {
        index: Option<usize>,
        id: Option<String>,
        function: Option<FunctionDelta>,
    }

    #[derive(Debug, Default, Deserialize)]
    #[serde(default)]
    struct FunctionDelta {
        name: Option<String>,
        arguments: Option<String>,
    }

    pub(super) fn read_event(event: &Event, progress: &mut Progress) -> EventMeaning {
        if event.data.trim() == "[DONE]" {
            return EventMeaning::Finished;
        }
        let Ok(chunk) = serde_json::from_str::<Chunk>(&event.data) else {
            return EventMeaning::Failed {
                body: event.data.clone(),
            };
        };
        if chunk.error.is_some_and(|error| !error.is_null()) {
            return EventMeaning::Failed {
                body: event.data.clone(),
            };
        }
        if let Some(usage) = &chunk.usage {
            progress.count(usage.prompt_tokens, usage.completion_tokens);
        }
        // One answer was asked for: choice 0.
        for choice in chunk.choices.into_iter().filter(|choice| choice.index == 0) {
            if let Some(content) = choice.delta.content {
                progress.text.push_str(&content);
            }
            for call in choice.delta.tool_calls.unwrap_or_default() {
                let function = call.function.unwrap_or_default();
                let id = call.id.filter(|id| !id.is_empty());
                // A call begins at a new index; from a server that numbers none,
                // with a new id.
                let begins = match (call.index, &id) {
                    (Some(index), _) => index >= progress.tool_calls.len(),
                    (None, Some(id)) => {
                        progress.tool_calls.last().is_none_or(|last| &last.id != id)
                    }
                    (None, None) => progress.tool_calls.is_empty(),
                };
                if begins {
                    progress.begin_tool(
                        id.as_deref().unwrap_or_default(),
                        function.name.as_deref().unwrap_or_default(),
                    );
                }
                let last = progress.tool_calls.len() - 1;
                let index = call.index.map_or(last, |index| index.min(last));
                if let Some(arguments) = &function.arguments {
                    progress.tool_arguments(index, arguments);
                }
            }
            if let Some(reason) = choice.finish_reason {
                progress.stop = Some(stop_reason(&reason));
            }
        }
        EventMeaning::Continue
    }

    /// `stop` -> End, `length` -> MaxTokens.
    fn stop_reason(reason: &str) -> StopReason {
        match reason {
            "stop" => StopReason::End,
            "length" => StopReason::MaxTokens,
            other => StopReason::Other(other.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use eventsource_stream::Event;

    use super::{EventMeaning, Progress, Wire};
    use crate::call::StopReason;

    fn event(name: &str, data: &str) -> Event {
        Event {
            event: name.to_owned(),
            data: data.to_owned(),
            ..Event::default()
        }
    }

    /// One row: events of one protocol, what the last one means, and the progress after all.
    struct Row {
        wire: Wire,
        events: Vec<Event>,
        meaning: EventMeaning,
        text: &'static str,
        stop: Option<StopReason>,
    }

    fn row(
        wire: Wire,
        events: Vec<Event>,
        meaning: EventMeaning,
        text: &'static str,
        stop: Option<StopReason>,
    ) -> Row {
        Row {
            wire,
            events,
            meaning,
            text,
            stop,
        }
    }

    /// What each event of each protocol contributes.
    #[test]
    fn events_read_into_progress() {
        let rows = vec![
            row(
                Wire::Anthropic,
                vec![
                    event("message_start", r#"{"type":"message_start","message":{}}"#),
                    event(
                        "content_block_start",
                        r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
                    ),
                    event("ping", r#"{"type": "ping"}"#),
                    event(
                        "content_block_delta",
                        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel"}}"#,
                    ),
                    event(
                        "content_block_delta",
                        r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{"}}"#,
                    ),
                    event(
                        "content_block_delta",
                        r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"lo"}}"#,
                    ),
                    event(
                        "message_delta",
                        r#"{"type":"message_delta","delta":{"stop_reason":"stop_sequence"}}"#,
                    ),
                    event("message_stop", r#"{"type":"message_stop"}"#),
                ],
                EventMeaning::Finished,
                "Hello",
                Some(StopReason::End),
            ),
            row(
                Wire::Anthropic,
                vec![event(
                    "message_delta",
                    r#"{"type":"message_delta","delta":{"stop_reason":"refusal"}}"#,
                )],
                EventMeaning::Continue,
                "",
                Some(StopReason::Other("refusal".into())),
            ),
            row(
                Wire::Anthropic,
                vec![event(
                    "message",
                    r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"unnamed"}}"#,
                )],
                EventMeaning::Continue,
                "unnamed",
                None,
            ),
            row(
                Wire::Anthropic,
                vec![event("brand_new_event", "not json")],
                EventMeaning::Continue,
                "",
                None,
            ),
            row(
                Wire::Anthropic,
                vec![event("content_block_delta", "{not json")],
                EventMeaning::Failed {
                    body: "{not json".into(),
                },
                "",
                None,
            ),
            row(
                Wire::Anthropic,
                vec![event(
                    "error",
                    r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
                )],
                EventMeaning::Failed {
                    body: r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#.into(),
                },
                "",
                None,
            ),
            row(
                Wire::OpenAi,
                vec![
                    event("message", r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}"#),
                    event("message", r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}"#),
                    event("message", r#"{"choices":[{"index":1,"delta":{"content":"other choice"}}]}"#),
                    event("message", r#"{"choices":[{"index":0,"delta":{},"finish_reason":"length"}]}"#),
                    event("message", r#"{"choices":[],"usage":{"total_tokens":3}}"#),
                    event("message", "[DONE]"),
                ],
                EventMeaning::Finished,
                "Hi",
                Some(StopReason::MaxTokens),
            ),
            row(
                Wire::OpenAi,
                vec![event("message", r#"{"choices":[{"delta":{"content":null},"finish_reason":"content_filter"}]}"#)],
                EventMeaning::Continue,
                "",
                Some(StopReason::Other("content_filter".into())),
            ),
            row(
                Wire::OpenAi,
                vec![event("message", r#"{"error":null,"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}"#)],
                EventMeaning::Continue,
                "x",
                Some(StopReason::End),
            ),
            row(
                Wire::OpenAi,
                vec![event("message", r#"{"error":{"message":"upstream overloaded","code":503}}"#)],
                EventMeaning::Failed {
                    body: r#"{"error":{"message":"upstream overloaded","code":503}}"#.into(),
                },
                "",
                None,
            ),
            row(
                Wire::OpenAi,
                vec![event("message", "<html>")],
                EventMeaning::Failed { body: "<html>".into() },
                "",
                None,
            ),
        ];
        for row in rows {
            let mut progress = Progress::default();
            let mut meaning = EventMeaning::Continue;
            for event in &row.events {
                meaning = row.wire.read_event(event, &mut progress);
            }
            let context = format!(
                "{:?} {:?}",
                row.wire,
                row.events.last().map(|event| &event.data)
            );
            assert_eq!(meaning, row.meaning, "{context}");
            assert_eq!(progress.text, row.text, "{context}");
            assert_eq!(progress.stop, row.stop, "{context}");
        }
    }

    /// Tool calls as each protocol streams them: Anthropic's `tool_use` blocks by
    /// their index, OpenAI's `delta.tool_calls` by theirs (or, from a server that
    /// numbers none, by a new id); `"tool_calls": null` is none, not a failure.
    #[test]
    fn tool_calls_are_read_from_either_protocol() {
        let mut progress = Progress::default();
        for (name, data) in [
            (
                "content_block_start",
                r#"{"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"ls","input":{}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"dir\":"}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"\"src\"}"}}"#,
            ),
        ] {
            assert_eq!(
                Wire::Anthropic.read_event(&event(name, data), &mut progress),
                EventMeaning::Continue
            );
        }
        assert_eq!(progress.tool_calls[0].arguments, r#"{"dir":"src"}"#);
        assert_eq!(progress.take_tool_pieces().len(), 3);
        let mut progress = Progress::default();
        for data in [
            r#"{"choices":[{"index":0,"delta":{"content":"Hi","tool_calls":null}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"a","function":{"name":"ls","arguments":"{}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"b","function":{"name":"cat","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"function":{"arguments":"{\"f\":1}"}}]}}]}"#,
        ] {
            assert_eq!(
                Wire::OpenAi.read_event(&event("message", data), &mut progress),
                EventMeaning::Continue,
                "{data}"
            );
        }
        assert_eq!(progress.text, "Hi");
        let calls: Vec<(&str, &str)> = progress
            .tool_calls
            .iter()
            .map(|call| (call.name.as_str(), call.arguments.as_str()))
            .collect();
        assert_eq!(calls, [("ls", "{}"), ("cat", r#"{"f":1}"#)]);
        assert!(progress.output().ends_with(r#"[tool call cat {"f":1}]"#));
    }

    /// The tokens used, as each protocol says them: Anthropic's request count in
    /// `message_start` and answer count in `message_delta`; OpenAI's in the last
    /// chunk (asked for with `stream_options.include_usage`).
    #[test]
    fn usage_is_read_from_either_protocol() {
        let mut progress = Progress::default();
        for (name, data) in [
            (
                "message_start",
                r#"{"type":"message_start","message":{"usage":{"input_tokens":12,"output_tokens":1}}}"#,
            ),
            (
                "content_block_delta",
                r#"{"type":"content_block_delta","delta":{"type":"text_delta","text":"Hi"}}"#,
            ),
            (
                "message_delta",
                r#"{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}"#,
            ),
        ] {
            Wire::Anthropic.read_event(&event(name, data), &mut progress);
        }
        assert_eq!(
            progress.usage,
            Some(crate::call::Usage {
                input_tokens: 12,
                output_tokens: 7
            })
        );
        let mut progress = Progress::default();
        Wire::OpenAi.read_event(
            &event(
                "message",
                r#"{"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":"stop"}]}"#,
            ),
            &mut progress,
        );
        assert_eq!(progress.usage, None);
        Wire::OpenAi.read_event(
            &event("message", r#"{"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#),
            &mut progress,
        );
        assert_eq!(
            progress.usage,
            Some(crate::call::Usage {
                input_tokens: 5,
                output_tokens: 2
            })
        );
    }
}
