//! What each protocol's clients expect back, byte for byte where it matters:
//! the whole answer, the stream's events (OpenAI's `chat.completion.chunk`s and
//! `[DONE]`; Anthropic's `message_start` to `message_stop`), and errors in the
//! protocol's own shape (OpenAI's `{"error": {message, type, param, code}}`,
//! Anthropic's `{"type": "error", "error": {type, message}}`).

use providers::{StopReason, Usage, Wire};
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

/// A whole answer, as a client that does not stream gets it; `usage` when the
/// provider that answered counted it.
pub fn whole(
    wire: Wire,
    head: &Head,
    text: &str,
    stop: &StopReason,
    usage: Option<Usage>,
) -> Value {
    let reason = stop_reason(wire, stop);
    let mut answer = match wire {
        Wire::OpenAi => json!({
            "id": head.id,
            "object": "chat.completion",
            "created": head.created_s,
            "model": head.model,
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": null},
                "logprobs": null,
                "finish_reason": reason,
            }],
        }),
        Wire::Anthropic => json!({
            "id": head.id,
            "type": "message",
            "role": "assistant",
            "model": head.model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": reason,
            "stop_sequence": null,
        }),
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

/// The events that open a streamed answer, before its first text.
pub fn opening(wire: Wire, head: &Head) -> String {
    match wire {
        Wire::OpenAi => sse(
            None,
            &chunk(head, json!({"role": "assistant", "content": ""}), None),
        ),
        Wire::Anthropic => {
            let mut events = sse(
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
                    "usage": usage_of(wire, Usage::default()),
                }}),
            );
            events.push_str(&sse(
                Some("content_block_start"),
                &json!({"type": "content_block_start", "index": 0,
                        "content_block": {"type": "text", "text": ""}}),
            ));
            events
        }
    }
}

/// One piece of a streamed answer's text.
pub fn piece(wire: Wire, head: &Head, text: &str) -> String {
    match wire {
        Wire::OpenAi => sse(None, &chunk(head, json!({"content": text}), None)),
        Wire::Anthropic => sse(
            Some("content_block_delta"),
            &json!({"type": "content_block_delta", "index": 0,
                    "delta": {"type": "text_delta", "text": text}}),
        ),
    }
}

/// The events that close a streamed answer that ended as `stop` says: with
/// the tokens used when the provider counted them, and for an OpenAI client
/// that asked (`stream_options.include_usage`), the usage chunk before `[DONE]`.
pub fn closing(
    wire: Wire,
    head: &Head,
    stop: &StopReason,
    usage: Option<Usage>,
    usage_chunk: bool,
) -> String {
    let reason = stop_reason(wire, stop);
    match wire {
        Wire::OpenAi => {
            let mut events = sse(None, &chunk(head, json!({}), Some(&reason)));
            if usage_chunk {
                let mut last = chunk(head, json!({}), None);
                last["choices"] = json!([]);
                last["usage"] = usage.map_or(Value::Null, |usage| usage_of(wire, usage));
                events.push_str(&sse(None, &last));
            }
            events.push_str("data: [DONE]\n\n");
            events
        }
        Wire::Anthropic => {
            let mut events = sse(
                Some("content_block_stop"),
                &json!({"type": "content_block_stop", "index": 0}),
            );
            let mut delta = json!({"type": "message_delta",
                                   "delta": {"stop_reason": reason, "stop_sequence": null}});
            delta["usage"] = usage_of(wire, usage.unwrap_or_default());
            events.push_str(&sse(Some("message_delta"), &delta));
            events.push_str(&sse(Some("message_stop"), &json!({"type": "message_stop"})));
            events
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
            let events = [
                opening(wire, &head()),
                piece(wire, &head(), "Hel"),
                piece(wire, &head(), "lo"),
                closing(
                    wire,
                    &head(),
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
