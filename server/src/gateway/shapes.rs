//! What each protocol's clients expect back, byte for byte where it matters:
//! the whole answer, the stream's events (OpenAI's `chat.completion.chunk`s and
//! `[DONE]`; Anthropic's `message_start` to `message_stop`), and errors in the
//! protocol's own shape (OpenAI's `{"error": {message, type, param, code}}`,
//! Anthropic's `{"type": "error", "error": {type, message}}`).

use providers::{StopReason, ToolCall, ToolPiece, Usage, Wire};
use serde_json::{Value, json};

/// A refusal or failure as the gateway answers it, before the protocol shapes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// The HTTP status (429, 529, 404, ...).
    pub status: u16,
    /// What went wrong, for a person.
    pub message: String,
    /// The request's field at fault, if one is.
    pub param: Option<String>,
    /// Switchback's code for it (a semantic code, or `model_not_found`, ...).
    pub code: Option<String>,
    /// Seconds until trying again may work (`Retry-After`).
    pub retry_after_s: Option<u64>,
}

impl Failure {
    /// A failure with `status` and `message`, nothing else said.
    pub fn new(status: u16, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            param: None,
            code: None,
            retry_after_s: None,
        }
    }

    /// With Switchback's code for it.
    pub fn with_code(mut self, code: impl Into<String>) -> Self {
        self.code = Some(code.into());
        self
    }

    /// With the request's field at fault.
    pub fn with_param(mut self, param: impl Into<String>) -> Self {
        self.param = Some(param.into());
        self
    }

    /// The error body, in `wire`'s shape.
    pub fn body(&self, wire: Wire) -> Value {
        match wire {
            Wire::OpenAi => json!({"error": {
                "message": self.message,
                "type": openai_type(self.status),
                "param": self.param,
                "code": self.code,
            }}),
            Wire::Anthropic => json!({
                "type": "error",
                "error": {"type": anthropic_type(self.status), "message": self.message},
            }),
        }
    }

    /// The error as a stream's last event, once the answer has begun.
    pub fn event(&self, wire: Wire) -> String {
        match wire {
            Wire::OpenAi => sse(None, &self.body(wire)),
            Wire::Anthropic => sse(Some("error"), &self.body(wire)),
        }
    }
}

/// OpenAI's error `type` for a status.
fn openai_type(status: u16) -> &'static str {
    // OpenAI's own: a wrong key is an `invalid_request_error` (code
    // `invalid_api_key`), a limit a `rate_limit_error` (or `requests`), the rest
    // `server_error`.
    match status {
        400 | 401 | 403 | 404 | 409 | 413 | 422 => "invalid_request_error",
        429 => "rate_limit_error",
        _ => "server_error",
    }
}

/// Anthropic's error `type` for a status.
fn anthropic_type(status: u16) -> &'static str {
    match status {
        400 | 422 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        504 => "timeout_error",
        529 | 503 => "overloaded_error",
        _ => "api_error",
    }
}

/// One server-sent event.
pub fn sse(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(event) => format!("event: {event}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// How the protocol says why an answer stopped.
pub fn stop_reason(wire: Wire, stop: &StopReason) -> String {
    match (wire, stop) {
        (Wire::OpenAi, StopReason::End) => "stop".to_owned(),
        (Wire::OpenAi, StopReason::MaxTokens) => "length".to_owned(),
        (Wire::Anthropic, StopReason::End) => "end_turn".to_owned(),
        (Wire::Anthropic, StopReason::MaxTokens) => "max_tokens".to_owned(),
        // Another protocol's reason: the nearest this one has.
        (Wire::OpenAi, StopReason::Other(reason)) => match reason.as_str() {
            "refusal" => "content_filter".to_owned(),
            "stop_sequence" | "end_turn" => "stop".to_owned(),
            "tool_use" => "tool_calls".to_owned(),
            other => other.to_owned(),
        },
        (Wire::Anthropic, StopReason::Other(reason)) => match reason.as_str() {
            "content_filter" => "refusal".to_owned(),
            "tool_calls" | "function_call" => "tool_use".to_owned(),
            other => other.to_owned(),
        },
    }
}

/// What an answer's head says: its id, the model the client named, and when.
#[derive(Debug, Clone)]
pub struct Head {
    /// The call's task id.
    pub id: String,
    /// The profile name the client gave as `model`.
    pub model: String,
    /// When the call was made, unix seconds.
    pub created_s: i64,
}

/// The tokens used, in `wire`'s words.
fn usage_of(wire: Wire, usage: Usage) -> Value {
    match wire {
        Wire::OpenAi => json!({
            "prompt_tokens": usage.input_tokens,
            "completion_tokens": usage.output_tokens,
            "total_tokens": usage.input_tokens + usage.output_tokens,
        }),
        Wire::Anthropic => json!({
            "input_tokens": usage.input_tokens,
            "output_tokens": usage.output_tokens,
        }),
    }
}

/// A whole answer, as a client that does not stream gets it: its text and tool
/// calls; `usage` when the provider that answered counted it.
pub fn whole(
    wire: Wire,
    head: &Head,
    text: &str,
    tool_calls: &[ToolCall],
    stop: &StopReason,
    usage: Option<Usage>,
) -> Value {
    let reason = stop_reason(wire, stop);
    let mut answer = match wire {
        Wire::OpenAi => {
            // With tool calls and no text, OpenAI's content is null.
            let content = if text.is_empty() && !tool_calls.is_empty() {
                Value::Null
            } else {
                json!(text)
            };
            let mut message = json!({"role": "assistant", "content": content, "refusal": null});
            if !tool_calls.is_empty() {
                message["tool_calls"] = tool_calls
                    .iter()
                    .map(|call| {
                        json!({"id": call.id, "type": "function",
                               "function": {"name": call.name, "arguments": call.arguments}})
                    })
                    .collect();
            }
            json!({
                "id": head.id,
                "object": "chat.completion",
                "created": head.created_s,
                "model": head.model,
                "choices": [{
                    "index": 0,
                    "message": message,
                    "logprobs": null,
                    "finish_reason": reason,
                }],
            })
        }
        Wire::Anthropic => {
            let mut content = Vec::new();
            if !text.is_empty() || tool_calls.is_empty() {
                content.push(json!({"type": "text", "text": text}));
            }
            for call in tool_calls {
                content.push(json!({"type": "tool_use", "id": call.id, "name": call.name,
                                    "input": tool_input(&call.arguments)}));
            }
            json!({
                "id": head.id,
                "type": "message",
                "role": "assistant",
                "model": head.model,
                "content": content,
                "stop_reason": reason,
                "stop_sequence": null,
            })
        }
    };
    match (wire, usage) {
        (_, Some(usage)) => answer["usage"] = usage_of(wire, usage),
        // Anthropic's answers always count (its SDKs read the counts): nothing
        // counted is zero.
        (Wire::Anthropic, None) => answer["usage"] = usage_of(wire, Usage::default()),
        (Wire::OpenAi, None) => {}
    }
    answer
}

/// A tool call's arguments as Anthropic's `input`: the JSON object the model
/// wrote, or an empty one when it wrote nothing (a tool without parameters).
/// Arguments that are not JSON are passed on as their text.
fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments))
}

/// A streamed answer, written event by event in the client's protocol. For an
/// Anthropic client it keeps the content blocks in order, as Anthropic does: a
/// text block opens with the first text, each tool call is a block of its own,
/// a block is stopped before the next starts, and an answer with nothing in it
/// still has its (empty) text block.
pub struct StreamWriter {
    wire: Wire,
    head: Head,
    /// Anthropic: the block open now, and whether it is text.
    open: Option<(usize, bool)>,
    /// Anthropic: the next block's index.
    next_block: usize,
    /// Anthropic: each tool call's block.
    tool_blocks: Vec<usize>,
}

impl StreamWriter {
    /// A writer of `wire`'s events for the answer `head` names.
    pub fn new(wire: Wire, head: Head) -> Self {
        Self {
            wire,
            head,
            open: None,
            next_block: 0,
            tool_blocks: Vec::new(),
        }
    }

    /// The events that open the answer, before its first text.
    pub fn opening(&mut self) -> String {
        let head = &self.head;
        match self.wire {
            Wire::OpenAi => sse(
                None,
                &chunk(head, json!({"role": "assistant", "content": ""}), None),
            ),
            Wire::Anthropic => sse(
                Some("message_start"),
                &json!({"type": "message_start", "message": {
                    "id": head.id,
                    "type": "message",
                    "role": "assistant",
                    "model": head.model,
                    "content": [],
                    "stop_reason": null,
                    "stop_sequence": null,
                    // The counts come with the answer's end (`message_delta`).
                    "usage": usage_of(self.wire, Usage::default()),
                }}),
            ),
        }
    }

    /// One piece of the answer's text.
    pub fn text(&mut self, text: &str) -> String {
        match self.wire {
            Wire::OpenAi => sse(None, &chunk(&self.head, json!({"content": text}), None)),
            Wire::Anthropic => {
                let mut events = String::new();
                let index = match self.open {
                    Some((index, true)) => index,
                    // The first text, or text after a tool call: a block of its own.
                    _ => {
                        events
                            .push_str(&self.start_block(json!({"type": "text", "text": ""}), true));
                        self.next_block - 1
                    }
                };
                events.push_str(&sse(
                    Some("content_block_delta"),
                    &json!({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": text}}),
                ));
                events
            }
        }
    }

    /// One piece of a tool call.
    pub fn tool(&mut self, piece: &ToolPiece) -> String {
        match (self.wire, piece) {
            (Wire::OpenAi, ToolPiece::Begin { index, id, name }) => sse(
                None,
                &chunk(
                    &self.head,
                    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                                           "function": {"name": name, "arguments": ""}}]}),
                    None,
                ),
            ),
            (Wire::OpenAi, ToolPiece::Arguments { index, json }) => sse(
                None,
                &chunk(
                    &self.head,
                    json!({"tool_calls": [{"index": index, "function": {"arguments": json}}]}),
                    None,
                ),
            ),
            (Wire::Anthropic, ToolPiece::Begin { id, name, .. }) => {
                let block = self.next_block;
                self.tool_blocks.push(block);
                self.start_block(
                    json!({"type": "tool_use", "id": id, "name": name, "input": {}}),
                    false,
                )
            }
            (Wire::Anthropic, ToolPiece::Arguments { index, json }) => {
                match self.tool_blocks.get(*index) {
                    Some(block) => sse(
                        Some("content_block_delta"),
                        &json!({"type": "content_block_delta", "index": block,
                                "delta": {"type": "input_json_delta", "partial_json": json}}),
                    ),
                    None => String::new(),
                }
            }
        }
    }

    /// A whole tool call at once (an answer told after the fact).
    pub fn tool_call(&mut self, index: usize, call: &ToolCall) -> String {
        let mut events = self.tool(&ToolPiece::Begin {
            index,
            id: call.id.clone(),
            name: call.name.clone(),
        });
        if !call.arguments.is_empty() {
            events.push_str(&self.tool(&ToolPiece::Arguments {
                index,
                json: call.arguments.clone(),
            }));
        }
        events
    }

    /// The events that close an answer that ended as `stop` says: with the
    /// tokens used when the provider counted them, and for an OpenAI client that
    /// asked (`stream_options.include_usage`), the usage chunk before `[DONE]`.
    pub fn closing(
        &mut self,
        stop: &StopReason,
        usage: Option<Usage>,
        usage_chunk: bool,
    ) -> String {
        let wire = self.wire;
        let reason = stop_reason(wire, stop);
        match wire {
            Wire::OpenAi => {
                let mut events = sse(None, &chunk(&self.head, json!({}), Some(&reason)));
                if usage_chunk {
                    let mut last = chunk(&self.head, json!({}), None);
                    last["choices"] = json!([]);
                    last["usage"] = usage.map_or(Value::Null, |usage| usage_of(wire, usage));
                    events.push_str(&sse(None, &last));
                }
                events.push_str("data: [DONE]\n\n");
                events
            }
            Wire::Anthropic => {
                let mut events = String::new();
                if self.next_block == 0 {
                    events.push_str(&self.start_block(json!({"type": "text", "text": ""}), true));
                }
                events.push_str(&self.stop_block());
                let mut delta = json!({"type": "message_delta",
                                       "delta": {"stop_reason": reason, "stop_sequence": null}});
                delta["usage"] = usage_of(wire, usage.unwrap_or_default());
                events.push_str(&sse(Some("message_delta"), &delta));
                events.push_str(&sse(Some("message_stop"), &json!({"type": "message_stop"})));
                events
            }
        }
    }

    /// Anthropic: stop the open block, if one is, and start `block`.
    fn start_block(&mut self, block: Value, text: bool) -> String {
        let mut events = self.stop_block();
        let index = self.next_block;
        self.next_block += 1;
        self.open = Some((index, text));
        events.push_str(&sse(
            Some("content_block_start"),
            &json!({"type": "content_block_start", "index": index, "content_block": block}),
        ));
        events
    }

    /// Anthropic: stop the open block, if one is.
    fn stop_block(&mut self) -> String {
        match self.open.take() {
            Some((index, _)) => sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": index}),
            ),
            None => String::new(),
        }
    }
}

fn chunk(head: &Head, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({
        "id": head.id,
        "object": "chat.completion.chunk",
        "created": head.created_s,
        "model": head.model,
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head() -> Head {
        Head {
            id: "t1".to_owned(),
            model: "fast".to_owned(),
            created_s: 1_800_000_000,
        }
    }

    /// A stream's events parse as the protocol's reader expects: OpenAI's end
    /// with a finish reason and `[DONE]`, Anthropic's run from `message_start`
    /// to `message_stop`, and the text comes back whole.
    #[test]
    fn streams_read_back_as_the_protocols_readers_read_them() {
        for wire in [Wire::OpenAi, Wire::Anthropic] {
            let mut writer = StreamWriter::new(wire, head());
            let events = [
                writer.opening(),
                writer.text("Hel"),
                writer.text("lo"),
                writer.closing(
                    &StopReason::MaxTokens,
                    Some(Usage {
                        input_tokens: 3,
                        output_tokens: 2,
                    }),
                    true,
                ),
            ]
            .concat();
            let reading = providers::read_stream_chunks(wire, [events.as_bytes()]);
            assert_eq!(reading.text, "Hello", "{wire:?}");
            assert_eq!(reading.stop, Some(StopReason::MaxTokens), "{wire:?}");
        }
    }

    /// Tool calls stream in each protocol's own events and read back whole,
    /// after the text, with the protocol's stop reason.
    #[test]
    fn tool_calls_stream_as_each_protocol_streams_them() {
        let call = ToolCall {
            id: "call_1".to_owned(),
            name: "read_file".to_owned(),
            arguments: r#"{"path":"a.rs"}"#.to_owned(),
        };
        for wire in [Wire::OpenAi, Wire::Anthropic] {
            let mut writer = StreamWriter::new(wire, head());
            let events = [
                writer.opening(),
                writer.text("Reading it."),
                writer.tool(&ToolPiece::Begin {
                    index: 0,
                    id: call.id.clone(),
                    name: call.name.clone(),
                }),
                writer.tool(&ToolPiece::Arguments {
                    index: 0,
                    json: r#"{"path":"#.to_owned(),
                }),
                writer.tool(&ToolPiece::Arguments {
                    index: 0,
                    json: r#""a.rs"}"#.to_owned(),
                }),
                writer.tool_call(
                    1,
                    &ToolCall {
                        id: "call_2".into(),
                        name: "ls".into(),
                        arguments: String::new(),
                    },
                ),
                writer.closing(&StopReason::Other("tool_use".to_owned()), None, false),
            ]
            .concat();
            let reading = providers::read_stream_chunks(wire, [events.as_bytes()]);
            assert_eq!(reading.end, providers::StreamEnd::Finished, "{wire:?}");
            assert_eq!(reading.text, "Reading it.", "{wire:?}");
            assert_eq!(reading.tool_calls[0], call, "{wire:?}");
            assert_eq!(reading.tool_calls[1].name, "ls", "{wire:?}");
            let reason = match wire {
                Wire::OpenAi => "tool_calls",
                Wire::Anthropic => "tool_use",
            };
            assert_eq!(
                reading.stop,
                Some(StopReason::Other(reason.to_owned())),
                "{wire:?}"
            );
        }
    }

    /// An Anthropic answer of a tool call alone has one block, the call, at
    /// index 0 (as Anthropic streams it); an empty answer still has its text block.
    #[test]
    fn anthropic_blocks_open_with_what_they_hold() {
        let mut writer = StreamWriter::new(Wire::Anthropic, head());
        let events = [
            writer.opening(),
            writer.tool(&ToolPiece::Begin {
                index: 0,
                id: "toolu_1".to_owned(),
                name: "ls".to_owned(),
            }),
            writer.closing(&StopReason::Other("tool_use".to_owned()), None, false),
        ]
        .concat();
        let starts: Vec<Value> = events
            .lines()
            .filter_map(|line| line.strip_prefix("data: "))
            .map(|data| serde_json::from_str::<Value>(data).unwrap())
            .filter(|data| data["type"] == "content_block_start")
            .map(|data| json!([data["index"], data["content_block"]["type"]]))
            .collect();
        assert_eq!(starts, [json!([0, "tool_use"])], "{events}");
        let mut writer = StreamWriter::new(Wire::Anthropic, head());
        let events = [
            writer.opening(),
            writer.closing(&StopReason::End, None, false),
        ]
        .concat();
        let reading = providers::read_stream_chunks(Wire::Anthropic, [events.as_bytes()]);
        assert_eq!(reading.end, providers::StreamEnd::Finished);
        assert!(
            events.contains(r#""content_block":{"text":"","type":"text"}"#)
                || events.contains(r#""content_block":{"type":"text","text":""}"#),
            "{events}"
        );
    }

    #[test]
    fn a_whole_answer_carries_its_tool_calls() {
        let calls = [ToolCall {
            id: "toolu_1".to_owned(),
            name: "get_weather".to_owned(),
            arguments: r#"{"city": "Paris"}"#.to_owned(),
        }];
        let stop = StopReason::Other("tool_use".to_owned());
        let anthropic = whole(Wire::Anthropic, &head(), "", &calls, &stop, None);
        assert_eq!(
            anthropic["content"],
            json!([{"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}}])
        );
        assert_eq!(anthropic["stop_reason"], "tool_use");
        let openai = whole(Wire::OpenAi, &head(), "", &calls, &stop, None);
        let message = &openai["choices"][0]["message"];
        assert_eq!(message["content"], Value::Null);
        assert_eq!(
            message["tool_calls"][0]["function"]["arguments"],
            r#"{"city": "Paris"}"#
        );
        assert_eq!(openai["choices"][0]["finish_reason"], "tool_calls");
    }

    #[test]
    fn errors_take_each_protocols_shape() {
        let failure = Failure::new(529, "every candidate is overloaded").with_code("overloaded");
        assert_eq!(
            failure.body(Wire::Anthropic),
            json!({"type": "error", "error": {"type": "overloaded_error",
                   "message": "every candidate is overloaded"}})
        );
        assert_eq!(
            failure.body(Wire::OpenAi)["error"]["type"],
            json!("server_error")
        );
        assert!(
            failure
                .event(Wire::Anthropic)
                .starts_with("event: error\ndata: {")
        );
    }
}
