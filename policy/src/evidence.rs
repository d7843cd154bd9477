//! The fields of evidence (SPEC 2.1) as JSON gives them, read leniently: one
//! reader per field, shared by the API's `EvidenceRequest` (a `POST
//! /api/classify` body, in the browser too) and the catalogue's `Evidence` (a
//! line of `switchback classify`), so the two read every body alike. Evidence
//! comes from many tools: a status may be a number or digits in text, a header
//! value a number, boolean or list, a body JSON kept as its text. Times are
//! read by [`crate::rfc3339`].

use serde_json::Value;

/// The longest provider name evidence may give, in characters.
pub const PROVIDER_MAX_CHARS: usize = 100;

/// How a lenient field reads from JSON and writes back.
pub trait LenientJson: Sized {
    /// The value `json` holds, or why it holds none (a sentence to put after
    /// the field's name).
    fn from_json(json: Value) -> Result<Self, &'static str>;
    /// The value as JSON.
    fn to_json(&self) -> Value;
}

/// An HTTP status: a number (however written: `429`, `429.0`), or digits
/// written as text (`"429"`), perhaps with white space around them. Its
/// range (100..=999) is the reader's to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HttpStatus(i64);

impl HttpStatus {
    /// The status with this number.
    pub const fn new(status: i64) -> Self {
        Self(status)
    }

    /// The number.
    pub const fn get(self) -> i64 {
        self.0
    }
}

impl LenientJson for HttpStatus {
    fn from_json(json: Value) -> Result<Self, &'static str> {
        let status = match &json {
            Value::Number(_) => crate::json_integer(&json).whole(),
            Value::String(text) => Some(text.trim())
                .filter(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|digits| digits.parse::<i64>().ok()),
            _ => None,
        };
        status
            .map(Self)
            .ok_or("must be an integer (an HTTP status)")
    }

    fn to_json(&self) -> Value {
        Value::from(self.0)
    }
}

/// A header value: text, or a number, boolean or list of values (joined
/// with `, `); `null` counts as absent.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderValue(Option<String>);

impl HeaderValue {
    /// A header with this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self(Some(text.into()))
    }

    /// The text, when the header has one.
    pub fn as_str(&self) -> Option<&str> {
        self.0.as_deref()
    }

    /// The text, when the header has one, moved out.
    pub fn into_text(self) -> Option<String> {
        self.0
    }
}

impl LenientJson for HeaderValue {
    fn from_json(json: Value) -> Result<Self, &'static str> {
        let text = |value: Value| match value {
            Value::String(text) => text,
            other => other.to_string(),
        };
        match json {
            Value::Null => Ok(Self(None)),
            Value::Object(_) => Err("must be a string, number, boolean or list of them"),
            Value::Array(items) => Ok(Self(Some(
                items.into_iter().map(text).collect::<Vec<_>>().join(", "),
            ))),
            other => Ok(Self(Some(text(other)))),
        }
    }

    fn to_json(&self) -> Value {
        self.0.clone().map_or(Value::Null, Value::String)
    }
}

/// A body: text, or JSON (an object or array) kept as its JSON text.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BodyText(String);

impl BodyText {
    /// A body with this text.
    pub fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The text, moved out.
    pub fn into_text(self) -> String {
        self.0
    }
}

impl LenientJson for BodyText {
    fn from_json(json: Value) -> Result<Self, &'static str> {
        match json {
            Value::String(text) => Ok(Self(text)),
            value @ (Value::Object(_) | Value::Array(_)) => Ok(Self(value.to_string())),
            _ => Err("must be a string, or a JSON object or array"),
        }
    }

    fn to_json(&self) -> Value {
        Value::String(self.0.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::{BodyText, HeaderValue, HttpStatus, LenientJson};

    /// (JSON, what each reader makes of it) rows: read alike by the API and
    /// the catalogue, so every shape a tool may send is pinned here.
    #[test]
    fn each_reader_reads_leniently() {
        let status = |json: Value| HttpStatus::from_json(json).map(HttpStatus::get).ok();
        for (json, expected) in [
            (json!(429), Some(429)),
            (json!(429.0), Some(429)),
            (json!(1e2), Some(100)),
            (json!(" 503 "), Some(503)),
            (json!("0429"), Some(429)),
            (json!(42), Some(42)),
            (json!(4.5), None),
            (json!("+429"), None),
            (json!("4 29"), None),
            (json!(""), None),
            (json!(true), None),
            (json!(null), None),
        ] {
            assert_eq!(status(json.clone()), expected, "{json}");
        }

        let header = |json: Value| HeaderValue::from_json(json).map(HeaderValue::into_text);
        for (json, expected) in [
            (json!("20"), Ok(Some("20"))),
            (json!(20), Ok(Some("20"))),
            (json!(true), Ok(Some("true"))),
            (json!(["a", "b"]), Ok(Some("a, b"))),
            (json!([1, [2], {"b": 3}]), Ok(Some(r#"1, [2], {"b":3}"#))),
            (json!(null), Ok(None)),
            (json!({}), Err(())),
        ] {
            let got = header(json.clone());
            assert_eq!(
                got.as_ref().map(Option::as_deref).map_err(|_| ()),
                expected,
                "{json}"
            );
        }

        let body = |json: Value| BodyText::from_json(json).map(BodyText::into_text).ok();
        for (json, expected) in [
            (json!("slow down"), Some("slow down")),
            (
                json!({"error": {"message": "x"}}),
                Some(r#"{"error":{"message":"x"}}"#),
            ),
            (json!([1]), Some("[1]")),
            (json!(5), None),
            (json!(true), None),
        ] {
            assert_eq!(body(json.clone()).as_deref(), expected, "{json}");
        }
    }
}
