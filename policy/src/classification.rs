//! The catalogue's verdict as the policy reads it (SPEC 2.3-2.5, 4).

use serde::{Deserialize, Serialize};

use crate::codes::{Class, SemanticCode};

/// Whether the catalogue's matching rules agreed on a class (SPEC 2.4).
///
/// ```
/// assert_eq!(serde_json::to_value(policy::Confidence::Low).unwrap(), "low");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Confidence {
    /// The rules agreed (or a bare well-known status): recovery may act.
    High,
    /// No rule of the provider's family decided; words any provider may use did
    /// (the catalogue's generic layer): recovery may act, and the attempt is
    /// listed for a person to confirm the reading.
    Medium,
    /// Rules of different classes matched: automatic recovery stops.
    Low,
}

impl Confidence {
    /// Every value.
    pub const ALL: [Confidence; 3] = [Confidence::High, Confidence::Medium, Confidence::Low];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::Confidence::High.as_str(), "high");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::High => "high",
            Self::Medium => "medium",
            Self::Low => "low",
        }
    }
}

/// A classification of one failed attempt: what the catalogue produces and
/// [`evaluate`](crate::evaluate()) consumes.
///
/// `class` is always `code.class()` ([`Classification::new`] sets it); `evaluate`
/// reads the class from the code. Times are unix milliseconds. A relative hint is also
/// given as an absolute `reset_at_ms` (SPEC 2.3), and `evaluate` reads only that.
///
/// ```
/// use policy::{Class, Classification, Confidence, SemanticCode};
/// let verdict = Classification::new(SemanticCode::RateLimited, Confidence::High)
///     .with_retry_after(1_796_000_000_000, 20_000);
/// assert_eq!(verdict.class, Class::Transient);
/// assert_eq!(verdict.reset_at_ms, Some(1_796_000_020_000));
/// assert_eq!(
///     serde_json::to_value(&verdict).unwrap(),
///     serde_json::json!({"code": "rate_limited", "class": "transient", "confidence": "high",
///                        "retry_after_ms": 20_000, "reset_at_ms": 1_796_000_020_000_i64}),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Classification {
    /// The semantic code.
    pub code: SemanticCode,
    /// The code's class.
    pub class: Class,
    /// Whether the catalogue is sure.
    pub confidence: Confidence,
    /// A relative timing hint, in milliseconds after the evidence was observed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// An absolute timing hint: when the limit resets, in unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_at_ms: Option<i64>,
}

impl Classification {
    /// A classification without a timing hint; the class comes from the code.
    ///
    /// ```
    /// use policy::{Class, Classification, Confidence, SemanticCode};
    /// let verdict = Classification::new(SemanticCode::Unknown, Confidence::High);
    /// assert_eq!((verdict.class, verdict.reset_at_ms), (Class::Outside, None));
    /// ```
    pub fn new(code: SemanticCode, confidence: Confidence) -> Self {
        Self {
            code,
            class: code.class(),
            confidence,
            retry_after_ms: None,
            reset_at_ms: None,
        }
    }

    /// With a relative hint observed at `observed_at_ms`: sets `retry_after_ms` and
    /// `reset_at_ms = observed_at_ms + retry_after_ms` (saturating).
    ///
    /// ```
    /// use policy::{Classification, Confidence, SemanticCode};
    /// let verdict = Classification::new(SemanticCode::Overloaded, Confidence::High).with_retry_after(1_000, 500);
    /// assert_eq!((verdict.retry_after_ms, verdict.reset_at_ms), (Some(500), Some(1_500)));
    /// ```
    pub fn with_retry_after(self, observed_at_ms: i64, retry_after_ms: u64) -> Self {
        let offset_ms = i64::try_from(retry_after_ms).unwrap_or(i64::MAX);
        Self {
            retry_after_ms: Some(retry_after_ms),
            reset_at_ms: Some(observed_at_ms.saturating_add(offset_ms)),
            ..self
        }
    }

    /// With an absolute hint, in unix milliseconds.
    ///
    /// ```
    /// use policy::{Classification, Confidence, SemanticCode};
    /// let verdict = Classification::new(SemanticCode::UsageLimited, Confidence::High).with_reset_at(1_796_022_000_000);
    /// assert_eq!((verdict.retry_after_ms, verdict.reset_at_ms), (None, Some(1_796_022_000_000)));
    /// ```
    pub fn with_reset_at(self, reset_at_ms: i64) -> Self {
        Self {
            reset_at_ms: Some(reset_at_ms),
            ..self
        }
    }
}
