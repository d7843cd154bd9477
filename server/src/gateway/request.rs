//! A gateway request read and checked: the JSON body in the client's protocol,
//! the profile its `model` names, its deadline and idempotency key. Every
//! refusal names the field, in the protocol's error shape, and writes nothing.

use axum::http::HeaderMap;
use providers::Wire;
use serde_json::{Map, Value};

use super::shapes::Failure;
use crate::services::IDEMPOTENCY_KEY_MAX_CHARS;

/// The header that bounds how long the client waits, in milliseconds.
pub const DEADLINE_HEADER: &str = "x-switchback-deadline-ms";
/// How long a client waits when it does not say: two minutes.
pub const DEFAULT_DEADLINE_MS: u64 = 120_000;
/// The longest deadline a client may ask for: an hour.
pub const MAX_DEADLINE_MS: u64 = 3_600_000;
/// The longest prompt a gateway call's turn shows (the task list's text).
const PROMPT_SHOWN_CHARS: usize = 100_000;

/// A request as the gateway runs it.
#[derive(Debug, Clone)]
pub struct Call {
    /// The body, less what means "not set" (`max_tokens: null`).
    pub body: Map<String, Value>,
    /// The profile name the client gave as `model`.
    pub model: String,
    /// Whether it streams.
    pub stream: bool,
    /// How long it waits, in milliseconds, when its client says
    /// ([`DEADLINE_HEADER`]); else its profile's or the server's default.
    pub deadline_ms: Option<u64>,
    /// Its `Idempotency-Key`.
    pub idempotency_key: Option<String>,
    /// The last user message's text, as the task's turn shows it.
    pub prompt: String,
}

/// Read `bytes` as a `wire` request, with `headers`.
pub fn read(wire: Wire, headers: &HeaderMap, bytes: &[u8]) -> Result<Call, Failure> {
    let invalid = |param: &str, message: String| Failure::new(400, message).with_param(param);
    let Ok(Value::Object(mut body)) = serde_json::from_slice::<Value>(bytes) else {
        return Err(Failure::new(400, "the body is not a JSON object"));
    };
    let model = match body.get("model") {
        Some(Value::String(model)) if !model.trim().is_empty() => model.trim().to_owned(),
        _ => {
            return Err(invalid(
                "model",
                "`model` must name a Switchback profile".to_owned(),
            ));
        }
    };
    let stream = match body.get("stream") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(stream)) => *stream,
        Some(_) => {
            return Err(invalid(
                "stream",
                "`stream` must be true or false".to_owned(),
            ));
        }
    };
    // "Not set" written as null is not set.
    for field in [
        "max_tokens",
        "max_completion_tokens",
        "stream_options",
        "temperature",
        "stop",
        "n",
        "tools",
        "functions",
    ] {
        if body.get(field).is_some_and(Value::is_null) {
            body.remove(field);
        }
    }
    if wire == Wire::OpenAi
        && let Some(n) = body.get("n")
        && n.as_u64() != Some(1)
    {
        return Err(invalid(
            "n",
            "only one choice (`n`: 1) is answered".to_owned(),
        ));
    }
    // Tools pass through to candidates of the client's protocol, and their
    // calls come back; OpenAI's older `functions` (and its `function_call`
    // answers) are not read, so a request with them is refused rather than
    // answered without them.
    if body.get("tools").is_some_and(|tools| !tools.is_array()) {
        return Err(invalid("tools", "`tools` must be a list".to_owned()));
    }
    if wire == Wire::OpenAi
        && body
            .get("functions")
            .is_some_and(|functions| functions.as_array().is_none_or(|list| !list.is_empty()))
    {
        return Err(invalid(
            "functions",
            "`functions` is not supported: send the same functions as `tools`".to_owned(),
        ));
    }
    let messages = match body.get("messages") {
        Some(Value::Array(messages)) if !messages.is_empty() => messages,
        _ => {
            return Err(invalid(
                "messages",
                "`messages` must be a list of at least one message".to_owned(),
            ));
        }
    };
    let prompt = last_user_text(messages);
    let deadline_ms = match headers.get(DEADLINE_HEADER) {
        None => None,
        Some(value) => match value
            .to_str()
            .ok()
            .and_then(|text| text.trim().parse::<u64>().ok())
        {
            Some(ms) if (1..=MAX_DEADLINE_MS).contains(&ms) => Some(ms),
            _ => {
                return Err(Failure::new(
                    400,
                    format!("the header `{DEADLINE_HEADER}` must be milliseconds from 1 to {MAX_DEADLINE_MS}"),
                )
                .with_param(DEADLINE_HEADER));
            }
        },
    };
    let idempotency_key = match headers.get("idempotency-key") {
        None => None,
        Some(value) => match value.to_str() {
            Ok(key)
                if !key.trim().is_empty() && key.chars().count() <= IDEMPOTENCY_KEY_MAX_CHARS =>
            {
                Some(key.to_owned())
            }
            _ => {
                return Err(Failure::new(
                    400,
                    format!("the header `Idempotency-Key` must be 1 to {IDEMPOTENCY_KEY_MAX_CHARS} characters"),
                )
                .with_param("Idempotency-Key"));
            }
        },
    };
    Ok(Call {
        body,
        model,
        stream,
        deadline_ms,
        idempotency_key,
        prompt,
    })
}

/// The text of the last message from the user (both protocols: a string, or a
/// list of blocks whose `text` ones are joined).
fn last_user_text(messages: &[Value]) -> String {
    let text = messages
        .iter()
        .rev()
        .find(|message| message.get("role").and_then(Value::as_str) == Some("user"))
        .map(|message| match message.get("content") {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Array(blocks)) => blocks
                .iter()
                .filter_map(|block| block.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            _ => String::new(),
        })
        .unwrap_or_default();
    let text = text.trim();
    if text.is_empty() {
        return "(a gateway call without text from the user)".to_owned();
    }
    text.chars().take(PROMPT_SHOWN_CHARS).collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_json(wire: Wire, body: &Value) -> Result<Call, Failure> {
        read(wire, &HeaderMap::new(), body.to_string().as_bytes())
    }

    #[test]
    fn a_request_is_read_with_its_defaults() {
        let call = read_json(
            Wire::OpenAi,
            &json!({"model": " fast ", "max_tokens": null, "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": [{"type": "text", "text": "Hi"}, {"type": "text", "text": "there"}]},
            ]}),
        )
        .unwrap();
        assert_eq!(call.model, "fast");
        assert!(!call.stream);
        assert_eq!(call.deadline_ms, None, "the profile's or the server's");
        assert_eq!(call.prompt, "Hi\nthere");
        assert!(!call.body.contains_key("max_tokens"), "null is not set");
    }

    #[test]
    fn a_bad_request_names_its_field() {
        for (body, param) in [
            (
                json!({"messages": [{"role": "user", "content": "x"}]}),
                "model",
            ),
            (json!({"model": "fast", "messages": []}), "messages"),
            (
                json!({"model": "fast", "stream": "yes", "messages": [{"role": "user", "content": "x"}]}),
                "stream",
            ),
            (
                json!({"model": "fast", "n": 2, "messages": [{"role": "user", "content": "x"}]}),
                "n",
            ),
            (
                json!({"model": "fast", "tools": {"type": "function"}, "messages": [{"role": "user", "content": "x"}]}),
                "tools",
            ),
            (
                json!({"model": "fast", "functions": [{"name": "f"}], "messages": [{"role": "user", "content": "x"}]}),
                "functions",
            ),
        ] {
            let refused = read_json(Wire::OpenAi, &body).unwrap_err();
            assert_eq!(
                (refused.status, refused.param.as_deref()),
                (400, Some(param)),
                "{body}"
            );
        }
        let mut headers = HeaderMap::new();
        headers.insert(DEADLINE_HEADER, "0".parse().unwrap());
        let body = json!({"model": "fast", "messages": [{"role": "user", "content": "x"}]});
        let refused = read(Wire::Anthropic, &headers, body.to_string().as_bytes()).unwrap_err();
        assert_eq!(refused.param.as_deref(), Some(DEADLINE_HEADER));
        assert_eq!(
            read(Wire::OpenAi, &HeaderMap::new(), b"[1]")
                .unwrap_err()
                .status,
            400
        );
    }
}
