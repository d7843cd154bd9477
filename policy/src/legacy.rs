//! Version-1 legacy rule maps, normalized to version 2 (SPEC 3.1).

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::codes::{Class, SemanticCode};
use crate::document::{OnExhausted, PolicyDocument, PolicySection};
use crate::errors::{ErrorCode, FieldError};
use crate::path::FieldPath;
use crate::read;

/// The key of a rule map that applies to every code without a key of its own.
///
/// ```
/// assert_eq!(policy::LEGACY_DEFAULT_KEY, "default");
/// ```
pub const LEGACY_DEFAULT_KEY: &str = "default";

/// An action of a version-1 rule map.
///
/// ```
/// use policy::{LegacyAction, OnExhausted, PolicySection};
/// let section = LegacyAction::RetrySame.section(PolicySection::hard_default());
/// assert!(section.retry.enabled && !section.reset_wait.enabled);
/// assert_eq!(section.on_exhausted, OnExhausted::Stop);
/// assert_eq!(serde_json::to_value(LegacyAction::TryNext).unwrap(), "try_next");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LegacyAction {
    /// Retry the same candidate with the class's default backoff, then stop.
    RetrySame,
    /// Move to the next candidate at once.
    TryNext,
    /// Stop at once.
    Stop,
}

impl LegacyAction {
    /// Every action, in SPEC order.
    ///
    /// ```
    /// assert_eq!(policy::LegacyAction::ALL.map(|action| action.as_str()), ["retry_same", "try_next", "stop"]);
    /// ```
    pub const ALL: [LegacyAction; 3] = [
        LegacyAction::RetrySame,
        LegacyAction::TryNext,
        LegacyAction::Stop,
    ];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::LegacyAction::RetrySame.as_str(), "retry_same");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RetrySame => "retry_same",
            Self::TryNext => "try_next",
            Self::Stop => "stop",
        }
    }

    /// The SPEC 3.1 table row applied to a class's `defaults`: the parts it disables
    /// keep their default numbers.
    ///
    /// ```
    /// use policy::{LegacyAction, OnExhausted, PolicySection};
    /// let section = LegacyAction::TryNext.section(PolicySection::transient_default());
    /// assert!(!section.retry.enabled && !section.reset_wait.enabled);
    /// assert_eq!(section.reset_wait.max_wait_s, 60);
    /// assert_eq!(section.on_exhausted, OnExhausted::Skip);
    /// ```
    pub fn section(self, defaults: PolicySection) -> PolicySection {
        let mut section = defaults;
        section.retry.enabled = self == Self::RetrySame;
        section.reset_wait.enabled = false;
        section.on_exhausted = if self == Self::TryNext {
            OnExhausted::Skip
        } else {
            OnExhausted::Stop
        };
        section
    }
}

impl fmt::Display for LegacyAction {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// Normalizes a version-1 rule map (an object without `version`) to a version-2
/// document, or returns EVERY error: unknown keys (including `outside` codes), bad
/// actions, and `conflict`s naming the codes involved.
///
/// ```
/// use policy::{normalize_legacy, Class, ErrorCode, FieldPath, OnExhausted};
/// use serde_json::json;
/// let document = normalize_legacy(&json!({"default": "try_next"}), &FieldPath::root()).unwrap();
/// assert!(!document.transient.retry.enabled);
/// assert_eq!(document.hard.on_exhausted, OnExhausted::Skip);
///
/// let errors = normalize_legacy(&json!({"rate_limited": "retry_same"}), &FieldPath::root()).unwrap_err();
/// assert_eq!(errors[0].code, ErrorCode::Conflict);
/// assert!(errors[0].message.contains("rate_limited"));
/// ```
pub fn normalize_legacy(
    value: &Value,
    path: &FieldPath,
) -> Result<PolicyDocument, Vec<FieldError>> {
    let mut errors = Vec::new();
    let Value::Object(map) = value else {
        return Err(vec![FieldError::new(
            path,
            ErrorCode::Type,
            format!("must be an object, not {}", read::describe(value)),
        )]);
    };
    // `None` records a key whose action was invalid: its class cannot be resolved.
    let mut default: Option<Option<LegacyAction>> = None;
    let mut rules: BTreeMap<SemanticCode, Option<LegacyAction>> = BTreeMap::new();
    // Sorted, so errors come in the same order whatever map type serde_json was built with.
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by_key(|(key, _)| *key);
    for (key, action) in entries {
        let key_path = path.field(key);
        if key == LEGACY_DEFAULT_KEY {
            default = Some(read_action(action, &key_path, &mut errors));
            continue;
        }
        match key.parse::<SemanticCode>() {
            Ok(code) if code.class().is_recoverable() => {
                rules.insert(code, read_action(action, &key_path, &mut errors));
            }
            Ok(code) => errors.push(FieldError::new(
                &key_path,
                ErrorCode::UnknownField,
                format!("`{code}` is an outside code: outside codes are never recovered, so a rule cannot name them"),
            )),
            Err(_) if ["transient", "hard"].contains(&key.as_str()) => errors.push(FieldError::new(
                &key_path,
                ErrorCode::UnknownField,
                "is not a semantic code: a version-2 document needs `\"version\": 2`",
            )),
            Err(_) => errors.push(FieldError::new(
                &key_path,
                ErrorCode::UnknownField,
                "is not a semantic code of a transient or hard class, nor `default`",
            )),
        }
    }
    let transient = resolve_class(Class::Transient, default, &rules, path, &mut errors);
    let hard = resolve_class(Class::Hard, default, &rules, path, &mut errors);
    match (transient, hard) {
        (Some(transient), Some(hard)) if errors.is_empty() => {
            Ok(PolicyDocument { transient, hard })
        }
        _ => Err(errors),
    }
}

fn read_action(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<LegacyAction> {
    let options = LegacyAction::ALL.map(|action| (action.as_str(), action));
    read::one_of(value, path, &options, errors)
}

/// The section of `class`, or `None` when it conflicts (reported) or cannot be resolved
/// because one of its actions was invalid (already reported).
fn resolve_class(
    class: Class,
    default: Option<Option<LegacyAction>>,
    rules: &BTreeMap<SemanticCode, Option<LegacyAction>>,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<PolicySection> {
    let defaults = PolicySection::default_for(class)?;
    let mut resolutions: Vec<(SemanticCode, Option<LegacyAction>)> = Vec::new();
    for &code in class.codes() {
        // Each code resolves to its own rule, else `default`'s, else to nothing; an
        // invalid action (already reported) leaves the class unresolved.
        let resolution = match (rules.get(&code), default) {
            (Some(Some(own)), _) => Some(*own),
            (Some(None), _) | (None, Some(None)) => return None,
            (None, Some(Some(fallback))) => Some(fallback),
            (None, None) => None,
        };
        resolutions.push((code, resolution));
    }
    let first = resolutions[0].1;
    if resolutions
        .iter()
        .all(|(_, resolution)| *resolution == first)
    {
        return Some(first.map_or(defaults, |action| action.section(defaults)));
    }
    errors.push(FieldError::new(
        path,
        ErrorCode::Conflict,
        conflict_message(class, &resolutions),
    ));
    None
}

/// E.g. "transient codes resolve to different actions: rate_limited resolves to
/// retry_same; overloaded, server_error, network, timeout resolve to nothing. ..."
fn conflict_message(class: Class, resolutions: &[(SemanticCode, Option<LegacyAction>)]) -> String {
    let outcomes = LegacyAction::ALL.map(Some).into_iter().chain([None]);
    let parts: Vec<String> = outcomes
        .filter_map(|outcome| {
            let names: Vec<&str> = resolutions
                .iter()
                .filter(|(_, resolution)| *resolution == outcome)
                .map(|(code, _)| code.as_str())
                .collect();
            let verb = if names.len() == 1 {
                "resolves"
            } else {
                "resolve"
            };
            let target = outcome.map_or("nothing", LegacyAction::as_str);
            (!names.is_empty()).then(|| format!("{} {verb} to {target}", names.join(", ")))
        })
        .collect();
    format!(
        "{class} codes resolve to different actions: {}; give every {class} code the same action (or use `default`)",
        parts.join("; ")
    )
}
