//! Boundary tables for every bounded number (STYLE rule 11): each field against the same
//! column of JSON values, parsed from text so that 2^70 arrives as JSON would carry it.

use policy::{ErrorCode, FieldPath, PolicyDocument, normalize_escalation, normalize_policy};
use serde_json::Value;

/// The columns: JSON texts tried in every bounded field.
#[rustfmt::skip]
const VALUES: [&str; 21] = [
    "0",
    "1",
    "10",
    "11",
    "99",
    "100",
    "600000",
    "600001",
    "604800",
    "604801",
    "-1",
    "1.5",
    "\"10\"",
    "1180591620717411303424",  // 2^70
    "-1180591620717411303424", // -2^70
    "18446744073709551615",    // u64::MAX
    "18446744073709551616",    // 2^64
    "2.0",
    "1e2",
    "null",
    "true",
];

/// An outcome in the table: accepted, a `range` error, or a `type` error.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Outcome {
    Ok,
    Range,
    Type,
}
use Outcome::{Ok as O, Range as R, Type as T};

/// One row per field: its path, its bounds' message, and the outcome for each column.
type Row = (&'static str, &'static str, [Outcome; 21]);

//  columns:             0  1  10 11 99 100 6e5 6e5+1 604800 604801 -1 1.5 "10" 2^70 -2^70 u64max 2^64 2.0 1e2 null true
#[rustfmt::skip]
const POLICY_ROWS: [Row; 8] = [
    ("transient.retry.max_retries", "must be between 1 and 10", [R, O, O, R, R, R, R, R, R, R, R, T, T, R, R, R, R, O, R, T, T]),
    ("transient.retry.initial_interval_ms", "must be between 100 and 600000", [R, R, R, R, R, O, O, R, R, R, R, T, T, R, R, R, R, R, O, T, T]),
    // Optional (absent is 0), but bounded and typed like the others when present.
    ("transient.retry.jitter_pct", "must be between 0 and 50", [O, O, O, O, R, R, R, R, R, R, R, T, T, R, R, R, R, O, R, T, T]),
    ("transient.reset_wait.max_wait_s", "must be between 1 and 604800", [R, O, O, O, O, O, O, O, O, R, R, T, T, R, R, R, R, O, O, T, T]),
    // The hard section's parts are disabled by default: bounds apply all the same.
    ("hard.retry.max_retries", "must be between 1 and 10", [R, O, O, R, R, R, R, R, R, R, R, T, T, R, R, R, R, O, R, T, T]),
    ("hard.retry.initial_interval_ms", "must be between 100 and 600000", [R, R, R, R, R, O, O, R, R, R, R, T, T, R, R, R, R, R, O, T, T]),
    ("hard.retry.jitter_pct", "must be between 0 and 50", [O, O, O, O, R, R, R, R, R, R, R, T, T, R, R, R, R, O, R, T, T]),
    ("hard.reset_wait.max_wait_s", "must be between 1 and 604800", [R, O, O, O, O, O, O, O, O, R, R, T, T, R, R, R, R, O, O, T, T]),
];

#[rustfmt::skip]
const ESCALATION_ROWS: [Row; 2] = [
    ("max_escalations", "must be between 0 and 3", [O, O, R, R, R, R, R, R, R, R, R, T, T, R, R, R, R, O, R, T, T]),
    ("ceiling_tokens", "must be between 1 and 1000000", [R, O, O, O, O, O, O, O, O, O, R, T, T, R, R, R, R, O, O, T, T]),
];

/// Sets the field at a dotted path of a JSON object, adding it to its parent
/// object when absent (an optional field the defaults leave out).
fn set(document: &mut Value, dotted: &str, value: Value) {
    let (parent, name) = dotted.rsplit_once('.').unwrap_or(("", dotted));
    let pointer = if parent.is_empty() {
        String::new()
    } else {
        format!("/{}", parent.replace('.', "/"))
    };
    document
        .pointer_mut(&pointer)
        .and_then(Value::as_object_mut)
        .unwrap_or_else(|| panic!("no object {parent}"))
        .insert(name.to_owned(), value);
}

/// Runs one table through `validate` (a document at `prefix`) and checks each cell.
fn check(
    rows: &[Row],
    defaults: &Value,
    prefix: &FieldPath,
    validate: impl Fn(&Value, &FieldPath) -> Vec<(String, ErrorCode, String)>,
) {
    for (field, range_message, outcomes) in rows {
        for (text, expected) in VALUES.iter().zip(outcomes) {
            let mut document = defaults.clone();
            set(&mut document, field, serde_json::from_str(text).unwrap());
            let errors = validate(&document, prefix);
            let full_field = if prefix.is_root() {
                field.to_string()
            } else {
                format!("{prefix}.{field}")
            };
            let context = format!("{full_field} = {text}");
            match expected {
                O => assert_eq!(errors, vec![], "{context}"),
                R => assert_eq!(
                    errors,
                    vec![(
                        full_field.clone(),
                        ErrorCode::Range,
                        range_message.to_string()
                    )],
                    "{context}"
                ),
                T => {
                    assert_eq!(errors.len(), 1, "{context}: {errors:?}");
                    assert_eq!(
                        (errors[0].0.as_str(), errors[0].1),
                        (full_field.as_str(), ErrorCode::Type),
                        "{context}"
                    );
                    assert!(
                        errors[0].2.starts_with("must be an integer"),
                        "{context}: {}",
                        errors[0].2
                    );
                }
            }
        }
    }
}

fn flatten<T>(result: Result<T, Vec<policy::FieldError>>) -> Vec<(String, ErrorCode, String)> {
    result
        .err()
        .unwrap_or_default()
        .into_iter()
        .map(|error| (error.field, error.code, error.message))
        .collect()
}

#[test]
fn policy_numbers_bare_and_inside_a_profile() {
    let defaults = serde_json::to_value(PolicyDocument::default()).unwrap();
    let in_profile = FieldPath::root()
        .field("candidates")
        .index(1)
        .field("policy");
    for prefix in [FieldPath::root(), in_profile] {
        check(&POLICY_ROWS, &defaults, &prefix, |document, path| {
            flatten(normalize_policy(document, path))
        });
    }
}

#[test]
fn escalation_numbers_bare_and_inside_a_profile() {
    let defaults = serde_json::json!({"max_escalations": 1, "ceiling_tokens": 32768});
    let in_profile = FieldPath::root()
        .field("candidates")
        .index(0)
        .field("escalation");
    for prefix in [FieldPath::root(), in_profile] {
        check(&ESCALATION_ROWS, &defaults, &prefix, |settings, path| {
            flatten(normalize_escalation(settings, path))
        });
    }
}

#[test]
fn typed_documents_are_checked_by_the_same_bounds() {
    let mut document = PolicyDocument::default();
    document.transient.retry.initial_interval_ms = 99;
    document.hard.reset_wait.max_wait_s = 604_801;
    let errors: Vec<(String, ErrorCode)> = document
        .check_bounds(&FieldPath::root())
        .into_iter()
        .map(|error| (error.field, error.code))
        .collect();
    assert_eq!(
        errors,
        [
            (
                "transient.retry.initial_interval_ms".to_owned(),
                ErrorCode::Range
            ),
            ("hard.reset_wait.max_wait_s".to_owned(), ErrorCode::Range),
        ]
    );
}
