//! The version-2 policy document (SPEC 3): its types, defaults and bounds.

use std::fmt;

use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};

use crate::codes::Class;
use crate::errors::FieldError;
use crate::path::FieldPath;

/// The only policy version Switchback stores and returns.
///
/// ```
/// assert_eq!(serde_json::to_value(policy::PolicyDocument::default()).unwrap()["version"], policy::POLICY_VERSION);
/// ```
pub const POLICY_VERSION: u64 = 2;

/// Inclusive bounds of an integer field; the editor uses them for its inputs too.
///
/// ```
/// use policy::MAX_RETRIES_BOUNDS;
/// assert!(MAX_RETRIES_BOUNDS.contains(10));
/// assert!(!MAX_RETRIES_BOUNDS.contains(11));
/// assert_eq!(MAX_RETRIES_BOUNDS.message(), "must be between 1 and 10");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Bounds {
    /// The smallest allowed value.
    pub min: u64,
    /// The largest allowed value.
    pub max: u64,
}

impl Bounds {
    /// Whether `value` lies within the bounds.
    ///
    /// ```
    /// assert!(policy::MAX_WAIT_S_BOUNDS.contains(604_800));
    /// ```
    pub const fn contains(self, value: u64) -> bool {
        self.min <= value && value <= self.max
    }

    /// The `range` error message, e.g. `must be between 1 and 10`.
    ///
    /// ```
    /// assert_eq!(policy::INITIAL_INTERVAL_MS_BOUNDS.message(), "must be between 100 and 600000");
    /// ```
    pub fn message(self) -> String {
        format!("must be between {} and {}", self.min, self.max)
    }
}

/// Bounds of `retry.max_retries`: 1..=10.
///
/// ```
/// assert_eq!((policy::MAX_RETRIES_BOUNDS.min, policy::MAX_RETRIES_BOUNDS.max), (1, 10));
/// ```
pub const MAX_RETRIES_BOUNDS: Bounds = Bounds { min: 1, max: 10 };
/// Bounds of `retry.initial_interval_ms`: 100..=600000.
///
/// ```
/// assert!(!policy::INITIAL_INTERVAL_MS_BOUNDS.contains(99));
/// ```
pub const INITIAL_INTERVAL_MS_BOUNDS: Bounds = Bounds {
    min: 100,
    max: 600_000,
};
/// Bounds of `retry.jitter_pct`: 0..=50 (percent of each backoff delay).
///
/// ```
/// assert_eq!((policy::JITTER_PCT_BOUNDS.min, policy::JITTER_PCT_BOUNDS.max), (0, 50));
/// ```
pub const JITTER_PCT_BOUNDS: Bounds = Bounds { min: 0, max: 50 };
/// Bounds of `reset_wait.max_wait_s`: 1..=604800 (seven days).
///
/// ```
/// assert_eq!(policy::MAX_WAIT_S_BOUNDS.max, 7 * 24 * 3600);
/// ```
pub const MAX_WAIT_S_BOUNDS: Bounds = Bounds {
    min: 1,
    max: 604_800,
};

/// A candidate's recovery policy, version 2: one section per recoverable class.
///
/// Serializes to exactly the SPEC 3 shape, `version` first. Deserializing runs the
/// full validation ([`validate_document`](crate::validate_document)) and accepts
/// version 2 only; use [`normalize_policy`](crate::normalize_policy) to accept legacy
/// rule maps too.
///
/// ```
/// use policy::{Class, OnExhausted, PolicyDocument};
/// let document = PolicyDocument::default();
/// assert_eq!(document.section(Class::Transient).unwrap().retry.max_retries, 2);
/// assert_eq!(document.hard.reset_wait.max_wait_s, 3600);
/// assert!(document.section(Class::Outside).is_none());
/// let json = serde_json::to_value(&document).unwrap();
/// assert_eq!(json["version"], 2);
/// assert_eq!(serde_json::from_value::<PolicyDocument>(json).unwrap(), document);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PolicyDocument {
    /// How to recover from `transient` failures.
    pub transient: PolicySection,
    /// How to recover from `hard` failures.
    pub hard: PolicySection,
}

/// One class's recovery settings: retry, wait for a stated reset, and what to do after.
///
/// ```
/// let section = policy::PolicySection::transient_default();
/// assert!(section.retry.enabled && section.reset_wait.enabled);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct PolicySection {
    /// Retrying the same candidate with exponential backoff.
    pub retry: RetrySettings,
    /// Waiting once per episode for a reset the provider stated.
    pub reset_wait: ResetWaitSettings,
    /// What happens when neither applies any more.
    pub on_exhausted: OnExhausted,
}

/// Retry settings of a section.
///
/// ```
/// let retry = policy::RetrySettings { enabled: true, max_retries: 3, initial_interval_ms: 250, jitter_pct: 0 };
/// let delays: Vec<u64> = (1..=retry.max_retries)
///     .map(|ordinal| policy::backoff_ms(retry.initial_interval_ms, ordinal))
///     .collect();
/// assert_eq!(delays, [250, 500, 1_000]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct RetrySettings {
    /// Whether retrying is allowed at all.
    pub enabled: bool,
    /// Retries per episode for this class, 1..=10.
    pub max_retries: u32,
    /// The delay before the first retry, 100..=600000 ms; doubled for each next one.
    pub initial_interval_ms: u64,
    /// How far each delay may move, 0..=50 percent either way, by an offset derived
    /// from the route's task id and the retry's ordinal ([`jittered_backoff_ms`]);
    /// 0, the default, keeps the delays exact. Absent in JSON reads as 0, and 0 is
    /// not written, so documents without jitter keep their SPEC 3 shape.
    ///
    /// [`jittered_backoff_ms`]: crate::backoff::jittered_backoff_ms
    #[serde(skip_serializing_if = "is_zero")]
    pub jitter_pct: u32,
}

fn is_zero(value: &u32) -> bool {
    *value == 0
}

/// Reset-wait settings of a section.
///
/// ```
/// let wait = policy::ResetWaitSettings { enabled: true, max_wait_s: 60 };
/// assert_eq!(wait.max_wait_ms(), 60_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ResetWaitSettings {
    /// Whether to wait for a stated reset.
    pub enabled: bool,
    /// The longest reset worth waiting for, 1..=604800 s. It also limits how far a
    /// retry may be pushed back by a reset hint, even when waiting is disabled.
    pub max_wait_s: u64,
}

impl ResetWaitSettings {
    /// `max_wait_s` in milliseconds, saturating.
    ///
    /// ```
    /// assert_eq!(policy::ResetWaitSettings { enabled: false, max_wait_s: 1 }.max_wait_ms(), 1_000);
    /// ```
    pub fn max_wait_ms(self) -> u64 {
        self.max_wait_s.saturating_mul(1_000)
    }
}

/// What a section does once retry and reset wait no longer apply.
///
/// ```
/// use policy::OnExhausted;
/// assert_eq!(serde_json::to_value(OnExhausted::Skip).unwrap(), "skip");
/// assert_eq!(OnExhausted::Stop.as_str(), "stop");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnExhausted {
    /// Move to the next enabled candidate (stop when there is none).
    Skip,
    /// End the route.
    Stop,
}

impl OnExhausted {
    /// Every value, in SPEC order.
    ///
    /// ```
    /// assert_eq!(policy::OnExhausted::ALL.map(|value| value.as_str()), ["skip", "stop"]);
    /// ```
    pub const ALL: [OnExhausted; 2] = [OnExhausted::Skip, OnExhausted::Stop];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::OnExhausted::Skip.as_str(), "skip");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Skip => "skip",
            Self::Stop => "stop",
        }
    }
}

impl fmt::Display for OnExhausted {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl PolicySection {
    /// The SPEC 3 defaults of the transient section: retry 2 x 500 ms, wait up to 60 s, skip.
    ///
    /// ```
    /// assert_eq!(policy::PolicySection::transient_default().reset_wait.max_wait_s, 60);
    /// ```
    pub fn transient_default() -> Self {
        Self {
            retry: RetrySettings {
                enabled: true,
                max_retries: 2,
                initial_interval_ms: 500,
                jitter_pct: 0,
            },
            reset_wait: ResetWaitSettings {
                enabled: true,
                max_wait_s: 60,
            },
            on_exhausted: OnExhausted::Skip,
        }
    }

    /// The SPEC 3 defaults of the hard section: retry and reset wait disabled
    /// (2 x 500 ms, up to 3600 s, when enabled), skip.
    ///
    /// ```
    /// assert!(!policy::PolicySection::hard_default().retry.enabled);
    /// ```
    pub fn hard_default() -> Self {
        Self {
            retry: RetrySettings {
                enabled: false,
                max_retries: 2,
                initial_interval_ms: 500,
                jitter_pct: 0,
            },
            reset_wait: ResetWaitSettings {
                enabled: false,
                max_wait_s: 3600,
            },
            on_exhausted: OnExhausted::Skip,
        }
    }

    /// The defaults of a recoverable class; `None` for `outside`.
    ///
    /// ```
    /// use policy::{Class, PolicySection};
    /// assert_eq!(PolicySection::default_for(Class::Hard), Some(PolicySection::hard_default()));
    /// assert_eq!(PolicySection::default_for(Class::Outside), None);
    /// ```
    pub fn default_for(class: Class) -> Option<Self> {
        match class {
            Class::Transient => Some(Self::transient_default()),
            Class::Hard => Some(Self::hard_default()),
            Class::Outside => None,
        }
    }
}

/// A class that a policy has a section for: `transient` or `hard`. There is
/// no third: `outside` failures are never recovered, so code that handles a
/// section can never quietly treat `outside` as one of these.
///
/// ```
/// use policy::{Class, SectionClass};
/// assert_eq!(SectionClass::of(Class::Hard), Some(SectionClass::Hard));
/// assert_eq!(SectionClass::of(Class::Outside), None);
/// assert_eq!(SectionClass::Transient.class(), Class::Transient);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SectionClass {
    /// The `transient` section.
    Transient,
    /// The `hard` section.
    Hard,
}

impl SectionClass {
    /// Both, in SPEC order.
    pub const ALL: [SectionClass; 2] = [SectionClass::Transient, SectionClass::Hard];

    /// The class this section governs.
    pub fn class(self) -> Class {
        match self {
            Self::Transient => Class::Transient,
            Self::Hard => Class::Hard,
        }
    }

    /// The section of `class`, if it has one.
    pub fn of(class: Class) -> Option<Self> {
        match class {
            Class::Transient => Some(Self::Transient),
            Class::Hard => Some(Self::Hard),
            Class::Outside => None,
        }
    }

    /// The snake_case name: the section's key in a policy document.
    pub fn as_str(self) -> &'static str {
        self.class().as_str()
    }
}

impl Default for PolicyDocument {
    /// The SPEC 3 defaults; what a candidate given no policy gets.
    fn default() -> Self {
        Self {
            transient: PolicySection::transient_default(),
            hard: PolicySection::hard_default(),
        }
    }
}

impl PolicyDocument {
    /// The section that governs `class`; `None` for `outside`.
    ///
    /// ```
    /// use policy::{Class, PolicyDocument};
    /// let document = PolicyDocument::default();
    /// assert_eq!(document.section(Class::Hard), Some(&document.hard));
    /// ```
    pub fn section(&self, class: Class) -> Option<&PolicySection> {
        match class {
            Class::Transient => Some(&self.transient),
            Class::Hard => Some(&self.hard),
            Class::Outside => None,
        }
    }

    /// The section of `class`.
    ///
    /// ```
    /// use policy::{PolicyDocument, SectionClass};
    /// let document = PolicyDocument::default();
    /// assert_eq!(document.section_of(SectionClass::Hard), &document.hard);
    /// ```
    pub fn section_of(&self, class: SectionClass) -> &PolicySection {
        match class {
            SectionClass::Transient => &self.transient,
            SectionClass::Hard => &self.hard,
        }
    }

    /// The field errors of a typed document (for an editor holding one), checked with the
    /// same code as JSON input: empty when every number is within its bounds.
    ///
    /// ```
    /// use policy::{FieldPath, PolicyDocument};
    /// let mut document = PolicyDocument::default();
    /// assert!(document.check_bounds(&FieldPath::root()).is_empty());
    /// document.hard.retry.max_retries = 11;
    /// let errors = document.check_bounds(&FieldPath::root().field("candidates").index(1).field("policy"));
    /// assert_eq!(errors[0].field, "candidates[1].policy.hard.retry.max_retries");
    /// assert_eq!(errors[0].message, "must be between 1 and 10");
    /// ```
    pub fn check_bounds(&self, path: &FieldPath) -> Vec<FieldError> {
        let value = serde_json::to_value(self).unwrap_or(serde_json::Value::Null);
        crate::validate::validate_document(&value, path)
            .err()
            .unwrap_or_default()
    }
}

impl Serialize for PolicyDocument {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut document = serializer.serialize_struct("PolicyDocument", 3)?;
        document.serialize_field("version", &POLICY_VERSION)?;
        document.serialize_field("transient", &self.transient)?;
        document.serialize_field("hard", &self.hard)?;
        document.end()
    }
}

impl<'de> Deserialize<'de> for PolicyDocument {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        crate::validate::validate_document(&value, &FieldPath::root()).map_err(|errors| {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            serde::de::Error::custom(format!("invalid policy document: {}", messages.join("; ")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::PolicyDocument;

    /// The SPEC 3 document, verbatim: the defaults must round-trip as JSON values.
    const SPEC_DEFAULTS: &str = r#"{"version": 2,
 "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 500},
               "reset_wait": {"enabled": true, "max_wait_s": 60},
               "on_exhausted": "skip"},
 "hard":      {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
               "reset_wait": {"enabled": false, "max_wait_s": 3600},
               "on_exhausted": "skip"}}"#;

    #[test]
    fn defaults_match_spec_json() {
        let spec: serde_json::Value = serde_json::from_str(SPEC_DEFAULTS).unwrap();
        assert_eq!(
            serde_json::to_value(PolicyDocument::default()).unwrap(),
            spec
        );
        let parsed: PolicyDocument = serde_json::from_str(SPEC_DEFAULTS).unwrap();
        assert_eq!(parsed, PolicyDocument::default());
    }

    #[test]
    fn serializes_in_spec_field_order() {
        let text = serde_json::to_string(&PolicyDocument::default()).unwrap();
        let expected: String = SPEC_DEFAULTS
            .split_whitespace()
            .collect::<Vec<_>>()
            .join("");
        assert_eq!(text, expected);
    }

    #[test]
    fn deserializing_invalid_documents_fails_with_fields() {
        let error = serde_json::from_str::<PolicyDocument>(r#"{"version": 2}"#).unwrap_err();
        assert!(
            error.to_string().contains("transient: is required"),
            "{error}"
        );
    }
}
