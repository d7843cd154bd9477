//! The `validator` crate's errors as the contract's field errors: the same
//! `{"field", "code", "message"}` list, with the same paths and sentences as
//! the policy crate's own readers give.

use std::borrow::Cow;

use policy::{ErrorCode, FieldError, FieldPath};
use validator::{ValidationError, ValidationErrors, ValidationErrorsKind};

/// The id and model bounds, in the type `validator` compares lengths with.
pub(crate) const ID_MAX: u64 = crate::ids::ID_MAX_CHARS as u64;
pub(crate) const MODEL_MAX: u64 = policy::MODEL_MAX_CHARS as u64;

/// Every error of a `validate()` call, at paths under `path`, sorted by path
/// (the reader then puts them in field order).
pub(crate) fn field_errors(
    result: Result<(), ValidationErrors>,
    path: &FieldPath,
) -> Vec<FieldError> {
    let mut found = Vec::new();
    if let Err(errors) = result {
        collect(&errors, path, &mut found);
    }
    found.sort_by(|a, b| a.field.cmp(&b.field));
    found
}

/// `value` as it is when its `validate()` finds nothing, or every error it
/// finds, at the request's own paths.
pub(crate) fn checked<T: validator::Validate>(value: T) -> Result<T, Vec<FieldError>> {
    let errors = field_errors(value.validate(), &FieldPath::root());
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors)
    }
}

fn collect(errors: &ValidationErrors, path: &FieldPath, found: &mut Vec<FieldError>) {
    for (field, kind) in errors.errors() {
        let at = path.field(field);
        match kind {
            ValidationErrorsKind::Field(errors) => {
                found.extend(errors.iter().map(|error| field_error(&at, error)));
            }
            ValidationErrorsKind::Struct(inner) => collect(inner, &at, found),
            ValidationErrorsKind::List(items) => {
                for (index, inner) in items {
                    collect(inner, &at.index(*index), found);
                }
            }
        }
    }
}

/// One validator error: `length` and `range` get the policy crate's
/// sentences; a custom check's code is one of ours already. The value is
/// never repeated (it may be a key pasted into the wrong field).
fn field_error(path: &FieldPath, error: &ValidationError) -> FieldError {
    let number = |name: &str| error.params.get(name).and_then(serde_json::Value::as_i64);
    let given: Option<&Cow<'static, str>> = error.message.as_ref();
    match error.code.as_ref() {
        "length" => {
            let length = match error.params.get("value") {
                Some(serde_json::Value::String(text)) => text.chars().count() as i64,
                Some(serde_json::Value::Array(items)) => items.len() as i64,
                _ => 0,
            };
            match (number("min"), number("max")) {
                (Some(min), _) if length < min && length == 0 => FieldError::new(
                    path,
                    ErrorCode::Required,
                    given.map_or("must not be empty", |message| message.as_ref()),
                ),
                (Some(min), _) if length < min => FieldError::new(
                    path,
                    ErrorCode::Range,
                    format!("must be at least {min} characters"),
                ),
                (_, Some(max)) => FieldError::new(
                    path,
                    ErrorCode::Range,
                    format!("must be at most {max} characters"),
                ),
                _ => FieldError::new(path, ErrorCode::Range, "has the wrong length"),
            }
        }
        "range" => {
            let message = match (number("min"), number("max")) {
                (Some(min), Some(max)) => format!("must be between {min} and {max}"),
                (Some(min), None) => format!("must be at least {min}"),
                (None, Some(max)) => format!("must be at most {max}"),
                (None, None) => "is out of range".to_owned(),
            };
            FieldError::new(path, ErrorCode::Range, message)
        }
        code => {
            let code = serde_json::from_value(serde_json::Value::String(code.to_owned()))
                .unwrap_or(ErrorCode::Type);
            FieldError::new(
                path,
                code,
                given.map_or("is not valid", |message| message.as_ref()),
            )
        }
    }
}

/// The characters Rust's `str::trim` removes (Unicode `White_Space`), as a
/// regular-expression class body, so a document's patterns agree with the
/// server's trimming exactly.
#[cfg(feature = "openapi")]
pub const WHITE_SPACE_CLASS: &str =
    r"\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// `text` holds something besides white space (an empty text is `length`'s to report).
pub(crate) fn not_blank(text: &str) -> Result<(), validator::ValidationError> {
    if !text.is_empty() && text.trim().is_empty() {
        return Err(refusal(ErrorCode::Required, "must not be blank"));
    }
    Ok(())
}

/// A custom check's refusal: one of the contract's codes, and its sentence.
pub(crate) fn refusal(code: ErrorCode, message: &'static str) -> ValidationError {
    ValidationError::new(code.as_str()).with_message(Cow::Borrowed(message))
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use validator::Validate;

    use super::*;

    #[derive(Validate, serde::Serialize)]
    struct Sample {
        #[validate(length(min = 1, max = 5))]
        name: String,
        #[validate(range(min = 1, max = 10))]
        count: i64,
        #[validate(length(min = 1, message = "needs at least one item"), nested)]
        items: Vec<Item>,
    }

    #[derive(Validate, serde::Serialize)]
    struct Item {
        #[validate(custom(function = "no_x"))]
        label: String,
    }

    fn no_x(label: &str) -> Result<(), ValidationError> {
        if label.contains('x') {
            return Err(refusal(ErrorCode::Type, "must not contain x"));
        }
        Ok(())
    }

    fn found(sample: &Sample) -> serde_json::Value {
        serde_json::to_value(field_errors(sample.validate(), &FieldPath::root())).unwrap()
    }

    #[test]
    fn sentences_and_codes() {
        let sample = Sample {
            name: String::new(),
            count: 11,
            items: vec![Item { label: "ok".into() }, Item { label: "xx".into() }],
        };
        assert_eq!(
            found(&sample),
            json!([
                {"field": "count", "code": "range", "message": "must be between 1 and 10"},
                {"field": "items[1].label", "code": "type", "message": "must not contain x"},
                {"field": "name", "code": "required", "message": "must not be empty"},
            ])
        );
        let sample = Sample {
            name: "sixsix".into(),
            count: 1,
            items: vec![],
        };
        assert_eq!(
            found(&sample),
            json!([
                {"field": "items", "code": "required", "message": "needs at least one item"},
                {"field": "name", "code": "range", "message": "must be at most 5 characters"},
            ])
        );
    }
}
