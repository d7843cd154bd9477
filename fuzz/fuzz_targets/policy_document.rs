//! Policy documents from arbitrary JSON: version 2 (`validate_document`), version 1
//! (`normalize_legacy`), and the one entry point that picks between them
//! (`normalize_policy`), plus a candidate's `escalation`. None of them panics, and what
//! the crate promises holds:
//!
//! - `normalize_policy` takes a `version` object to `validate_document` and any other
//!   object to `normalize_legacy`, and gives the same answer every time;
//! - an error is never an empty list, and the errors at a nested path are the same
//!   errors, their fields under that path;
//! - a normalized document stores as a version-2 document that validates to itself
//!   (so normalizing twice changes nothing), deserializes to itself, has no bound
//!   errors, and schedules and evaluates without panicking or scheduling into the past;
//! - deserializing a `PolicyDocument` from the bytes succeeds exactly when validation does.

#![no_main]

use libfuzzer_sys::fuzz_target;
use policy::{
    Classification, Confidence, Decision, Effects, Episode, FieldError, FieldPath, PolicyDocument,
    RetryCounts, SectionClass, SemanticCode, describe_schedule, normalize_escalation,
    normalize_legacy, normalize_policy, schedule, validate_document,
};
use serde_json::Value;

/// Where a candidate's policy sits in a profile, as the API names it.
const NESTED: &str = "candidates[1].policy";

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let root = FieldPath::root();
    let normalized = normalize_policy(&value, &root);
    assert_eq!(normalize_policy(&value, &root), normalized, "deterministic");
    match &value {
        Value::Object(map) if map.contains_key("version") => {
            assert_eq!(validate_document(&value, &root), normalized);
        }
        Value::Object(_) => assert_eq!(normalize_legacy(&value, &root), normalized),
        _ => {}
    }
    let nested_path = root.field("candidates").index(1).field("policy");
    check_nested(&normalized, &normalize_policy(&value, &nested_path));

    // The typed deserializer is validation behind serde.
    let deserialized = serde_json::from_slice::<PolicyDocument>(data);
    assert_eq!(
        deserialized.is_ok(),
        validate_document(&value, &root).is_ok(),
        "{deserialized:?}"
    );

    match &normalized {
        Ok(document) => check_document(document, data),
        Err(errors) => check_errors(errors),
    }

    // A candidate's `escalation` is read by the same readers.
    match normalize_escalation(&value, &root) {
        Ok(settings) => {
            assert!(settings.check_bounds(&root).is_empty());
            let stored = serde_json::to_value(settings).expect("settings serialize");
            assert_eq!(normalize_escalation(&stored, &root), Ok(settings));
        }
        Err(errors) => check_errors(&errors),
    }
});

/// The same answer at a nested path: the same document, or the same errors under it.
fn check_nested(
    at_root: &Result<PolicyDocument, Vec<FieldError>>,
    nested: &Result<PolicyDocument, Vec<FieldError>>,
) {
    match (at_root, nested) {
        (Ok(root_document), Ok(nested_document)) => assert_eq!(root_document, nested_document),
        (Err(root_errors), Err(nested_errors)) => {
            assert_eq!(root_errors.len(), nested_errors.len());
            for (root_error, nested_error) in root_errors.iter().zip(nested_errors) {
                assert_eq!(root_error.code, nested_error.code);
                assert_eq!(root_error.message, nested_error.message);
                // An empty field is the document itself, or a key that is the empty
                // string (which renders the same at the root).
                let expected = format!("{NESTED}.{}", root_error.field);
                assert!(
                    nested_error.field == expected
                        || (root_error.field.is_empty() && nested_error.field == NESTED),
                    "{root_error:?} became {nested_error:?}"
                );
            }
        }
        _ => panic!("the path changed the outcome: {at_root:?} vs {nested:?}"),
    }
}

/// Every error list has an error, each with a message, and serializes to the API's shape.
fn check_errors(errors: &[FieldError]) {
    assert!(!errors.is_empty(), "an Err carries at least one error");
    for error in errors {
        assert!(!error.message.is_empty(), "{error:?}");
        let json = serde_json::to_value(error).expect("errors serialize");
        assert_eq!(
            serde_json::from_value::<FieldError>(json).ok().as_ref(),
            Some(error)
        );
    }
}

/// A normalized document is a valid version-2 document, stable under storing and reading.
fn check_document(document: &PolicyDocument, data: &[u8]) {
    let root = FieldPath::root();
    assert!(document.check_bounds(&root).is_empty(), "{document:?}");
    let stored = serde_json::to_value(document).expect("documents serialize");
    assert_eq!(validate_document(&stored, &root).as_ref(), Ok(document));
    assert_eq!(normalize_policy(&stored, &root).as_ref(), Ok(document));
    let text = serde_json::to_string(document).expect("documents serialize");
    assert_eq!(
        serde_json::from_str::<PolicyDocument>(&text).ok().as_ref(),
        Some(document)
    );

    for class in SectionClass::ALL {
        let section = document.section_of(class);
        let steps = schedule(section);
        let _ = steps.total_ms();
        let _ = describe_schedule(section, Some("the next candidate"));
        let _ = describe_schedule(section, None);
    }
    check_evaluation(document, data);
}

/// Unix milliseconds to evaluate at: the extremes and an ordinary day.
const NOWS_MS: [i64; 4] = [i64::MIN, 0, 1_796_004_000_000, i64::MAX];

/// Evaluation with this document never panics or schedules into the past, for every
/// code, at times and with hints picked by the input's length and last byte.
fn check_evaluation(document: &PolicyDocument, data: &[u8]) {
    let pick = usize::from(data.last().copied().unwrap_or(0)) + data.len();
    let now_ms = NOWS_MS[pick % NOWS_MS.len()];
    let reset_at_ms = match pick / 4 % 4 {
        0 => None,
        1 => Some(now_ms.saturating_add(30_000)),
        2 => Some(now_ms.saturating_sub(1)),
        _ => Some(i64::MAX),
    };
    let retries = u32::try_from(pick % 13).unwrap_or(0);
    let episode = Episode {
        retries: RetryCounts {
            transient: retries,
            hard: retries,
        },
        waited_for_reset: pick % 2 == 1,
    };
    for code in SemanticCode::ALL {
        for confidence in Confidence::ALL {
            let mut verdict = Classification::new(code, confidence);
            verdict.reset_at_ms = reset_at_ms;
            verdict.retry_after_ms = (pick % 3 == 0).then_some(u64::MAX);
            for has_next_candidate in [false, true] {
                let decision = policy::evaluate(
                    document,
                    &verdict,
                    &episode,
                    Effects::default(),
                    has_next_candidate,
                    now_ms,
                );
                match decision {
                    Decision::WaitForReset { until_ms } => {
                        assert!(
                            until_ms > now_ms && !episode.waited_for_reset,
                            "{decision:?}"
                        )
                    }
                    Decision::Retry { at_ms, .. } => assert!(at_ms >= now_ms, "{decision:?}"),
                    Decision::Skip => assert!(has_next_candidate, "{decision:?}"),
                    Decision::Stop { .. } | Decision::Hold { .. } => {}
                }
            }
        }
    }
}
