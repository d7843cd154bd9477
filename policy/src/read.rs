//! Typed reads from a `serde_json::Value` that report, never panic or default.
//!
//! Each reader records what is wrong with its value in `errors` and returns `None`,
//! so a validator can read every field and report every error at once.

use serde_json::{Map, Value};

use crate::document::Bounds;
use crate::errors::{ErrorCode, FieldError, JsonInteger, json_integer};
use crate::path::FieldPath;

/// The object at `path`, after reporting each field not in `known` as `unknown_field`.
pub(crate) fn object<'a>(
    value: &'a Value,
    path: &FieldPath,
    known: &[&str],
    errors: &mut Vec<FieldError>,
) -> Option<&'a Map<String, Value>> {
    let Value::Object(map) = value else {
        errors.push(FieldError::new(
            path,
            ErrorCode::Type,
            format!("must be an object, not {}", describe(value)),
        ));
        return None;
    };
    // Sorted, so errors come in the same order whatever map type serde_json was built with.
    let mut unknown: Vec<&String> = map
        .keys()
        .filter(|key| !known.contains(&key.as_str()))
        .collect();
    unknown.sort();
    for key in unknown {
        errors.push(FieldError::new(
            &path.field(key),
            ErrorCode::UnknownField,
            "is not a known field",
        ));
    }
    Some(map)
}

/// The field `name` of `map`, or a `required` error.
pub(crate) fn required<'a>(
    map: &'a Map<String, Value>,
    name: &str,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<&'a Value> {
    let field = map.get(name);
    if field.is_none() {
        errors.push(FieldError::new(
            &path.field(name),
            ErrorCode::Required,
            "is required",
        ));
    }
    field
}

/// A boolean, or a `type` error.
pub(crate) fn boolean(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<bool> {
    let boolean = value.as_bool();
    if boolean.is_none() {
        errors.push(FieldError::new(
            path,
            ErrorCode::Type,
            format!("must be true or false, not {}", describe(value)),
        ));
    }
    boolean
}

/// What kind of integer a JSON value is, if any.
pub(crate) enum IntegerKind {
    /// A non-negative integer that fits a `u64`.
    Unsigned(u64),
    /// An integer, but negative or at least 2^64.
    OutOfRange,
    /// Not an integer: the message says what it is instead.
    NotInteger(String),
}

/// Sorts a JSON value into an [`IntegerKind`], by [`json_integer`]: `2`, `2.0`
/// and `1e2` are integers, `2.5` and `"2"` are not.
pub(crate) fn integer_kind(value: &Value) -> IntegerKind {
    match json_integer(value) {
        JsonInteger::Integer(integer) => {
            u64::try_from(integer).map_or(IntegerKind::OutOfRange, IntegerKind::Unsigned)
        }
        JsonInteger::OutOfRange => IntegerKind::OutOfRange,
        JsonInteger::Fraction => {
            IntegerKind::NotInteger("must be an integer, not a fraction".to_owned())
        }
        JsonInteger::NotANumber => {
            IntegerKind::NotInteger(format!("must be an integer, not {}", describe(value)))
        }
    }
}

/// An integer within `bounds`, or a `type` or `range` error.
pub(crate) fn bounded(
    value: &Value,
    path: &FieldPath,
    bounds: Bounds,
    errors: &mut Vec<FieldError>,
) -> Option<u64> {
    match integer_kind(value) {
        IntegerKind::Unsigned(unsigned) if bounds.contains(unsigned) => Some(unsigned),
        IntegerKind::Unsigned(_) | IntegerKind::OutOfRange => {
            errors.push(FieldError::new(path, ErrorCode::Range, bounds.message()));
            None
        }
        IntegerKind::NotInteger(message) => {
            errors.push(FieldError::new(path, ErrorCode::Type, message));
            None
        }
    }
}

/// One of the named `options`, or a `type` (not a string) or `enum` error.
pub(crate) fn one_of<T: Copy>(
    value: &Value,
    path: &FieldPath,
    options: &[(&str, T)],
    errors: &mut Vec<FieldError>,
) -> Option<T> {
    let names: Vec<&str> = options.iter().map(|(name, _)| *name).collect();
    let Value::String(text) = value else {
        let message = format!(
            "must be one of {}, not {}",
            names.join(", "),
            describe(value)
        );
        errors.push(FieldError::new(path, ErrorCode::Type, message));
        return None;
    };
    let found = options
        .iter()
        .find(|(name, _)| name == text)
        .map(|(_, option)| *option);
    if found.is_none() {
        errors.push(FieldError::new(
            path,
            ErrorCode::Enum,
            format!("must be one of {}", names.join(", ")),
        ));
    }
    found
}

/// See [`crate::errors::describe_json`].
pub(crate) use crate::errors::describe_json as describe;
