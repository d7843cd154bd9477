//! The one entry point for a candidate's policy as it arrives: version 2, version 1, or none.

use serde_json::Value;

use crate::document::PolicyDocument;
use crate::errors::{ErrorCode, FieldError};
use crate::legacy::normalize_legacy;
use crate::path::FieldPath;
use crate::read;
use crate::validate::validate_document;

/// Normalizes a candidate's policy to a version-2 document, or returns EVERY error.
///
/// - `null` (pass it for an absent policy too): the SPEC 3 defaults;
/// - an object with a `version` field: a version-2 document, validated
///   ([`validate_document`]); any version but 2 is a `version` error;
/// - an object without `version`: a version-1 rule map (SPEC 3.1, [`normalize_legacy`]);
/// - anything else: a `type` error.
///
/// ```
/// use policy::{normalize_policy, FieldPath, PolicyDocument};
/// use serde_json::json;
/// let root = FieldPath::root();
/// assert_eq!(normalize_policy(&json!(null), &root).unwrap(), PolicyDocument::default());
/// let legacy = normalize_policy(&json!({"default": "stop"}), &root).unwrap();
/// assert!(!legacy.transient.retry.enabled);
/// let errors = normalize_policy(&json!({"version": 3}), &root.field("policy")).unwrap_err();
/// assert_eq!((errors[0].field.as_str(), errors[0].code.as_str()), ("policy.version", "version"));
/// ```
pub fn normalize_policy(
    value: &Value,
    path: &FieldPath,
) -> Result<PolicyDocument, Vec<FieldError>> {
    match value {
        Value::Null => Ok(PolicyDocument::default()),
        Value::Object(map) if map.contains_key("version") => validate_document(value, path),
        Value::Object(_) => normalize_legacy(value, path),
        other => Err(vec![FieldError::new(
            path,
            ErrorCode::Type,
            format!(
                "must be a policy object (version 2, or a version-1 rule map) or null, not {}",
                read::describe(other)
            ),
        )]),
    }
}
