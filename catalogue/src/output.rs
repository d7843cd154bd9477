//! The catalogue's verdict (SPEC 2.5): the policy crate's classification plus the rule,
//! the catalogue version, the safe cause, and notes.

use policy::Classification;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::hints::DroppedHint;

/// A classification as the catalogue reports it. It wraps the policy crate's
/// [`Classification`] (what `evaluate` reads) and adds what people and logs need.
///
/// Serializes to exactly SPEC 2.5's shape, with absent hints omitted and two optional
/// notes: `hints_dropped` (timing hints that were not used, and why) and
/// `conflicting_rules` (when confidence is low, the rules that disagreed).
///
/// ```
/// use catalogue::{Catalogue, Evidence};
/// let evidence = Evidence::from_json_line(
///     r#"{"provider": "anthropic", "status": 429, "headers": {"retry-after": "20"},
///         "body": "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of request tokens has exceeded your per-minute rate limit\"}}",
///         "observed_at": "2026-11-30T02:00:00Z"}"#,
/// ).unwrap();
/// let verdict = Catalogue::shared().classify(&evidence, 0);
/// assert_eq!(
///     serde_json::to_value(&verdict).unwrap(),
///     serde_json::json!({
///         "code": "rate_limited", "class": "transient", "confidence": "high",
///         "retry_after_ms": 20000, "reset_at": "2026-11-30T02:00:20Z",
///         "rule": "anthropic.rate_limit_error", "catalogue": "2026.12.4",
///         "safe_cause": "Number of request tokens has exceeded your per-minute rate limit",
///     }),
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogueClassification {
    /// Code, class, confidence and timing hint, as the policy reads them.
    pub classification: Classification,
    /// The id of the rule that decided (`unknown` when none matched).
    pub rule: &'static str,
    /// The catalogue version that classified.
    pub catalogue: &'static str,
    /// The provider's message, secrets removed, at most 300 characters.
    pub safe_cause: String,
    /// When the evidence was observed (unix milliseconds): the base of relative hints.
    pub observed_at_ms: i64,
    /// Timing hints that were seen and not used, and why.
    pub hints_dropped: Vec<DroppedHint>,
    /// When confidence is low: the equally specific rules of another class that matched.
    pub conflicting_rules: Vec<&'static str>,
}

impl CatalogueClassification {
    /// `reset_at` as RFC 3339 (UTC), when there is a hint.
    ///
    /// ```
    /// let verdict = catalogue::classify(
    ///     &catalogue::Evidence::new("claude_code").with_output("Claude AI usage limit reached|1796022000"),
    ///     1_796_000_000_000,
    /// );
    /// assert_eq!(verdict.reset_at().as_deref(), Some("2026-11-30T07:00:00Z"));
    /// ```
    pub fn reset_at(&self) -> Option<String> {
        self.classification
            .reset_at_ms
            .and_then(crate::time::format_rfc3339)
    }
}

impl Serialize for CatalogueClassification {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let verdict = &self.classification;
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("code", &verdict.code)?;
        map.serialize_entry("class", &verdict.class)?;
        map.serialize_entry("confidence", &verdict.confidence)?;
        if let Some(retry_after_ms) = verdict.retry_after_ms {
            map.serialize_entry("retry_after_ms", &retry_after_ms)?;
        }
        if let Some(reset_at) = self.reset_at() {
            map.serialize_entry("reset_at", &reset_at)?;
        }
        map.serialize_entry("rule", self.rule)?;
        map.serialize_entry("catalogue", self.catalogue)?;
        map.serialize_entry("safe_cause", &self.safe_cause)?;
        if !self.hints_dropped.is_empty() {
            map.serialize_entry("hints_dropped", &self.hints_dropped)?;
        }
        if !self.conflicting_rules.is_empty() {
            map.serialize_entry("conflicting_rules", &self.conflicting_rules)?;
        }
        map.end()
    }
}
