//! Version-1 rule maps (SPEC 3.1): resolution, the action table, default-key handling,
//! conflicts naming their codes, and bad keys or actions with field paths.

use policy::{ErrorCode, FieldPath, PolicyDocument, normalize_legacy, normalize_policy};
use serde_json::{Value, json};

/// What a class normalizes to, written out from the SPEC 3.1 table (not from the code).
#[derive(Debug, Clone, Copy)]
enum Row {
    Defaults,
    RetrySame,
    TryNext,
    Stop,
}

fn transient(row: Row) -> Value {
    section(
        row,
        json!({"enabled": true, "max_retries": 2, "initial_interval_ms": 500}),
        json!({"enabled": true, "max_wait_s": 60}),
    )
}

fn hard(row: Row) -> Value {
    section(
        row,
        json!({"enabled": false, "max_retries": 2, "initial_interval_ms": 500}),
        json!({"enabled": false, "max_wait_s": 3600}),
    )
}

fn section(row: Row, mut retry: Value, mut reset_wait: Value) -> Value {
    let on_exhausted = match row {
        Row::Defaults => {
            return json!({"retry": retry, "reset_wait": reset_wait, "on_exhausted": "skip"});
        }
        Row::RetrySame => "stop",
        Row::TryNext => "skip",
        Row::Stop => "stop",
    };
    retry["enabled"] = json!(matches!(row, Row::RetrySame));
    reset_wait["enabled"] = json!(false);
    json!({"retry": retry, "reset_wait": reset_wait, "on_exhausted": on_exhausted})
}

fn document(transient_row: Row, hard_row: Row) -> Value {
    json!({"version": 2, "transient": transient(transient_row), "hard": hard(hard_row)})
}

const TRANSIENT_CODES: [&str; 5] = [
    "overloaded",
    "rate_limited",
    "server_error",
    "network",
    "timeout",
];
const HARD_CODES: [&str; 7] = [
    "usage_limited",
    "quota_exhausted",
    "insufficient_credits",
    "auth_failed",
    "credentials_missing",
    "model_unavailable",
    "provider_misconfigured",
];

fn every(codes: &[&str], action: &str) -> serde_json::Map<String, Value> {
    codes
        .iter()
        .map(|code| (code.to_string(), json!(action)))
        .collect()
}

fn merge(parts: &[serde_json::Map<String, Value>]) -> Value {
    Value::Object(parts.iter().flat_map(|part| part.clone()).collect())
}

#[test]
fn maps_that_normalize() {
    use Row::*;
    let table: Vec<(&str, Value, Value)> = vec![
        (
            "empty map: both classes keep their defaults",
            json!({}),
            document(Defaults, Defaults),
        ),
        (
            "default alone applies to both classes",
            json!({"default": "retry_same"}),
            document(RetrySame, RetrySame),
        ),
        (
            "default try_next",
            json!({"default": "try_next"}),
            document(TryNext, TryNext),
        ),
        (
            "default stop",
            json!({"default": "stop"}),
            document(Stop, Stop),
        ),
        (
            "every transient code, no default: hard keeps defaults",
            merge(&[every(&TRANSIENT_CODES, "try_next")]),
            document(TryNext, Defaults),
        ),
        (
            "every hard code, no default: transient keeps defaults",
            merge(&[every(&HARD_CODES, "retry_same")]),
            document(Defaults, RetrySame),
        ),
        (
            "a code equal to default agrees",
            json!({"default": "try_next", "rate_limited": "try_next"}),
            document(TryNext, TryNext),
        ),
        (
            "every code of a class overrides default",
            merge(&[
                every(&HARD_CODES, "stop"),
                every(&["default"], "retry_same"),
            ]),
            document(RetrySame, Stop),
        ),
        (
            "both classes explicit, each its own action",
            merge(&[
                every(&TRANSIENT_CODES, "retry_same"),
                every(&HARD_CODES, "try_next"),
            ]),
            document(RetrySame, TryNext),
        ),
    ];
    for (name, map, expected) in table {
        let normalized = normalize_policy(&map, &FieldPath::root())
            .unwrap_or_else(|errors| panic!("{name}: {errors:?}"));
        assert_eq!(
            serde_json::to_value(normalized).unwrap(),
            expected,
            "{name}"
        );
    }
}

/// An expected error: (field, code, message).
type Expected = (&'static str, ErrorCode, String);

#[test]
fn maps_that_fail() {
    let others = "overloaded, server_error, network, timeout";
    // (name, map, expected errors as (field, code, message)) at the root.
    let table: Vec<(&str, Value, Vec<Expected>)> = vec![
        (
            "one code without default leaves the others resolving to nothing",
            json!({"rate_limited": "retry_same"}),
            vec![("", ErrorCode::Conflict, format!(
                "transient codes resolve to different actions: rate_limited resolves to retry_same; {others} resolve to nothing; \
                 give every transient code the same action (or use `default`)"
            ))],
        ),
        (
            "a code differs from default",
            json!({"default": "try_next", "rate_limited": "retry_same"}),
            vec![("", ErrorCode::Conflict, format!(
                "transient codes resolve to different actions: rate_limited resolves to retry_same; {others} resolve to try_next; \
                 give every transient code the same action (or use `default`)"
            ))],
        ),
        (
            "both classes conflict: two errors, transient first",
            json!({"timeout": "stop", "auth_failed": "try_next", "default": "retry_same"}),
            vec![
                ("", ErrorCode::Conflict, "transient codes resolve to different actions: overloaded, rate_limited, server_error, network resolve to retry_same; timeout resolves to stop; give every transient code the same action (or use `default`)".to_owned()),
                ("", ErrorCode::Conflict, "hard codes resolve to different actions: usage_limited, quota_exhausted, insufficient_credits, credentials_missing, model_unavailable, provider_misconfigured resolve to retry_same; auth_failed resolves to try_next; give every hard code the same action (or use `default`)".to_owned()),
            ],
        ),
        (
            "an outside code is not a key",
            json!({"invalid_request": "stop"}),
            vec![("invalid_request", ErrorCode::UnknownField, "`invalid_request` is an outside code: outside codes are never recovered, so a rule cannot name them".to_owned())],
        ),
        (
            "unknown is an outside code too",
            json!({"default": "stop", "unknown": "retry_same"}),
            vec![("unknown", ErrorCode::UnknownField, "`unknown` is an outside code: outside codes are never recovered, so a rule cannot name them".to_owned())],
        ),
        (
            "a key that is no code",
            json!({"default": "stop", "teapot": "stop"}),
            vec![("teapot", ErrorCode::UnknownField, "is not a semantic code of a transient or hard class, nor `default`".to_owned())],
        ),
        (
            "codes are case-sensitive",
            json!({"default": "stop", "Rate_Limited": "stop"}),
            vec![("Rate_Limited", ErrorCode::UnknownField, "is not a semantic code of a transient or hard class, nor `default`".to_owned())],
        ),
        (
            "a version-2 document without its version",
            json!({"transient": {}, "hard": {}}),
            vec![
                ("hard", ErrorCode::UnknownField, "is not a semantic code: a version-2 document needs `\"version\": 2`".to_owned()),
                ("transient", ErrorCode::UnknownField, "is not a semantic code: a version-2 document needs `\"version\": 2`".to_owned()),
            ],
        ),
        (
            "a bad action: its class is unresolved, so no conflict is claimed",
            json!({"rate_limited": "retry"}),
            vec![("rate_limited", ErrorCode::Enum, "must be one of retry_same, try_next, stop".to_owned())],
        ),
        (
            "a bad default: nothing resolves, only the default is reported",
            json!({"default": 3, "auth_failed": "stop"}),
            vec![("default", ErrorCode::Type, "must be one of retry_same, try_next, stop, not a number".to_owned())],
        ),
        (
            "a bad action in one class does not hide the other class's result",
            json!({"default": "try_next", "auth_failed": "banana", "overloaded": null}),
            vec![
                ("auth_failed", ErrorCode::Enum, "must be one of retry_same, try_next, stop".to_owned()),
                ("overloaded", ErrorCode::Type, "must be one of retry_same, try_next, stop, not null".to_owned()),
            ],
        ),
        (
            "every bad key and action at once",
            json!({"default": "later", "teapot": 1, "cancelled": "stop", "network": ["stop"]}),
            vec![
                ("cancelled", ErrorCode::UnknownField, "`cancelled` is an outside code: outside codes are never recovered, so a rule cannot name them".to_owned()),
                ("default", ErrorCode::Enum, "must be one of retry_same, try_next, stop".to_owned()),
                ("network", ErrorCode::Type, "must be one of retry_same, try_next, stop, not an array".to_owned()),
                ("teapot", ErrorCode::UnknownField, "is not a semantic code of a transient or hard class, nor `default`".to_owned()),
            ],
        ),
    ];
    for (name, map, expected) in table {
        let errors = normalize_policy(&map, &FieldPath::root()).unwrap_err();
        let actual: Vec<(&str, ErrorCode, String)> = errors
            .iter()
            .map(|error| (error.field.as_str(), error.code, error.message.clone()))
            .collect();
        assert_eq!(actual, expected, "{name}");
    }
}

#[test]
fn legacy_errors_compose_under_a_profile_path() {
    let path = FieldPath::root()
        .field("candidates")
        .index(2)
        .field("policy");
    let errors =
        normalize_legacy(&json!({"teapot": "stop", "rate_limited": "stop"}), &path).unwrap_err();
    let fields: Vec<(&str, ErrorCode)> = errors
        .iter()
        .map(|error| (error.field.as_str(), error.code))
        .collect();
    assert_eq!(
        fields,
        [
            ("candidates[2].policy.teapot", ErrorCode::UnknownField),
            ("candidates[2].policy", ErrorCode::Conflict)
        ]
    );
    assert_eq!(
        normalize_legacy(&json!([]), &path).unwrap_err()[0].code,
        ErrorCode::Type
    );
}

#[test]
fn normalized_maps_are_complete_version_2_documents() {
    let normalized =
        normalize_policy(&json!({"default": "retry_same"}), &FieldPath::root()).unwrap();
    let stored = serde_json::to_value(normalized).unwrap();
    assert_eq!(stored["version"], 2);
    assert_eq!(
        serde_json::from_value::<PolicyDocument>(stored).unwrap(),
        normalized
    );
}
