//! Dynamic profiles as they arrive from a form or the API (SPEC 6): the shape
//! checks that need no database, with every error at once. The server adds
//! the checks that do (a unique name, providers and candidate ids that exist).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::document::{Bounds, PolicyDocument};
use crate::errors::{ErrorCode, FieldError};
use crate::escalation::{normalize_escalation, EscalationSettings};
use crate::normalize::normalize_policy;
use crate::path::FieldPath;
use crate::read;

/// Bounds of a candidate's `max_tokens`: 1..=1000000.
///
/// ```
/// assert_eq!(policy::MAX_TOKENS_BOUNDS.message(), "must be between 1 and 1000000");
/// ```
pub const MAX_TOKENS_BOUNDS: Bounds = Bounds {
    min: 1,
    max: 1_000_000,
};

/// The longest profile or provider name, in characters.
pub const NAME_MAX_CHARS: usize = 100;

/// The longest model name, in characters.
pub const MODEL_MAX_CHARS: usize = 200;

/// The longest id a client may send, in characters.
const ID_MAX_CHARS: usize = 100;

/// A profile after the shape checks: a name, an optional revision (required on
/// update) and candidates in the user's order, each with a version-2 policy.
///
/// ```
/// use serde_json::json;
/// let draft = policy::normalize_profile(&json!({
///     "name": "coding",
///     "candidates": [{"provider_id": "p1", "model": "claude-sonnet", "enabled": true, "max_tokens": 4096,
///                     "policy": {"default": "try_next"}}],
/// }), false).unwrap();
/// assert_eq!(draft.candidates[0].policy.transient.on_exhausted, policy::OnExhausted::Skip);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileDraft {
    /// The profile's name, trimmed.
    pub name: String,
    /// The revision the client last saw; `None` when creating.
    pub revision: Option<u64>,
    /// The candidates, in the order the user gave them.
    pub candidates: Vec<CandidateDraft>,
}

/// One candidate of a [`ProfileDraft`].
///
/// ```
/// let candidate = policy::CandidateDraft {
///     id: None,
///     provider_id: "p1".into(),
///     model: "gpt-4o".into(),
///     enabled: true,
///     max_tokens: 4096,
///     escalation: Default::default(),
///     policy: Default::default(),
/// };
/// assert!(candidate.enabled);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateDraft {
    /// The candidate's id when it already exists; `None` for a new one.
    pub id: Option<String>,
    /// The provider it dispatches to.
    pub provider_id: String,
    /// The model name, as the provider knows it.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// The token budget of one answer, 1..=1000000.
    pub max_tokens: u32,
    /// Token escalation after a `max_tokens` stop.
    pub escalation: EscalationSettings,
    /// The recovery policy, normalized to version 2.
    pub policy: PolicyDocument,
}

/// Checks a profile's shape and normalizes each candidate's policy (version 1,
/// version 2 or absent) and escalation. With `revision_required`, a missing
/// `revision` is an error (updates must carry the revision they were made from).
///
/// Errors are addressed like `candidates[1].policy.hard.retry.max_retries`.
///
/// ```
/// use serde_json::json;
/// let errors = policy::normalize_profile(&json!({"name": "", "candidates": []}), true).unwrap_err();
/// let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
/// assert_eq!(fields, ["name", "revision", "candidates"]);
/// ```
pub fn normalize_profile(
    value: &Value,
    revision_required: bool,
) -> Result<ProfileDraft, Vec<FieldError>> {
    let root = FieldPath::root();
    let mut errors = Vec::new();
    let Some(map) = read::object(
        value,
        &root,
        &["name", "revision", "candidates"],
        &mut errors,
    ) else {
        return Err(errors);
    };
    let name = read::required(map, "name", &root, &mut errors)
        .and_then(|name| read::text(name, &root.field("name"), NAME_MAX_CHARS, &mut errors));
    let revision = match map.get("revision") {
        None | Some(Value::Null) if revision_required => {
            errors.push(FieldError::new(
                &root.field("revision"),
                ErrorCode::Required,
                "is required: send the revision you last read",
            ));
            None
        }
        None | Some(Value::Null) => None,
        Some(revision) => read::bounded(
            revision,
            &root.field("revision"),
            Bounds {
                min: 1,
                max: i64::MAX as u64,
            },
            &mut errors,
        ),
    };
    let candidates = read::required(map, "candidates", &root, &mut errors)
        .and_then(|candidates| read_candidates(candidates, &root.field("candidates"), &mut errors));
    match (name, candidates) {
        (Some(name), Some(candidates)) if errors.is_empty() => Ok(ProfileDraft {
            name,
            revision,
            candidates,
        }),
        _ => Err(errors),
    }
}

fn read_candidates(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<Vec<CandidateDraft>> {
    let Value::Array(items) = value else {
        errors.push(FieldError::new(
            path,
            ErrorCode::Type,
            format!("must be an array, not {}", read::describe(value)),
        ));
        return None;
    };
    if items.is_empty() {
        errors.push(FieldError::new(
            path,
            ErrorCode::Required,
            "needs at least one candidate",
        ));
        return None;
    }
    let before = errors.len();
    let candidates: Vec<Option<CandidateDraft>> = items
        .iter()
        .enumerate()
        .map(|(index, item)| read_candidate(item, &path.index(index), errors))
        .collect();
    // Ids the client sends must be distinct.
    for (index, candidate) in candidates.iter().enumerate() {
        let Some(id) = candidate.as_ref().and_then(|c| c.id.as_deref()) else {
            continue;
        };
        let first = candidates
            .iter()
            .position(|other| other.as_ref().and_then(|o| o.id.as_deref()) == Some(id));
        if first != Some(index) {
            errors.push(FieldError::new(
                &path.index(index).field("id"),
                ErrorCode::Unique,
                format!("repeats the id of candidate {}", first.unwrap_or(0) + 1),
            ));
        }
    }
    if errors.len() > before {
        return None;
    }
    candidates.into_iter().collect()
}

const CANDIDATE_FIELDS: &[&str] = &[
    "id",
    "provider_id",
    "model",
    "enabled",
    "max_tokens",
    "escalation",
    "policy",
];

fn read_candidate(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<CandidateDraft> {
    let before = errors.len();
    let map = read::object(value, path, CANDIDATE_FIELDS, errors)?;
    let id = optional(map, "id")
        .and_then(|id| read::text(id, &path.field("id"), ID_MAX_CHARS, errors).map(Some))
        .unwrap_or(None);
    let provider_id = read::required(map, "provider_id", path, errors)
        .and_then(|id| read::text(id, &path.field("provider_id"), ID_MAX_CHARS, errors));
    let model = read::required(map, "model", path, errors)
        .and_then(|model| read::text(model, &path.field("model"), MODEL_MAX_CHARS, errors));
    let enabled = read::required(map, "enabled", path, errors)
        .and_then(|enabled| read::boolean(enabled, &path.field("enabled"), errors));
    let max_tokens = read::required(map, "max_tokens", path, errors)
        .and_then(|max_tokens| {
            read::bounded(
                max_tokens,
                &path.field("max_tokens"),
                MAX_TOKENS_BOUNDS,
                errors,
            )
        })
        .and_then(|max_tokens| u32::try_from(max_tokens).ok());
    let escalation = collect(
        normalize_escalation(
            map.get("escalation").unwrap_or(&Value::Null),
            &path.field("escalation"),
        ),
        errors,
    );
    let policy = collect(
        normalize_policy(
            map.get("policy").unwrap_or(&Value::Null),
            &path.field("policy"),
        ),
        errors,
    );
    if errors.len() > before {
        return None;
    }
    Some(CandidateDraft {
        id,
        provider_id: provider_id?,
        model: model?,
        enabled: enabled?,
        max_tokens: max_tokens?,
        escalation: escalation?,
        policy: policy?,
    })
}

/// A field that may be absent or `null`.
fn optional<'a>(map: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    map.get(name).filter(|value| !value.is_null())
}

fn collect<T>(result: Result<T, Vec<FieldError>>, errors: &mut Vec<FieldError>) -> Option<T> {
    result.map_err(|found| errors.extend(found)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn candidate() -> Value {
        json!({"provider_id": "p1", "model": "m", "enabled": true, "max_tokens": 1000})
    }

    fn errors_of(value: Value) -> Vec<(String, &'static str)> {
        normalize_profile(&value, false)
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect()
    }

    #[test]
    fn absent_policy_and_escalation_take_the_defaults() {
        let draft =
            normalize_profile(&json!({"name": " a ", "candidates": [candidate()]}), false).unwrap();
        assert_eq!(draft.name, "a");
        assert_eq!(draft.revision, None);
        assert_eq!(draft.candidates[0].policy, PolicyDocument::default());
        assert_eq!(
            draft.candidates[0].escalation,
            EscalationSettings::default()
        );
    }

    #[test]
    fn every_error_with_candidate_paths() {
        let mut second = candidate();
        second["max_tokens"] = json!(1_000_001);
        second["policy"] = json!({"version": 2});
        second["colour"] = json!("red");
        let mut third = candidate();
        third["model"] = json!("  ");
        third["enabled"] = json!("yes");
        assert_eq!(
            errors_of(json!({"name": 7, "candidates": [candidate(), second, third]})),
            [
                ("name".to_owned(), "type"),
                ("candidates[1].colour".to_owned(), "unknown_field"),
                ("candidates[1].max_tokens".to_owned(), "range"),
                ("candidates[1].policy.transient".to_owned(), "required"),
                ("candidates[1].policy.hard".to_owned(), "required"),
                ("candidates[2].model".to_owned(), "required"),
                ("candidates[2].enabled".to_owned(), "type"),
            ]
        );
    }

    #[test]
    fn max_tokens_boundaries() {
        for (max_tokens, ok) in [
            (json!(0), false),
            (json!(1), true),
            (json!(1_000_000), true),
            (json!(1_000_001), false),
            (json!(-1), false),
            (json!(1.5), false),
            (json!("10"), false),
        ] {
            let mut one = candidate();
            one["max_tokens"] = max_tokens.clone();
            let result = normalize_profile(&json!({"name": "n", "candidates": [one]}), false);
            assert_eq!(result.is_ok(), ok, "max_tokens {max_tokens}");
        }
    }

    #[test]
    fn repeated_ids_and_missing_fields() {
        let mut first = candidate();
        first["id"] = json!("c1");
        let mut second = candidate();
        second["id"] = json!("c1");
        assert_eq!(
            errors_of(json!({"name": "n", "candidates": [first, second, {}]})),
            [
                ("candidates[2].provider_id".to_owned(), "required"),
                ("candidates[2].model".to_owned(), "required"),
                ("candidates[2].enabled".to_owned(), "required"),
                ("candidates[2].max_tokens".to_owned(), "required"),
                ("candidates[1].id".to_owned(), "unique"),
            ]
        );
        assert_eq!(
            errors_of(json!({"candidates": "none", "extra": 1})),
            [
                ("extra".to_owned(), "unknown_field"),
                ("name".to_owned(), "required"),
                ("candidates".to_owned(), "type"),
            ]
        );
    }

    #[test]
    fn revision_is_required_on_update_and_positive() {
        let body = json!({"name": "n", "candidates": [candidate()]});
        assert!(normalize_profile(&body, true).is_err());
        let mut with_revision = body.clone();
        with_revision["revision"] = json!(3);
        assert_eq!(
            normalize_profile(&with_revision, true).unwrap().revision,
            Some(3)
        );
        with_revision["revision"] = json!(0);
        assert_eq!(
            normalize_profile(&with_revision, true).unwrap_err()[0].code,
            ErrorCode::Range
        );
    }

    #[test]
    fn a_conflicting_legacy_policy_is_refused_with_its_path() {
        let mut one = candidate();
        one["policy"] = json!({"rate_limited": "retry_same", "overloaded": "try_next"});
        let errors =
            normalize_profile(&json!({"name": "n", "candidates": [one]}), false).unwrap_err();
        assert_eq!(errors[0].field, "candidates[0].policy");
        assert_eq!(errors[0].code, ErrorCode::Conflict);
        assert!(
            errors[0].message.contains("rate_limited") && errors[0].message.contains("overloaded")
        );
    }
}
