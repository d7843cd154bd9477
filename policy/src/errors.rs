//! Field errors: the one validation error shape shared by the server, the API and the browser.

use serde::{Deserialize, Serialize};

use crate::path::FieldPath;

/// The machine code of a [`FieldError`] (SPEC 3), serialized in snake_case.
///
/// ```
/// use policy::ErrorCode;
/// assert_eq!(serde_json::to_value(ErrorCode::UnknownField).unwrap(), "unknown_field");
/// assert_eq!(ErrorCode::NotFound.as_str(), "not_found");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A field that must be present is missing.
    Required,
    /// A number outside its bounds (including negatives and numbers past 2^64).
    Range,
    /// The wrong JSON type: a string for a number, a fraction, an array for an object.
    Type,
    /// A field the document does not define.
    UnknownField,
    /// A value outside its set (`on_exhausted`, a legacy action).
    Enum,
    /// A policy `version` other than 2 (version 1 is written without `version`).
    Version,
    /// A legacy rule map whose codes of one class resolve to different actions.
    Conflict,
    /// A value that must be unique is repeated (e.g. a candidate id).
    Unique,
    /// A referenced provider or candidate id does not exist.
    NotFound,
}

impl ErrorCode {
    /// Every code, in SPEC order.
    ///
    /// ```
    /// assert_eq!(policy::ErrorCode::ALL.len(), 9);
    /// ```
    pub const ALL: [ErrorCode; 9] = [
        Self::Required,
        Self::Range,
        Self::Type,
        Self::UnknownField,
        Self::Enum,
        Self::Version,
        Self::Conflict,
        Self::Unique,
        Self::NotFound,
    ];

    /// The snake_case name, as it appears in JSON.
    ///
    /// ```
    /// assert_eq!(policy::ErrorCode::Range.as_str(), "range");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Range => "range",
            Self::Type => "type",
            Self::UnknownField => "unknown_field",
            Self::Enum => "enum",
            Self::Version => "version",
            Self::Conflict => "conflict",
            Self::Unique => "unique",
            Self::NotFound => "not_found",
        }
    }
}

/// One validation error, addressed to a field. Its JSON shape,
/// `{"field", "code", "message"}`, travels unchanged to the browser and the HTTP API.
///
/// ```
/// use policy::{ErrorCode, FieldError, FieldPath};
/// let path = FieldPath::root().field("candidates").index(1).field("model");
/// let error = FieldError::new(&path, ErrorCode::Required, "is required");
/// assert_eq!(
///     serde_json::to_value(&error).unwrap(),
///     serde_json::json!({"field": "candidates[1].model", "code": "required", "message": "is required"}),
/// );
/// assert_eq!(error.to_string(), "candidates[1].model: is required");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, thiserror::Error)]
#[error("{}", display_field_error(.field, .message))]
pub struct FieldError {
    /// The field's path, e.g. `candidates[1].policy.hard.retry.max_retries`; empty for the
    /// validated value itself.
    pub field: String,
    /// What kind of error it is.
    pub code: ErrorCode,
    /// A sentence fragment for people, e.g. `must be between 1 and 10`.
    pub message: String,
}

impl FieldError {
    /// An error at `path`.
    ///
    /// ```
    /// use policy::{ErrorCode, FieldError, FieldPath};
    /// let error = FieldError::new(&FieldPath::root().field("name"), ErrorCode::Unique, "is already taken");
    /// assert_eq!(error.field, "name");
    /// ```
    pub fn new(path: &FieldPath, code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            field: path.to_string(),
            code,
            message: message.into(),
        }
    }
}

/// A JSON value read as an integer, as JSON Schema has integers: a number
/// without a fractional part, however it is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonInteger {
    /// An integer: `2`, `-7`, and also `2.0` and `1e2`.
    Integer(i128),
    /// A whole number beyond what 64 bits hold.
    OutOfRange,
    /// A number with a fractional part, such as `1.5`.
    Fraction,
    /// Not a number at all.
    NotANumber,
}

impl JsonInteger {
    /// The integer, when it is one that an `i64` holds.
    ///
    /// ```
    /// use policy::json_integer;
    /// assert_eq!(json_integer(&serde_json::json!(429.0)).whole(), Some(429));
    /// assert_eq!(json_integer(&serde_json::json!("429")).whole(), None);
    /// ```
    pub fn whole(self) -> Option<i64> {
        match self {
            Self::Integer(integer) => i64::try_from(integer).ok(),
            _ => None,
        }
    }
}

/// `value` as an integer; the one reading of integers every reader shares.
///
/// ```
/// use policy::{JsonInteger, json_integer};
/// use serde_json::json;
/// assert_eq!(json_integer(&json!(1e2)), JsonInteger::Integer(100));
/// assert_eq!(json_integer(&json!(-3)), JsonInteger::Integer(-3));
/// assert_eq!(json_integer(&json!(2.5)), JsonInteger::Fraction);
/// assert_eq!(json_integer(&json!(1e30)), JsonInteger::OutOfRange);
/// assert_eq!(json_integer(&json!(true)), JsonInteger::NotANumber);
/// ```
pub fn json_integer(value: &serde_json::Value) -> JsonInteger {
    let serde_json::Value::Number(number) = value else {
        return JsonInteger::NotANumber;
    };
    if let Some(unsigned) = number.as_u64() {
        return JsonInteger::Integer(i128::from(unsigned));
    }
    if let Some(signed) = number.as_i64() {
        return JsonInteger::Integer(i128::from(signed));
    }
    // Written with a decimal point or an exponent, or beyond 64 bits (serde_json
    // keeps those as floats).
    match number.as_f64() {
        Some(float) if float.fract() != 0.0 => JsonInteger::Fraction,
        // Exact below 2^53; larger whole floats are beyond every bound anyway.
        Some(float) if float.abs() < 9_007_199_254_740_992.0 => JsonInteger::Integer(float as i128),
        _ => JsonInteger::OutOfRange,
    }
}

/// A short description of a value's JSON type for messages: "a string", "null", ...
///
/// ```
/// assert_eq!(policy::describe_json(&serde_json::json!(1.5)), "a non-integer number");
/// assert_eq!(policy::describe_json(&serde_json::json!([1])), "an array");
/// ```
pub fn describe_json(value: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(number) if number.is_f64() => "a non-integer number",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn display_field_error(field: &str, message: &str) -> String {
    if field.is_empty() {
        message.to_owned()
    } else {
        format!("{field}: {message}")
    }
}
