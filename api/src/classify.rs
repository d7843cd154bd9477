//! Classification on the wire (SPEC 2.1, 2.5): the evidence a client sends
//! to `POST /api/classify` and the catalogue's verdict it gets back.

use std::collections::BTreeMap;
use std::fmt;

use policy::evidence::{BodyText, HeaderValue, HttpStatus, LenientJson, PROVIDER_MAX_CHARS};
use policy::{Class, Confidence, SemanticCode};
use serde::de::Deserializer;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use validator::Validate;

use crate::time::Timestamp;

/// The validator's form of [`PROVIDER_MAX_CHARS`].
const PROVIDER_MAX: u64 = PROVIDER_MAX_CHARS as u64;

/// What a failed attempt left behind (SPEC 2.1). Lenient, as evidence comes
/// from many tools: unknown fields are ignored, `status` may be a number or a
/// numeric string, header values may be numbers, booleans or lists, and a
/// `body` given as JSON is kept as its JSON text.
///
/// ```
/// use api::read::Read;
/// let body = serde_json::json!({"provider": "openai", "status": "429", "headers": {"Retry-After": 20}, "note": "ignored"});
/// let evidence = Read::<api::EvidenceRequest>::from_json(&body)
///     .check(api::EvidenceRequest::check)
///     .unwrap();
/// assert_eq!(evidence.status.and_then(|status| status.value().map(|s| s.get())), Some(429));
/// assert_eq!(evidence.headers.unwrap()["Retry-After"].value().and_then(|v| v.as_str()), Some("20"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EvidenceRequest {
    /// The provider family or agent CLI whose errors to expect: `anthropic`,
    /// `openai`, `gemini`, `claude_code`, ...
    #[validate(
        length(min = 1, max = PROVIDER_MAX),
        custom(function = "crate::checks::not_blank")
    )]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub provider: String,
    /// The HTTP status, 100..=999.
    #[validate(range(min = 100, max = 999))]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::HttpStatusSchema>))]
    pub status: Option<Sent<HttpStatus>>,
    /// The response headers; names are matched case-insensitively.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<BTreeMap<String, crate::openapi::HeaderValueSchema>>))]
    pub headers: Option<BTreeMap<String, Sent<HeaderValue>>>,
    /// The raw response body, or the data of an SSE `error` event.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::BodyTextSchema>))]
    pub body: Option<Sent<BodyText>>,
    /// The stdout/stderr text of an agent CLI.
    pub output: Option<String>,
    /// How the connection failed: `connection_refused`, `connection_reset`,
    /// `timeout`, `dns`, `tls`, `closed_early`.
    pub transport: Option<String>,
    /// When the evidence was observed; now when left out.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Timestamp>))]
    pub observed_at: Option<Sent<Timestamp>>,
    /// The IANA time zone of the process that printed `output`
    /// (`America/New_York`), for wall-clock resets it prints without a zone
    /// ("resets 3pm"). The server checks the name against its time-zone database.
    #[validate(length(min = 1, max = 64))]
    #[cfg_attr(
        feature = "openapi",
        schema(min_length = 1, max_length = 64, example = "Europe/Berlin")
    )]
    pub time_zone: Option<String>,
}

impl crate::read::Request for EvidenceRequest {
    // SPEC 2.1: evidence comes from many tools; what the catalogue does not read is ignored.
    const UNKNOWN_FIELDS: crate::read::UnknownFields = crate::read::UnknownFields::Ignore;
}

impl EvidenceRequest {
    /// Every error at once, or the evidence with its text trimmed where
    /// white space carries no meaning.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        let mut request = self.clone();
        request.provider = request.provider.trim().to_owned();
        let root = policy::FieldPath::root();
        let mut errors = crate::checks::field_errors(self.validate(), &root);
        let mut unreadable = |path: policy::FieldPath, refusal: Option<&'static str>| {
            if let Some(message) = refusal {
                errors.push(policy::FieldError::new(
                    &path,
                    policy::ErrorCode::Type,
                    message,
                ));
            }
        };
        unreadable(
            root.field("status"),
            self.status.as_ref().and_then(Sent::refusal),
        );
        for (name, value) in self.headers.iter().flatten() {
            unreadable(root.field("headers").field(name), value.refusal());
        }
        unreadable(
            root.field("body"),
            self.body.as_ref().and_then(Sent::refusal),
        );
        unreadable(
            root.field("observed_at"),
            self.observed_at.as_ref().and_then(Sent::refusal),
        );
        if errors.is_empty() {
            Ok(request)
        } else {
            Err(errors)
        }
    }
}

/// A lenient field's value as sent: read (by the policy crate's reader of the
/// field, the catalogue's too), or the reason it could not be. Reading never
/// fails, so one unreadable field does not hide the others;
/// [`EvidenceRequest::check`] reports the reasons at their fields.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sent<T>(Result<T, &'static str>);

impl<T> Sent<T> {
    /// A value that was read.
    pub fn new(value: T) -> Self {
        Self(Ok(value))
    }

    /// The value, when it could be read.
    pub fn value(&self) -> Option<&T> {
        self.0.as_ref().ok()
    }

    /// Why it could not be read, if it could not.
    pub fn refusal(&self) -> Option<&'static str> {
        self.0.as_ref().err().copied()
    }
}

impl<'de, T: LenientJson> Deserialize<'de> for Sent<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(Self(T::from_json(Value::deserialize(deserializer)?)))
    }
}

impl<T: LenientJson> Serialize for Sent<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match &self.0 {
            Ok(value) => value.to_json().serialize(serializer),
            Err(_) => serializer.serialize_none(),
        }
    }
}

impl validator::ValidateRange<i64> for Sent<HttpStatus> {
    fn greater_than(&self, max: i64) -> Option<bool> {
        self.value().map(|status| status.get() > max)
    }

    fn less_than(&self, min: i64) -> Option<bool> {
        self.value().map(|status| status.get() < min)
    }
}

impl LenientJson for Timestamp {
    fn from_json(json: Value) -> Result<Self, &'static str> {
        match json {
            Value::String(text) => text
                .parse()
                .map_err(|_| "must be an RFC 3339 time such as 2026-11-30T02:00:20Z"),
            _ => Err("must be an RFC 3339 time such as 2026-11-30T02:00:20Z"),
        }
    }

    fn to_json(&self) -> Value {
        Value::String(self.to_string())
    }
}

/// The catalogue's verdict (SPEC 2.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Classification {
    /// The semantic code.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::SemanticCodeSchema))]
    pub code: SemanticCode,
    /// The code's class.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ClassSchema))]
    pub class: Class,
    /// `high` when the matching rules agree; `low` stops automatic recovery.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ConfidenceSchema))]
    pub confidence: Confidence,
    /// A relative timing hint, in milliseconds after `observed_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// When the limit resets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at: Option<Timestamp>,
    /// The id of the rule that decided (`unknown` when none matched).
    pub rule: String,
    /// The catalogue version that classified.
    pub catalogue: String,
    /// The provider's message with secrets removed, at most 300 characters.
    pub safe_cause: String,
    /// Timing hints that were seen and not used, and why.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hints_dropped: Vec<DroppedHint>,
    /// When confidence is low: the rules of another class that matched too.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conflicting_rules: Vec<String>,
}

/// A timing hint the catalogue saw and did not use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct DroppedHint {
    /// Where it came from: a header name, a body field or `message`.
    pub source: String,
    /// The value as given (redacted, at most 64 characters).
    pub value: String,
    /// Why it was not used.
    pub reason: HintDropReason,
}

/// Why a timing hint was not used (SPEC 2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum HintDropReason {
    /// Not a number, duration or time the catalogue can read.
    Unparsable,
    /// A negative delay.
    Negative,
    /// A time that has already passed.
    Past,
    /// More than 7 days ahead.
    TooFar,
    /// A wall-clock time without a date or a zone ("resets 3pm").
    NoDateOrZone,
}

impl fmt::Display for HintDropReason {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(match self {
            Self::Unparsable => "unparsable",
            Self::Negative => "negative",
            Self::Past => "in the past",
            Self::TooFar => "more than 7 days ahead",
            Self::NoDateOrZone => "a time without a date or zone",
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::read::Read;

    fn read(body: serde_json::Value) -> Result<EvidenceRequest, Vec<(String, &'static str)>> {
        Read::<EvidenceRequest>::from_json(&body)
            .check(EvidenceRequest::check)
            .map_err(|errors| {
                errors
                    .into_iter()
                    .map(|error| (error.field, error.code.as_str()))
                    .collect()
            })
    }

    #[test]
    fn lenient_fields() {
        let evidence = read(json!({
            "provider": " openai ", "status": " 503 ", "unknown": {"deep": [1]},
            "headers": {"Retry-After": 20, "X-List": ["a", "b"], "X-Null": null, "X-Flag": true},
            "body": {"error": {"message": "x"}},
        }))
        .unwrap();
        assert_eq!(evidence.provider, "openai");
        assert_eq!(evidence.status, Some(Sent::new(HttpStatus::new(503))));
        let headers = evidence.headers.unwrap();
        let header = |name: &str| headers[name].value().and_then(HeaderValue::as_str);
        assert_eq!(header("Retry-After"), Some("20"));
        assert_eq!(header("X-List"), Some("a, b"));
        assert_eq!(header("X-Null"), None);
        assert_eq!(header("X-Flag"), Some("true"));
        assert_eq!(
            evidence
                .body
                .as_ref()
                .and_then(Sent::value)
                .map(BodyText::as_str),
            Some(r#"{"error":{"message":"x"}}"#)
        );
    }

    #[test]
    fn refusals() {
        let pairs = |list: &[(&str, &'static str)]| -> Vec<(String, &'static str)> {
            list.iter().map(|(f, c)| ((*f).to_owned(), *c)).collect()
        };
        assert_eq!(
            read(json!({"status": 429})).unwrap_err(),
            pairs(&[("provider", "required")])
        );
        assert_eq!(
            read(json!({"provider": "  "})).unwrap_err(),
            pairs(&[("provider", "required")])
        );
        assert_eq!(
            read(json!({"provider": 7})).unwrap_err(),
            pairs(&[("provider", "type")])
        );
        assert_eq!(
            read(json!({"provider": "a", "status": 4.5})).unwrap_err(),
            pairs(&[("status", "type")])
        );
        assert_eq!(
            read(json!({"provider": "a", "status": 42})).unwrap_err(),
            pairs(&[("status", "range")])
        );
        assert_eq!(
            read(json!({"provider": "a", "observed_at": "yesterday"})).unwrap_err(),
            pairs(&[("observed_at", "type")])
        );
        assert_eq!(
            read(json!({"provider": "a", "output": {"x": 1}})).unwrap_err(),
            pairs(&[("output", "type")])
        );
        assert_eq!(read(json!([1, 2])).unwrap_err(), pairs(&[("", "type")]));
        // Every unreadable field at once, in field order, with the rest.
        assert_eq!(
            read(json!({"provider": "  ", "status": 4.5, "headers": {"a": {}}, "body": 1, "observed_at": "x"}))
                .unwrap_err(),
            pairs(&[
                ("provider", "required"),
                ("status", "type"),
                ("headers.a", "type"),
                ("body", "type"),
                ("observed_at", "type"),
            ])
        );
    }

    #[test]
    fn verdict_shape() {
        let verdict = Classification {
            code: SemanticCode::RateLimited,
            class: Class::Transient,
            confidence: Confidence::High,
            retry_after_ms: Some(20_000),
            reset_at: Some(Timestamp::from_millis(1_796_004_020_000)),
            rule: "anthropic.rate_limit_error".into(),
            catalogue: "2026.12.0".into(),
            safe_cause: "slow down".into(),
            hints_dropped: vec![],
            conflicting_rules: vec![],
        };
        assert_eq!(
            serde_json::to_value(&verdict).unwrap(),
            json!({"code": "rate_limited", "class": "transient", "confidence": "high",
                   "retry_after_ms": 20000, "reset_at": "2026-11-30T02:00:20Z",
                   "rule": "anthropic.rate_limit_error", "catalogue": "2026.12.0", "safe_cause": "slow down"})
        );
    }
}
