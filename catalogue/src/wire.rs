//! The JSON shapes providers put their errors in, read leniently and without copying.
//!
//! One struct covers every family: Anthropic (`{"type":"error","error":{"type",...}}`),
//! OpenAI and its imitators (`{"error":{"message","type","code"}}`), Gemini and Vertex
//! (`{"error":{"code","status","details":[...]}}`), Bedrock (`{"message"}`, `__type`,
//! stream exception events), OpenRouter (`error.metadata.raw`), Ollama (`{"error":"..."}`),
//! vLLM (`{"object":"error","type",...}`), the Responses API (`response.failed`) and the
//! Codex backend (`resets_at`, `resets_in_seconds`). A field of an unexpected JSON type is
//! ignored rather than failing the whole body.
//!
//! serde reads the structs below, their strings borrowed from the body unless they hold
//! escapes. Each field carries its own `default`: a struct-level default would build a
//! whole default struct for every object read.

use std::borrow::Cow;
use std::fmt;

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

/// A whole error body (or SSE event data).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireBody<'a> {
    #[serde(default, borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(default, borrow)]
    pub error: ErrorField<'a>,
    #[serde(default, borrow, alias = "Message", alias = "errorMessage")]
    pub message: Scalar<'a>,
    #[serde(default, borrow, rename = "__type")]
    pub aws_type: Scalar<'a>,
    #[serde(default, borrow)]
    pub name: Scalar<'a>,
    #[serde(default, borrow)]
    pub code: Scalar<'a>,
    #[serde(default, borrow)]
    pub detail: Scalar<'a>,
    /// An RFC 7807 problem's title (Nvidia NIM: `{"status":429,"title":"Too Many
    /// Requests"}`).
    #[serde(default, borrow)]
    pub title: Scalar<'a>,
    /// A problem's `status`: a `title` is an error's only beside it or a `detail`.
    #[serde(default, borrow)]
    pub status: Scalar<'a>,
    /// MiniMax: `"base_resp":{"status_code":2049,"status_msg":"invalid api key"}`.
    #[serde(default, borrow)]
    pub base_resp: Option<WireBaseResp<'a>>,
    /// Cloudflare's v4 envelope: `"errors":[{"code":3036,"message":"..."}]`.
    #[serde(default, borrow)]
    pub errors: Details<'a>,
    #[serde(default, borrow)]
    pub response: Option<WireResponse<'a>>,
    #[serde(default, borrow)]
    pub resets_at: Scalar<'a>,
    #[serde(default, borrow)]
    pub resets_in_seconds: Scalar<'a>,
    #[serde(default, borrow, rename = "promptFeedback")]
    pub prompt_feedback: Option<WirePromptFeedback<'a>>,
    #[serde(default, borrow, rename = "throttlingException")]
    pub throttling_exception: ErrorField<'a>,
    #[serde(default, borrow, rename = "serviceUnavailableException")]
    pub service_unavailable_exception: ErrorField<'a>,
    #[serde(default, borrow, rename = "modelStreamErrorException")]
    pub model_stream_error_exception: ErrorField<'a>,
    #[serde(default, borrow, rename = "validationException")]
    pub validation_exception: ErrorField<'a>,
    #[serde(default, borrow, rename = "internalServerException")]
    pub internal_server_exception: ErrorField<'a>,
}

/// The Responses API's `response` object inside a `response.failed` event.
/// MiniMax's status object; `status_code` 0 is success.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireBaseResp<'a> {
    #[serde(default, borrow)]
    pub status_code: Scalar<'a>,
    #[serde(default, borrow)]
    pub status_msg: Scalar<'a>,
}

impl WireBaseResp<'_> {
    /// Whether it reports a failure.
    pub fn failed(&self) -> bool {
        self.status_code
            .0
            .as_deref()
            .is_some_and(|code| code != "0")
    }
}

#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireResponse<'a> {
    #[serde(default, borrow)]
    pub error: ErrorField<'a>,
}

/// Gemini's `promptFeedback` on a blocked prompt.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WirePromptFeedback<'a> {
    #[serde(default, borrow, rename = "blockReason")]
    pub block_reason: Scalar<'a>,
}

/// An `error` object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireError<'a> {
    #[serde(default, borrow, rename = "type")]
    pub kind: Scalar<'a>,
    #[serde(default, borrow)]
    pub code: Scalar<'a>,
    #[serde(default, borrow, alias = "Message")]
    pub message: Scalar<'a>,
    #[serde(default, borrow)]
    pub status: Scalar<'a>,
    #[serde(default, borrow)]
    pub details: Details<'a>,
    #[serde(default, borrow)]
    pub metadata: Option<WireMetadata<'a>>,
    #[serde(default, borrow)]
    pub innererror: Option<WireInnerError<'a>>,
    #[serde(default, borrow)]
    pub resets_at: Scalar<'a>,
    #[serde(default, borrow)]
    pub resets_in_seconds: Scalar<'a>,
}

/// OpenRouter's `error.metadata`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireMetadata<'a> {
    #[serde(default, borrow)]
    pub raw: Scalar<'a>,
    #[serde(default, borrow)]
    pub provider_name: Scalar<'a>,
}

/// Azure's `error.innererror`.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireInnerError<'a> {
    #[serde(default, borrow)]
    pub code: Scalar<'a>,
}

/// One entry of Gemini's `error.details`, or Anthropic's `error.details` object.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireDetail<'a> {
    #[serde(default, borrow, rename = "retryDelay")]
    pub retry_delay: Scalar<'a>,
    #[serde(default, borrow)]
    pub violations: Violations<'a>,
    #[serde(default, borrow)]
    pub reason: Scalar<'a>,
    #[serde(default, borrow)]
    pub error_code: Scalar<'a>,
    /// An item of Cloudflare's `errors`: its numeric code.
    #[serde(default, borrow)]
    pub code: Scalar<'a>,
    /// An item of Cloudflare's `errors`: its message.
    #[serde(default, borrow)]
    pub message: Scalar<'a>,
}

/// One `QuotaFailure` violation.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct WireViolation<'a> {
    #[serde(default, borrow, rename = "quotaId")]
    pub quota_id: Scalar<'a>,
    #[serde(default, borrow, rename = "quotaMetric")]
    pub quota_metric: Scalar<'a>,
}

/// A string or number, kept as text; anything else reads as absent.
#[derive(Debug, Default)]
pub(crate) struct Scalar<'a>(pub Option<Cow<'a, str>>);

/// `error` as an object, as a bare string (Ollama), or anything else (ignored).
#[derive(Debug, Default)]
pub(crate) enum ErrorField<'a> {
    /// Absent or of an unreadable type.
    #[default]
    Absent,
    /// A bare message.
    Text(Cow<'a, str>),
    /// A structured error.
    Object(Box<WireError<'a>>),
}

/// `details` as a list (Gemini) or a single object (Anthropic).
#[derive(Debug, Default)]
pub(crate) struct Details<'a>(pub Vec<WireDetail<'a>>);

/// `violations` as a list; anything else reads as empty.
#[derive(Debug, Default)]
pub(crate) struct Violations<'a>(pub Vec<WireViolation<'a>>);

struct ScalarVisitor;

impl<'de> Visitor<'de> for ScalarVisitor {
    type Value = Scalar<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a string or a number")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Borrowed(text))))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Owned(text.to_owned()))))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Owned(text))))
    }

    fn visit_u64<E: de::Error>(self, number: u64) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_i64<E: de::Error>(self, number: i64) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_f64<E: de::Error>(self, number: f64) -> Result<Self::Value, E> {
        Ok(Scalar(Some(Cow::Owned(number.to_string()))))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Scalar(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar(None))
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Scalar(None))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Scalar(None))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Scalar(None))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Scalar<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ScalarVisitor)
    }
}

struct ErrorFieldVisitor;

impl<'de> Visitor<'de> for ErrorFieldVisitor {
    type Value = ErrorField<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("an error object or message")
    }

    fn visit_borrowed_str<E: de::Error>(self, text: &'de str) -> Result<Self::Value, E> {
        Ok(ErrorField::Text(Cow::Borrowed(text)))
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<Self::Value, E> {
        Ok(ErrorField::Text(Cow::Owned(text.to_owned())))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<Self::Value, E> {
        Ok(ErrorField::Text(Cow::Owned(text)))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(ErrorField::Absent)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(ErrorField::Absent)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let error = WireError::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(ErrorField::Object(Box::new(error)))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for ErrorField<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ErrorFieldVisitor)
    }
}

struct DetailsVisitor;

impl<'de> Visitor<'de> for DetailsVisitor {
    type Value = Details<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list of details or one details object")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut details = Vec::new();
        while let Some(entry) = seq.next_element::<LenientDetail<'de>>()? {
            if let Some(detail) = entry.0 {
                details.push(detail);
            }
        }
        Ok(Details(details))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let detail = WireDetail::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(Details(vec![detail]))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Details::default())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Details::default())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Details<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(DetailsVisitor)
    }
}

/// A details entry that is an object, or anything else (skipped).
struct LenientDetail<'a>(Option<WireDetail<'a>>);

impl<'de: 'a, 'a> Deserialize<'de> for LenientDetail<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let details = Details::deserialize(deserializer)?;
        Ok(LenientDetail(details.0.into_iter().next()))
    }
}

struct ViolationsVisitor;

impl<'de> Visitor<'de> for ViolationsVisitor {
    type Value = Violations<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a list of violations")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut violations = Vec::new();
        while let Some(entry) = seq.next_element::<LenientViolation<'de>>()? {
            if let Some(violation) = entry.0 {
                violations.push(violation);
            }
        }
        Ok(Violations(violations))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Violations::default())
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Violations::default())
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Violations<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ViolationsVisitor)
    }
}

/// A violation that is an object, or anything else (skipped).
struct LenientViolation<'a>(Option<WireViolation<'a>>);

struct LenientViolationVisitor;

impl<'de> Visitor<'de> for LenientViolationVisitor {
    type Value = LenientViolation<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a violation")
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        let violation = WireViolation::deserialize(de::value::MapAccessDeserializer::new(map))?;
        Ok(LenientViolation(Some(violation)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(LenientViolation(None))
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(LenientViolation(None))
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for LenientViolation<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(LenientViolationVisitor)
    }
}

/// Reads the first JSON value of `text` (trailing text is allowed) as a body; an array
/// (Vertex streams) gives its first element that holds an error. `None` when `text` is
/// not such a body.
pub(crate) fn parse_body(text: &str) -> Option<WireBody<'_>> {
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        let mut stream = serde_json::Deserializer::from_str(trimmed).into_iter::<Vec<WireBody>>();
        let bodies = stream.next()?.ok()?;
        return bodies.into_iter().find(WireBody::holds_error);
    }
    if !trimmed.starts_with('{') {
        return None;
    }
    // An object's first key must be a string (serde fails on anything else): CLI output
    // often holds `{'error': ...}` or escaped JSON, not worth a full attempt.
    let first = trimmed[1..].trim_start_matches([' ', '\n', '\t', '\r']);
    if !(first.starts_with('"') || first.starts_with('}')) {
        return None;
    }
    // The first value only: what follows it is not read (as a stream would not).
    WireBody::deserialize(&mut serde_json::Deserializer::from_str(trimmed)).ok()
}

impl WireBody<'_> {
    /// Whether the body says anything about an error.
    pub fn holds_error(&self) -> bool {
        !matches!(self.error, ErrorField::Absent)
            || self.message.0.is_some()
            || self.aws_type.0.is_some()
            || self.name.0.is_some()
            || self.detail.0.is_some()
            || (self.title.0.is_some() && self.status.0.is_some())
            || self.base_resp.as_ref().is_some_and(WireBaseResp::failed)
            || !self.errors.0.is_empty()
            || self
                .response
                .as_ref()
                .is_some_and(|response| !matches!(response.error, ErrorField::Absent))
            || self
                .prompt_feedback
                .as_ref()
                .is_some_and(|feedback| feedback.block_reason.0.is_some())
            || !matches!(self.throttling_exception, ErrorField::Absent)
            || !matches!(self.service_unavailable_exception, ErrorField::Absent)
            || !matches!(self.model_stream_error_exception, ErrorField::Absent)
            || !matches!(self.validation_exception, ErrorField::Absent)
            || !matches!(self.internal_server_exception, ErrorField::Absent)
    }
}

#[cfg(test)]
mod tests {
    use super::{ErrorField, parse_body};

    fn text<'t>(scalar: &'t super::Scalar<'_>) -> Option<&'t str> {
        scalar.0.as_deref()
    }

    #[test]
    fn fields_of_any_type_are_read_leniently() {
        let body = parse_body(
            r#" {"type":"error","error":{"type":"rate_limit_error","code":429,"message":"a\nb \u00e9","status":false,"details":{"error_code":"x"},"metadata":{"raw":"r","provider_name":7}},"name":[1,{"a":null}],"x":{"y":[]}} and then more"#,
        )
        .expect("a body");
        assert_eq!(text(&body.kind), Some("error"));
        assert_eq!(text(&body.name), None);
        let ErrorField::Object(error) = &body.error else {
            panic!("an error object: {:?}", body.error);
        };
        assert_eq!(text(&error.kind), Some("rate_limit_error"));
        assert_eq!(text(&error.code), Some("429"));
        assert_eq!(text(&error.message), Some("a\nb é"));
        assert_eq!(text(&error.status), None);
        assert_eq!(error.details.0.len(), 1);
        assert_eq!(text(&error.details.0[0].error_code), Some("x"));
        let metadata = error.metadata.as_ref().expect("metadata");
        assert_eq!(text(&metadata.raw), Some("r"));
        assert_eq!(text(&metadata.provider_name), Some("7"));
        assert!(body.holds_error());
    }

    #[test]
    fn gemini_details_lists_skip_what_is_not_an_object() {
        let body = parse_body(
            r#"{"error":{"details":[1,{"retryDelay":"39s"},"x",{"violations":[{"quotaId":"PerDay"},2]}]}}"#,
        )
        .expect("a body");
        let ErrorField::Object(error) = &body.error else {
            panic!("an error object");
        };
        let details = &error.details.0;
        assert_eq!(details.len(), 2);
        assert_eq!(text(&details[0].retry_delay), Some("39s"));
        assert_eq!(details[1].violations.0.len(), 1);
        assert_eq!(text(&details[1].violations.0[0].quota_id), Some("PerDay"));
    }

    #[test]
    fn bare_messages_streams_and_non_bodies() {
        let ollama = parse_body(r#"{"error":"model not found"}"#).expect("a body");
        assert!(matches!(&ollama.error, ErrorField::Text(message) if message == "model not found"));
        // A Vertex stream: the first element that holds an error.
        let stream = parse_body(r#"[{"candidates":[]},{"error":{"code":503}}]"#).expect("a body");
        assert!(matches!(stream.error, ErrorField::Object(_)));
        assert!(parse_body(r#"[{"candidates":[]}]"#).is_none());
        for text in [
            "plain text",
            "{'error': 'single quotes'}",
            r#"{"error": "cut"#,
            r#"{"type":"a","type":"b"}"#,
            "",
        ] {
            assert!(parse_body(text).is_none(), "{text}");
        }
        let empty = parse_body("{}").expect("an empty body");
        assert!(!empty.holds_error());
    }
}
