//! Version-2 document validation: completeness, unknown fields, versions, JSON types,
//! every error at once, and composable paths.

use policy::{
    ErrorCode, FieldError, FieldPath, PolicyDocument, normalize_policy, validate_document,
};
use serde_json::{Value, json};

/// Every field of a complete document, as dotted paths, parents before children.
const FIELDS: [&str; 19] = [
    "version",
    "transient",
    "transient.retry",
    "transient.retry.enabled",
    "transient.retry.max_retries",
    "transient.retry.initial_interval_ms",
    "transient.reset_wait",
    "transient.reset_wait.enabled",
    "transient.reset_wait.max_wait_s",
    "transient.on_exhausted",
    "hard",
    "hard.retry",
    "hard.retry.enabled",
    "hard.retry.max_retries",
    "hard.retry.initial_interval_ms",
    "hard.reset_wait",
    "hard.reset_wait.enabled",
    "hard.reset_wait.max_wait_s",
    "hard.on_exhausted",
];

fn defaults() -> Value {
    serde_json::to_value(PolicyDocument::default()).unwrap()
}

fn pointer(dotted: &str) -> String {
    format!("/{}", dotted.replace('.', "/"))
}

/// Validates `document` at the root and returns `(field, code)` pairs.
fn errors_of(document: &Value) -> Vec<(String, ErrorCode)> {
    match normalize_policy(document, &FieldPath::root()) {
        Ok(_) => vec![],
        Err(errors) => errors
            .into_iter()
            .map(|error| (error.field, error.code))
            .collect(),
    }
}

fn pairs(expected: &[(&str, ErrorCode)]) -> Vec<(String, ErrorCode)> {
    expected
        .iter()
        .map(|(field, code)| (field.to_string(), *code))
        .collect()
}

#[test]
fn every_missing_field_is_required() {
    for field in FIELDS {
        let mut document = defaults();
        let (parent, name) = field
            .rsplit_once('.')
            .map_or(("", field), |(parent, name)| (parent, name));
        let parent = if parent.is_empty() {
            document.as_object_mut()
        } else {
            document
                .pointer_mut(&pointer(parent))
                .unwrap()
                .as_object_mut()
        };
        parent.unwrap().remove(name).unwrap();
        // Without `version` the object is a legacy map: check the v2 validator directly.
        let errors: Vec<(String, ErrorCode)> = validate_document(&document, &FieldPath::root())
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code))
            .collect();
        assert_eq!(
            errors,
            pairs(&[(field, ErrorCode::Required)]),
            "without {field}"
        );
    }
}

#[test]
fn unknown_fields_at_every_level() {
    let table = [
        ("", "outside"),
        ("", "rate_limited"),
        ("transient", "reset"),
        ("hard.retry", "jitter"),
        ("transient.reset_wait", "max_wait_ms"),
    ];
    for (parent, extra) in table {
        let mut document = defaults();
        let object = if parent.is_empty() {
            &mut document
        } else {
            document.pointer_mut(&pointer(parent)).unwrap()
        };
        object
            .as_object_mut()
            .unwrap()
            .insert(extra.to_owned(), json!(1));
        let field = if parent.is_empty() {
            extra.to_owned()
        } else {
            format!("{parent}.{extra}")
        };
        assert_eq!(
            errors_of(&document),
            pairs(&[(&field, ErrorCode::UnknownField)]),
            "{field}"
        );
    }
}

#[test]
fn versions() {
    // (version, expected error code at `version`, or None when accepted)
    let table = [
        (json!(2), None),
        (json!(1), Some(ErrorCode::Version)),
        (json!(3), Some(ErrorCode::Version)),
        (json!(0), Some(ErrorCode::Version)),
        (json!(-2), Some(ErrorCode::Version)),
        (
            serde_json::from_str("1180591620717411303424").unwrap(),
            Some(ErrorCode::Version),
        ),
        (json!("2"), Some(ErrorCode::Type)),
        // JSON Schema's integers: no fractional part, however written.
        (json!(2.0), None),
        (json!(2.5), Some(ErrorCode::Type)),
        (json!(null), Some(ErrorCode::Type)),
        (json!([2]), Some(ErrorCode::Type)),
    ];
    for (version, expected) in table {
        let mut document = defaults();
        document["version"] = version.clone();
        let expected: Vec<(String, ErrorCode)> = expected
            .map(|code| ("version".to_owned(), code))
            .into_iter()
            .collect();
        assert_eq!(errors_of(&document), expected, "version {version}");
    }
}

#[test]
fn wrong_json_types_and_enums() {
    // (field, value, expected code)
    let table = [
        ("transient", json!([]), ErrorCode::Type),
        ("transient", json!(null), ErrorCode::Type),
        ("hard.retry", json!("off"), ErrorCode::Type),
        ("hard.reset_wait", json!(true), ErrorCode::Type),
        ("transient.retry.enabled", json!("true"), ErrorCode::Type),
        ("transient.retry.enabled", json!(1), ErrorCode::Type),
        ("hard.reset_wait.enabled", json!(null), ErrorCode::Type),
        ("transient.on_exhausted", json!("retry"), ErrorCode::Enum),
        ("transient.on_exhausted", json!("Skip"), ErrorCode::Enum),
        ("hard.on_exhausted", json!(""), ErrorCode::Enum),
        ("hard.on_exhausted", json!(1), ErrorCode::Type),
        ("hard.on_exhausted", json!(null), ErrorCode::Type),
    ];
    for (field, value, code) in table {
        let mut document = defaults();
        *document.pointer_mut(&pointer(field)).unwrap() = value.clone();
        assert_eq!(
            errors_of(&document),
            pairs(&[(field, code)]),
            "{field} = {value}"
        );
    }
}

#[test]
fn whole_values_that_are_not_policies() {
    // (value, expected): null is "no policy" and gets the defaults.
    let table = [
        (json!(null), None),
        (json!([]), Some(ErrorCode::Type)),
        (json!("retry_same"), Some(ErrorCode::Type)),
        (json!(2), Some(ErrorCode::Type)),
        (json!(true), Some(ErrorCode::Type)),
    ];
    let path = FieldPath::root()
        .field("candidates")
        .index(0)
        .field("policy");
    for (value, expected) in table {
        let result = normalize_policy(&value, &path);
        match expected {
            None => assert_eq!(result, Ok(PolicyDocument::default())),
            Some(code) => {
                let errors = result.unwrap_err();
                assert_eq!(
                    (errors.len(), errors[0].field.as_str(), errors[0].code),
                    (1, "candidates[0].policy", code),
                    "{value}"
                );
            }
        }
    }
}

#[test]
fn every_error_at_once_with_composable_paths() {
    let document = json!({
        "version": 2,
        "transient": {"retry": {"enabled": "yes", "max_retries": 0, "initial_interval_ms": 1.5},
                      "reset_wait": {"max_wait_s": -1},
                      "on_exhausted": "later", "extra": true},
        "hard": []
    });
    let expected = [
        ("transient.extra", ErrorCode::UnknownField),
        ("transient.retry.enabled", ErrorCode::Type),
        ("transient.retry.max_retries", ErrorCode::Range),
        ("transient.retry.initial_interval_ms", ErrorCode::Type),
        ("transient.reset_wait.enabled", ErrorCode::Required),
        ("transient.reset_wait.max_wait_s", ErrorCode::Range),
        ("transient.on_exhausted", ErrorCode::Enum),
        ("hard", ErrorCode::Type),
    ];
    assert_eq!(errors_of(&document), pairs(&expected));

    let in_profile = FieldPath::root()
        .field("candidates")
        .index(1)
        .field("policy");
    let fields: Vec<String> = normalize_policy(&document, &in_profile)
        .unwrap_err()
        .into_iter()
        .map(|error| error.field)
        .collect();
    let prefixed: Vec<String> = expected
        .iter()
        .map(|(field, _)| format!("candidates[1].policy.{field}"))
        .collect();
    assert_eq!(fields, prefixed);
}

#[test]
fn field_error_json_shape() {
    let mut document = defaults();
    document["hard"]["retry"]["max_retries"] = json!(11);
    let path = FieldPath::root()
        .field("candidates")
        .index(1)
        .field("policy");
    let errors = normalize_policy(&document, &path).unwrap_err();
    assert_eq!(
        serde_json::to_value(&errors).unwrap(),
        json!([{"field": "candidates[1].policy.hard.retry.max_retries", "code": "range", "message": "must be between 1 and 10"}])
    );
    let back: Vec<FieldError> =
        serde_json::from_value(serde_json::to_value(&errors).unwrap()).unwrap();
    assert_eq!(back, errors);
}

#[test]
fn valid_documents_round_trip() {
    let document = json!({"version": 2,
        "transient": {"retry": {"enabled": false, "max_retries": 10, "initial_interval_ms": 600000},
                      "reset_wait": {"enabled": false, "max_wait_s": 604800}, "on_exhausted": "stop"},
        "hard": {"retry": {"enabled": true, "max_retries": 1, "initial_interval_ms": 100},
                 "reset_wait": {"enabled": true, "max_wait_s": 1}, "on_exhausted": "skip"}});
    let normalized = normalize_policy(&document, &FieldPath::root()).unwrap();
    assert_eq!(serde_json::to_value(normalized).unwrap(), document);
    assert_eq!(
        serde_json::from_value::<PolicyDocument>(document).unwrap(),
        normalized
    );
}

#[test]
fn jitter_is_optional_written_only_when_set() {
    // A document stored before jitter existed reads as no jitter.
    let stored = defaults();
    assert!(stored["transient"]["retry"].get("jitter_pct").is_none());
    let read = normalize_policy(&stored, &FieldPath::root()).unwrap();
    assert_eq!(read.transient.retry.jitter_pct, 0);

    let mut document = stored.clone();
    document["transient"]["retry"]["jitter_pct"] = json!(50);
    document["hard"]["retry"]["jitter_pct"] = json!(0);
    let read = normalize_policy(&document, &FieldPath::root()).unwrap();
    assert_eq!(
        (read.transient.retry.jitter_pct, read.hard.retry.jitter_pct),
        (50, 0)
    );
    // Written when set, left out at 0: the default document keeps its SPEC 3 shape.
    let written = serde_json::to_value(read).unwrap();
    assert_eq!(written["transient"]["retry"]["jitter_pct"], json!(50));
    assert!(written["hard"]["retry"].get("jitter_pct").is_none());
    assert_eq!(
        normalize_policy(&written, &FieldPath::root()).unwrap(),
        read
    );
}
