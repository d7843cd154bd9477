//! A client's own request, in either protocol, carried to a candidate of either.
//!
//! A gateway client sends an OpenAI Chat Completions or an Anthropic Messages
//! body. A candidate of the same protocol gets that body as it was sent, but for
//! `model` (the candidate's), `stream` (always on), and the token budget when the
//! client gave none. A candidate of the other protocol gets a translation, which
//! carries text, system prompts, the token budget, `temperature`, `top_p` and stop
//! sequences; anything else (tools and tool results, images, sampling settings one
//! side lacks) does not translate, and the candidate cannot carry the request:
//! [`Unsupported`] names the field, and the route skips the candidate rather than
//! send it a request with fields silently dropped. A simulated candidate carries
//! text only (it plays a script whatever the request says).

use serde_json::{Map, Value, json};

use crate::wire::Wire;

/// The protocol a client spoke, and its request body as it sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRequest {
    /// The protocol of `body`.
    pub wire: Wire,
    /// The body, a JSON object (the gateway checked its shape).
    pub body: Value,
}

/// Why a candidate cannot carry a client's request: the field, and why.
///
/// ```
/// # use providers::{ClientRequest, Wire};
/// # use serde_json::json;
/// let request = ClientRequest {
///     wire: Wire::OpenAi,
///     body: json!({"model": "fast", "messages": [{"role": "user", "content": "Hi"}],
///                  "tools": [{"type": "function", "function": {"name": "f"}}]}),
/// };
/// let refused = request.body_for(Wire::Anthropic, "claude-x", 1024).unwrap_err();
/// assert_eq!(refused.to_string(), "`tools` does not translate from an OpenAI request to Anthropic's Messages API");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}` {reason}")]
pub struct Unsupported {
    /// Where in the client's body, as a path (`messages[2].content[0].type`).
    pub field: String,
    /// Why, in words.
    pub reason: String,
}

impl Unsupported {
    fn new(field: impl Into<String>, reason: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            reason: reason.into(),
        }
    }

    fn untranslatable(field: impl Into<String>, from: Wire) -> Self {
        let reason = match from {
            Wire::OpenAi => "does not translate from an OpenAI request to Anthropic's Messages API",
            Wire::Anthropic => {
                "does not translate from an Anthropic request to OpenAI's Chat Completions API"
            }
        };
        Self::new(field, reason)
    }
}

/// One message of a conversation as both protocols can carry it: text only.
struct TextMessage {
    role: &'static str,
    /// The text blocks, in order (most messages have one).
    texts: Vec<String>,
}

/// A request both protocols can carry.
struct Portable {
    system: Vec<String>,
    messages: Vec<TextMessage>,
    max_tokens: Option<u64>,
    temperature: Option<Value>,
    top_p: Option<Value>,
    stop: Vec<String>,
}

impl ClientRequest {
    /// The body to send a candidate that speaks `to`, its model `model`, with
    /// `max_tokens` as the budget when the client gave none: the client's own
    /// body when the protocols match, else its translation.
    ///
    /// ```
    /// # use providers::{ClientRequest, Wire};
    /// # use serde_json::json;
    /// let request = ClientRequest {
    ///     wire: Wire::Anthropic,
    ///     body: json!({"model": "fast", "max_tokens": 300, "system": "Be brief.",
    ///                  "messages": [{"role": "user", "content": "Capital of France?"}],
    ///                  "stop_sequences": ["\n\n"]}),
    /// };
    /// assert_eq!(
    ///     request.body_for(Wire::OpenAi, "gpt-x", 1024).unwrap(),
    ///     json!({"model": "gpt-x", "max_tokens": 300, "stream": true, "stop": ["\n\n"],
    ///            "stream_options": {"include_usage": true},
    ///            "messages": [{"role": "system", "content": "Be brief."},
    ///                         {"role": "user", "content": "Capital of France?"}]}),
    /// );
    /// ```
    pub fn body_for(&self, to: Wire, model: &str, max_tokens: u32) -> Result<Value, Unsupported> {
        if to == self.wire {
            let mut body = self.object()?.clone();
            body.insert("model".into(), json!(model));
            body.insert("stream".into(), json!(true));
            if to == Wire::OpenAi {
                ask_for_usage(&mut body);
            }
            let budget_key = match to {
                Wire::Anthropic => "max_tokens",
                Wire::OpenAi if body.contains_key("max_completion_tokens") => {
                    "max_completion_tokens"
                }
                Wire::OpenAi => "max_tokens",
            };
            body.entry(budget_key).or_insert(json!(max_tokens));
            return Ok(Value::Object(body));
        }
        let portable = self.portable()?;
        let budget = portable.max_tokens.unwrap_or(u64::from(max_tokens));
        let mut body = Map::new();
        body.insert("model".into(), json!(model));
        body.insert("max_tokens".into(), json!(budget));
        body.insert("stream".into(), json!(true));
        if to == Wire::OpenAi {
            ask_for_usage(&mut body);
        }
        if let Some(temperature) = portable.temperature {
            if to == Wire::Anthropic && temperature.as_f64().is_some_and(|value| value > 1.0) {
                return Err(Unsupported::new(
                    "temperature",
                    "above 1 does not translate: Anthropic's temperature goes from 0 to 1",
                ));
            }
            body.insert("temperature".into(), temperature);
        }
        if let Some(top_p) = portable.top_p {
            body.insert("top_p".into(), top_p);
        }
        let stop_key = match to {
            Wire::Anthropic => "stop_sequences",
            Wire::OpenAi => "stop",
        };
        if !portable.stop.is_empty() {
            body.insert(stop_key.into(), json!(portable.stop));
        }
        let system = portable.system.join("\n\n");
        let mut messages = Vec::new();
        match to {
            Wire::Anthropic if !system.is_empty() => {
                body.insert("system".into(), json!(system));
            }
            Wire::OpenAi if !system.is_empty() => {
                messages.push(json!({"role": "system", "content": system}));
            }
            _ => {}
        }
        for message in portable.messages {
            let content = match message.texts.as_slice() {
                [text] => json!(text),
                texts => Value::Array(
                    texts
                        .iter()
                        .map(|text| json!({"type": "text", "text": text}))
                        .collect(),
                ),
            };
            messages.push(json!({"role": message.role, "content": content}));
        }
        body.insert("messages".into(), Value::Array(messages));
        Ok(Value::Object(body))
    }

    /// Whether a candidate that reads no request (a simulated one) can stand in
    /// for it: text only, no tools.
    ///
    /// ```
    /// # use providers::{ClientRequest, Wire};
    /// # use serde_json::json;
    /// let request = ClientRequest {
    ///     wire: Wire::Anthropic,
    ///     body: json!({"model": "fast", "max_tokens": 10, "messages": [{"role": "user", "content": [
    ///         {"type": "tool_result", "tool_use_id": "t1", "content": "42"}]}]}),
    /// };
    /// let refused = request.text_only().unwrap_err();
    /// assert_eq!(refused.field, "messages[0].content[0].type");
    /// ```
    pub fn text_only(&self) -> Result<(), Unsupported> {
        let object = self.object()?;
        for field in ["tools", "tool_choice", "functions", "function_call"] {
            if object.contains_key(field) {
                return Err(Unsupported::new(
                    field,
                    "needs a candidate that can call tools",
                ));
            }
        }
        self.messages(object).map(drop)
    }

    /// The request as one prompt, for a candidate that reads a prompt rather
    /// than a conversation (an agent CLI): its system text and messages written
    /// out in order. Sampling settings and stop sequences have nowhere to go, so
    /// a request with any is refused; its token budget is not enforced (an agent
    /// stops when its work is done).
    pub(crate) fn prompt(&self) -> Result<String, Unsupported> {
        let portable = self.portable()?;
        for (field, given) in [
            ("temperature", portable.temperature.is_some()),
            ("top_p", portable.top_p.is_some()),
            (self.stop_field(), !portable.stop.is_empty()),
        ] {
            if given {
                return Err(Unsupported::new(
                    field,
                    "an agent CLI takes no sampling settings or stop sequences",
                ));
            }
        }
        let messages: Vec<(&str, String)> = portable
            .messages
            .iter()
            .map(|message| (message.role, message.texts.join("\n\n")))
            .collect();
        Ok(crate::cli::prompt_of(
            &portable.system.join("\n\n"),
            &messages,
        ))
    }

    fn object(&self) -> Result<&Map<String, Value>, Unsupported> {
        self.body
            .as_object()
            .ok_or_else(|| Unsupported::new("", "the request must be a JSON object"))
    }

    /// The request as both protocols can carry it, or the first field that is not.
    fn portable(&self) -> Result<Portable, Unsupported> {
        let object = self.object()?;
        // What carries over, and what is the protocol's own but harmless to leave
        // behind (a cache hint); anything else would be dropped, so it refuses.
        let (carried, left_behind): (&[&str], &[&str]) = match self.wire {
            Wire::OpenAi => (
                &[
                    "model",
                    "messages",
                    "max_tokens",
                    "max_completion_tokens",
                    "temperature",
                    "top_p",
                    "stop",
                    "stream",
                    "stream_options",
                    "n",
                ],
                &["user"],
            ),
            Wire::Anthropic => (
                &[
                    "model",
                    "messages",
                    "system",
                    "max_tokens",
                    "temperature",
                    "top_p",
                    "stop_sequences",
                    "stream",
                ],
                &["metadata"],
            ),
        };
        if let Some(field) = object.keys().find(|field| {
            !carried.contains(&field.as_str()) && !left_behind.contains(&field.as_str())
        }) {
            return Err(Unsupported::untranslatable(field.as_str(), self.wire));
        }
        if object.get("n").is_some_and(|n| n != &json!(1)) {
            return Err(Unsupported::untranslatable("n", self.wire));
        }
        let (system, messages) = self.messages(object)?;
        let max_tokens = ["max_tokens", "max_completion_tokens"]
            .iter()
            .find_map(|field| object.get(*field).and_then(Value::as_u64));
        let stop = match (self.wire, object.get(self.stop_field())) {
            (_, None | Some(Value::Null)) => Vec::new(),
            (Wire::OpenAi, Some(Value::String(stop))) => vec![stop.clone()],
            (_, Some(Value::Array(stops))) => stops
                .iter()
                .map(|stop| stop.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| Unsupported::new(self.stop_field(), "must be strings"))?,
            (_, Some(_)) => return Err(Unsupported::new(self.stop_field(), "must be strings")),
        };
        Ok(Portable {
            system,
            messages,
            max_tokens,
            temperature: object
                .get("temperature")
                .cloned()
                .filter(|value| !value.is_null()),
            top_p: object
                .get("top_p")
                .cloned()
                .filter(|value| !value.is_null()),
            stop,
        })
    }

    fn stop_field(&self) -> &'static str {
        match self.wire {
            Wire::OpenAi => "stop",
            Wire::Anthropic => "stop_sequences",
        }
    }

    /// The system prompt's texts and the text messages, or the first part of a
    /// message that is not text.
    fn messages(
        &self,
        object: &Map<String, Value>,
    ) -> Result<(Vec<String>, Vec<TextMessage>), Unsupported> {
        let mut system = Vec::new();
        if self.wire == Wire::Anthropic {
            match object.get("system") {
                None | Some(Value::Null) => {}
                Some(content) => system.extend(texts(content, "system")?),
            }
        }
        let Some(Value::Array(listed)) = object.get("messages") else {
            return Err(Unsupported::new("messages", "must be an array of messages"));
        };
        let mut messages = Vec::new();
        for (index, message) in listed.iter().enumerate() {
            let at = |field: &str| format!("messages[{index}].{field}");
            let Some(message) = message.as_object() else {
                return Err(Unsupported::new(
                    format!("messages[{index}]"),
                    "must be an object",
                ));
            };
            if let Some(field) = message
                .keys()
                .find(|field| !matches!(field.as_str(), "role" | "content"))
            {
                return Err(Unsupported::new(
                    at(field),
                    "is not carried: a message here is a role and a text content",
                ));
            }
            let content = message.get("content").unwrap_or(&Value::Null);
            let role = match message.get("role").and_then(Value::as_str) {
                Some("system" | "developer") if self.wire == Wire::OpenAi => {
                    system.extend(texts(content, &at("content"))?);
                    continue;
                }
                Some("user") => "user",
                Some("assistant") => "assistant",
                Some(role) => {
                    return Err(Unsupported::new(
                        at("role"),
                        format!("is `{role}`: only user and assistant messages are carried here"),
                    ));
                }
                None => return Err(Unsupported::new(at("role"), "is missing")),
            };
            messages.push(TextMessage {
                role,
                texts: texts(content, &at("content"))?,
            });
        }
        Ok((system, messages))
    }
}

/// The texts of a content: a string, or a list of text parts (`{"type": "text",
/// "text": …}`; a cache hint on a part is left behind).
fn texts(content: &Value, at: &str) -> Result<Vec<String>, Unsupported> {
    match content {
        Value::String(text) => Ok(vec![text.clone()]),
        Value::Array(parts) => parts
            .iter()
            .enumerate()
            .map(|(index, part)| {
                let kind = part.get("type").and_then(Value::as_str);
                match (kind, part.get("text").and_then(Value::as_str)) {
                    (Some("text"), Some(text)) => Ok(text.to_owned()),
                    _ => Err(Unsupported::new(
                        format!("{at}[{index}].type"),
                        format!(
                            "is {}: only text is carried here",
                            kind.map_or_else(|| "not given".to_owned(), |kind| format!("`{kind}`"))
                        ),
                    )),
                }
            })
            .collect(),
        _ => Err(Unsupported::new(
            at,
            "must be a string or a list of text parts",
        )),
    }
}

/// Ask an OpenAI stream for the tokens it used (its last chunk before
/// `[DONE]`), keeping whatever else the client set in `stream_options`.
fn ask_for_usage(body: &mut Map<String, Value>) {
    let options = body.entry("stream_options").or_insert_with(|| json!({}));
    if let Value::Object(options) = options {
        options.insert("include_usage".into(), json!(true));
    } else {
        *options = json!({"include_usage": true});
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn openai(body: Value) -> ClientRequest {
        ClientRequest {
            wire: Wire::OpenAi,
            body,
        }
    }

    fn anthropic(body: Value) -> ClientRequest {
        ClientRequest {
            wire: Wire::Anthropic,
            body,
        }
    }

    /// The same protocol: the client's body as sent, but for the candidate's model,
    /// streaming, and a budget where the client gave none.
    #[test]
    fn the_same_protocol_passes_the_body_through() {
        let tools =
            json!([{"type": "function", "function": {"name": "weather", "parameters": {}}}]);
        let rows = [
            (
                openai(
                    json!({"model": "fast", "messages": [{"role": "user", "content": "Hi"}],
                    "tools": tools, "seed": 7, "stream": false}),
                ),
                Wire::OpenAi,
                json!({"model": "gpt-x", "messages": [{"role": "user", "content": "Hi"}],
                    "tools": tools, "seed": 7, "stream": true, "max_tokens": 512,
                    "stream_options": {"include_usage": true}}),
            ),
            (
                openai(
                    json!({"model": "fast", "messages": [], "max_completion_tokens": 9,
                    "stream_options": {"include_obfuscation": false}}),
                ),
                Wire::OpenAi,
                json!({"model": "gpt-x", "messages": [], "max_completion_tokens": 9, "stream": true,
                    "stream_options": {"include_obfuscation": false, "include_usage": true}}),
            ),
            (
                anthropic(json!({"model": "fast", "max_tokens": 64, "messages": [],
                    "thinking": {"type": "enabled", "budget_tokens": 32}})),
                Wire::Anthropic,
                json!({"model": "gpt-x", "max_tokens": 64, "messages": [], "stream": true,
                    "thinking": {"type": "enabled", "budget_tokens": 32}}),
            ),
        ];
        for (request, to, expected) in rows {
            assert_eq!(
                request.body_for(to, "gpt-x", 512).unwrap(),
                expected,
                "{request:?}"
            );
        }
    }

    /// Across protocols: text, system prompts, budget, sampling and stops.
    #[test]
    fn text_translates_both_ways() {
        let from_openai = openai(json!({
            "model": "fast",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "developer", "content": [{"type": "text", "text": "Answer in French."}]},
                {"role": "user", "content": "Capital of France?"},
                {"role": "assistant", "content": "Paris."},
                {"role": "user", "content": [{"type": "text", "text": "And "}, {"type": "text", "text": "Italy?"}]},
            ],
            "max_completion_tokens": 100, "temperature": 0.5, "top_p": 0.9, "stop": "END",
            "stream": true, "stream_options": {"include_usage": true}, "n": 1, "user": "u-1",
        }));
        assert_eq!(
            from_openai
                .body_for(Wire::Anthropic, "claude-x", 512)
                .unwrap(),
            json!({
                "model": "claude-x", "max_tokens": 100, "stream": true,
                "temperature": 0.5, "top_p": 0.9, "stop_sequences": ["END"],
                "system": "Be brief.\n\nAnswer in French.",
                "messages": [
                    {"role": "user", "content": "Capital of France?"},
                    {"role": "assistant", "content": "Paris."},
                    {"role": "user", "content": [{"type": "text", "text": "And "}, {"type": "text", "text": "Italy?"}]},
                ],
            })
        );
        let from_anthropic = anthropic(json!({
            "model": "fast", "max_tokens": 50,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}],
            "stop_sequences": ["\n\n", "END"], "metadata": {"user_id": "u-1"},
        }));
        assert_eq!(
            from_anthropic.body_for(Wire::OpenAi, "gpt-x", 512).unwrap(),
            json!({
                "model": "gpt-x", "max_tokens": 50, "stream": true, "stop": ["\n\n", "END"],
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "Be brief."},
                    {"role": "user", "content": "Hi"},
                ],
            })
        );
        // No budget from the client: the candidate's.
        let bare =
            openai(json!({"model": "fast", "messages": [{"role": "user", "content": "Hi"}]}));
        assert_eq!(
            bare.body_for(Wire::Anthropic, "claude-x", 512).unwrap()["max_tokens"],
            json!(512)
        );
    }

    /// What does not translate is named, never dropped.
    #[test]
    fn what_does_not_translate_is_named() {
        let user = |content: Value| json!([{"role": "user", "content": content}]);
        let rows = [
            (
                openai(json!({"messages": user(json!("Hi")), "tools": []})),
                "tools",
            ),
            (
                openai(
                    json!({"messages": user(json!("Hi")), "response_format": {"type": "json_object"}}),
                ),
                "response_format",
            ),
            (openai(json!({"messages": user(json!("Hi")), "n": 2})), "n"),
            (
                openai(json!({"messages": user(json!("Hi")), "temperature": 1.5})),
                "temperature",
            ),
            (
                openai(
                    json!({"messages": [{"role": "tool", "content": "42", "tool_call_id": "c1"}]}),
                ),
                "messages[0].tool_call_id",
            ),
            (
                openai(json!({"messages": [{"role": "assistant", "content": null,
                    "tool_calls": [{"id": "c1", "type": "function"}]}]})),
                "messages[0].tool_calls",
            ),
            (
                openai(
                    json!({"messages": user(json!([{"type": "image_url", "image_url": {"url": "x"}}]))}),
                ),
                "messages[0].content[0].type",
            ),
            (
                openai(json!({"messages": [{"role": "user", "content": "Hi", "name": "ann"}]})),
                "messages[0].name",
            ),
            (
                anthropic(json!({"max_tokens": 5, "messages": user(json!("Hi")), "top_k": 5})),
                "top_k",
            ),
            (
                anthropic(json!({"max_tokens": 5, "messages": user(json!([
                    {"type": "tool_result", "tool_use_id": "t1", "content": "42"}]))})),
                "messages[0].content[0].type",
            ),
            (
                anthropic(json!({"max_tokens": 5, "messages": user(json!("Hi")),
                    "thinking": {"type": "enabled", "budget_tokens": 32}})),
                "thinking",
            ),
        ];
        for (request, field) in rows {
            let to = match request.wire {
                Wire::OpenAi => Wire::Anthropic,
                Wire::Anthropic => Wire::OpenAi,
            };
            let refused = request.body_for(to, "m", 10).unwrap_err();
            assert_eq!(refused.field, field, "{request:?}: {refused}");
        }
    }

    /// A candidate that reads no request carries text, never tools.
    #[test]
    fn text_only_refuses_tools_and_parts_that_are_not_text() {
        let text =
            openai(json!({"messages": [{"role": "user", "content": "Hi"}], "temperature": 1.5}));
        assert_eq!(text.text_only(), Ok(()));
        let tools = anthropic(json!({"max_tokens": 5, "messages": [], "tools": []}));
        assert_eq!(tools.text_only().unwrap_err().field, "tools");
        let image = anthropic(json!({"max_tokens": 5, "messages": [{"role": "user",
            "content": [{"type": "image", "source": {}}]}]}));
        assert_eq!(
            image.text_only().unwrap_err().to_string(),
            "`messages[0].content[0].type` is `image`: only text is carried here"
        );
    }
}
