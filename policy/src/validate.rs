//! Validation of a version-2 policy document from JSON (SPEC 3).

use serde_json::Value;

use crate::document::{
    INITIAL_INTERVAL_MS_BOUNDS, JITTER_PCT_BOUNDS, MAX_RETRIES_BOUNDS, MAX_WAIT_S_BOUNDS,
    OnExhausted, POLICY_VERSION, PolicyDocument, PolicySection, ResetWaitSettings, RetrySettings,
};
use crate::errors::{ErrorCode, FieldError};
use crate::path::FieldPath;
use crate::read::{self, IntegerKind};

/// Validates a version-2 policy document and returns it, or EVERY error it has.
///
/// The document must be complete (a missing field is `required`; only
/// `retry.jitter_pct`, added later, may be left out and reads as 0), have no unknown
/// fields, and keep every number an integer within its bounds whether or not its part
/// is enabled. `path` is where the document sits; errors name fields under it.
///
/// ```
/// use policy::{validate_document, ErrorCode, FieldPath};
/// use serde_json::json;
/// let mut document = serde_json::to_value(policy::PolicyDocument::default()).unwrap();
/// document["transient"]["retry"]["max_retries"] = json!(11);
/// document["hard"]["reset_wait"]["max_wait_s"] = json!("60");
/// let path = FieldPath::root().field("candidates").index(1).field("policy");
/// let errors = validate_document(&document, &path).unwrap_err();
/// assert_eq!(errors.len(), 2);
/// assert_eq!(errors[0].field, "candidates[1].policy.transient.retry.max_retries");
/// assert_eq!((errors[0].code, errors[0].message.as_str()), (ErrorCode::Range, "must be between 1 and 10"));
/// assert_eq!(errors[1].field, "candidates[1].policy.hard.reset_wait.max_wait_s");
/// assert_eq!(errors[1].code, ErrorCode::Type);
/// ```
pub fn validate_document(
    value: &Value,
    path: &FieldPath,
) -> Result<PolicyDocument, Vec<FieldError>> {
    let mut errors = Vec::new();
    let document = read_document(value, path, &mut errors);
    match document {
        Some(document) if errors.is_empty() => Ok(document),
        _ => Err(errors),
    }
}

fn read_document(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<PolicyDocument> {
    let map = read::object(value, path, &["version", "transient", "hard"], errors)?;
    if let Some(version) = read::required(map, "version", path, errors) {
        check_version(version, &path.field("version"), errors);
    }
    let transient = read::required(map, "transient", path, errors)
        .and_then(|section| read_section(section, &path.field("transient"), errors));
    let hard = read::required(map, "hard", path, errors)
        .and_then(|section| read_section(section, &path.field("hard"), errors));
    Some(PolicyDocument {
        transient: transient?,
        hard: hard?,
    })
}

fn check_version(value: &Value, path: &FieldPath, errors: &mut Vec<FieldError>) {
    let unsupported = |shown: String| {
        FieldError::new(
            path,
            ErrorCode::Version,
            format!(
                "unsupported version {shown}: must be 2 (a version-1 rule map has no `version` field)"
            ),
        )
    };
    match read::integer_kind(value) {
        IntegerKind::Unsigned(POLICY_VERSION) => {}
        IntegerKind::Unsigned(_) | IntegerKind::OutOfRange => {
            errors.push(unsupported(value.to_string()))
        }
        IntegerKind::NotInteger(_) => errors.push(FieldError::new(
            path,
            ErrorCode::Type,
            format!("must be the integer 2, not {}", read::describe(value)),
        )),
    }
}

fn read_section(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<PolicySection> {
    let map = read::object(
        value,
        path,
        &["retry", "reset_wait", "on_exhausted"],
        errors,
    )?;
    let retry = read::required(map, "retry", path, errors)
        .and_then(|retry| read_retry(retry, &path.field("retry"), errors));
    let reset_wait = read::required(map, "reset_wait", path, errors)
        .and_then(|wait| read_reset_wait(wait, &path.field("reset_wait"), errors));
    let options = OnExhausted::ALL.map(|option| (option.as_str(), option));
    let on_exhausted = read::required(map, "on_exhausted", path, errors)
        .and_then(|outcome| read::one_of(outcome, &path.field("on_exhausted"), &options, errors));
    Some(PolicySection {
        retry: retry?,
        reset_wait: reset_wait?,
        on_exhausted: on_exhausted?,
    })
}

fn read_retry(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<RetrySettings> {
    let map = read::object(
        value,
        path,
        &[
            "enabled",
            "max_retries",
            "initial_interval_ms",
            "jitter_pct",
        ],
        errors,
    )?;
    let enabled = read::required(map, "enabled", path, errors)
        .and_then(|flag| read::boolean(flag, &path.field("enabled"), errors));
    let max_retries = read::required(map, "max_retries", path, errors).and_then(|number| {
        read::bounded(
            number,
            &path.field("max_retries"),
            MAX_RETRIES_BOUNDS,
            errors,
        )
    });
    let initial_interval_ms =
        read::required(map, "initial_interval_ms", path, errors).and_then(|number| {
            read::bounded(
                number,
                &path.field("initial_interval_ms"),
                INITIAL_INTERVAL_MS_BOUNDS,
                errors,
            )
        });
    // Optional: documents stored before jitter existed have none, and mean none.
    let jitter_pct = match map.get("jitter_pct") {
        None => Some(0),
        Some(number) => read::bounded(number, &path.field("jitter_pct"), JITTER_PCT_BOUNDS, errors),
    };
    Some(RetrySettings {
        enabled: enabled?,
        // Within 1..=10, so the conversion cannot fail.
        max_retries: u32::try_from(max_retries?).ok()?,
        initial_interval_ms: initial_interval_ms?,
        // Within 0..=50, so the conversion cannot fail.
        jitter_pct: u32::try_from(jitter_pct?).ok()?,
    })
}

fn read_reset_wait(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<ResetWaitSettings> {
    let map = read::object(value, path, &["enabled", "max_wait_s"], errors)?;
    let enabled = read::required(map, "enabled", path, errors)
        .and_then(|flag| read::boolean(flag, &path.field("enabled"), errors));
    let max_wait_s = read::required(map, "max_wait_s", path, errors).and_then(|number| {
        read::bounded(number, &path.field("max_wait_s"), MAX_WAIT_S_BOUNDS, errors)
    });
    Some(ResetWaitSettings {
        enabled: enabled?,
        max_wait_s: max_wait_s?,
    })
}
