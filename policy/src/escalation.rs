//! Token escalation after a `max_tokens` stop (SPEC 5).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::document::Bounds;
use crate::errors::FieldError;
use crate::path::FieldPath;
use crate::read;

/// Each escalation multiplies the token budget by this.
///
/// ```
/// let settings = policy::EscalationSettings::default();
/// assert_eq!(settings.next_budget(1_000, 0), Some(1_000 * policy::ESCALATION_FACTOR));
/// ```
pub const ESCALATION_FACTOR: u32 = 2;
/// Bounds of `escalation.max_escalations`: 0..=3.
///
/// ```
/// assert!(policy::MAX_ESCALATIONS_BOUNDS.contains(0));
/// ```
pub const MAX_ESCALATIONS_BOUNDS: Bounds = Bounds { min: 0, max: 3 };
/// Bounds of `escalation.ceiling_tokens`: 1..=1000000.
///
/// ```
/// assert_eq!(policy::CEILING_TOKENS_BOUNDS.message(), "must be between 1 and 1000000");
/// ```
pub const CEILING_TOKENS_BOUNDS: Bounds = Bounds {
    min: 1,
    max: 1_000_000,
};

/// A candidate's token escalation: how often, and up to what budget, a truncated
/// answer is re-sent with twice the `max_tokens`.
///
/// Serializes as `{"max_escalations", "ceiling_tokens"}`; deserializing validates
/// ([`normalize_escalation`]), so `null` gives the defaults.
///
/// ```
/// use policy::EscalationSettings;
/// let settings = EscalationSettings::default();
/// assert_eq!((settings.max_escalations, settings.ceiling_tokens), (1, 32_768));
/// assert_eq!(
///     serde_json::to_value(settings).unwrap(),
///     serde_json::json!({"max_escalations": 1, "ceiling_tokens": 32768}),
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct EscalationSettings {
    /// Re-sends allowed per turn, 0..=3 (0 disables escalation).
    pub max_escalations: u32,
    /// The largest budget an escalation may ask for, 1..=1000000 tokens.
    pub ceiling_tokens: u32,
}

impl Default for EscalationSettings {
    /// SPEC 5: one escalation, up to 32768 tokens.
    fn default() -> Self {
        Self {
            max_escalations: 1,
            ceiling_tokens: 32_768,
        }
    }
}

impl EscalationSettings {
    /// The budget of the next re-send after `escalations_done` escalations, or `None`
    /// when no further escalation is allowed: the count is used up, or the budget is
    /// already at (or above) the ceiling. Twice the budget, capped at the ceiling.
    ///
    /// ```
    /// let settings = policy::EscalationSettings { max_escalations: 2, ceiling_tokens: 10_000 };
    /// assert_eq!(settings.next_budget(4_096, 0), Some(8_192));
    /// assert_eq!(settings.next_budget(8_192, 1), Some(10_000));
    /// assert_eq!(settings.next_budget(10_000, 1), None);
    /// assert_eq!(settings.next_budget(1_024, 2), None);
    /// ```
    pub fn next_budget(&self, current_max_tokens: u32, escalations_done: u32) -> Option<u32> {
        if escalations_done >= self.max_escalations || current_max_tokens >= self.ceiling_tokens {
            return None;
        }
        let next = current_max_tokens
            .saturating_mul(ESCALATION_FACTOR)
            .min(self.ceiling_tokens);
        // A zero budget cannot grow by doubling.
        (next > current_max_tokens).then_some(next)
    }

    /// The field errors of typed settings, checked by the same code as JSON input.
    ///
    /// ```
    /// use policy::{EscalationSettings, FieldPath};
    /// let settings = EscalationSettings { max_escalations: 4, ceiling_tokens: 100 };
    /// let errors = settings.check_bounds(&FieldPath::root().field("escalation"));
    /// assert_eq!(errors[0].field, "escalation.max_escalations");
    /// ```
    pub fn check_bounds(&self, path: &FieldPath) -> Vec<FieldError> {
        let value = serde_json::to_value(self).unwrap_or(Value::Null);
        normalize_escalation(&value, path).err().unwrap_or_default()
    }
}

/// Validates a candidate's `escalation`: `null` (or absent) gives the defaults; an
/// object must have both fields, integers within bounds, and nothing else. Returns
/// EVERY error, with paths under `path`.
///
/// ```
/// use policy::{normalize_escalation, EscalationSettings, FieldPath};
/// use serde_json::json;
/// let path = FieldPath::root().field("candidates").index(0).field("escalation");
/// assert_eq!(normalize_escalation(&json!(null), &path).unwrap(), EscalationSettings::default());
/// let errors = normalize_escalation(&json!({"max_escalations": 4, "ceiling": 1}), &path).unwrap_err();
/// let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
/// assert_eq!(fields, [
///     "candidates[0].escalation.ceiling",
///     "candidates[0].escalation.max_escalations",
///     "candidates[0].escalation.ceiling_tokens",
/// ]);
/// ```
pub fn normalize_escalation(
    value: &Value,
    path: &FieldPath,
) -> Result<EscalationSettings, Vec<FieldError>> {
    if value.is_null() {
        return Ok(EscalationSettings::default());
    }
    let mut errors = Vec::new();
    let settings = read_settings(value, path, &mut errors);
    match settings {
        Some(settings) if errors.is_empty() => Ok(settings),
        _ => Err(errors),
    }
}

fn read_settings(
    value: &Value,
    path: &FieldPath,
    errors: &mut Vec<FieldError>,
) -> Option<EscalationSettings> {
    let map = read::object(value, path, &["max_escalations", "ceiling_tokens"], errors)?;
    let max_escalations = read::required(map, "max_escalations", path, errors).and_then(|number| {
        read::bounded(
            number,
            &path.field("max_escalations"),
            MAX_ESCALATIONS_BOUNDS,
            errors,
        )
    });
    let ceiling_tokens = read::required(map, "ceiling_tokens", path, errors).and_then(|number| {
        read::bounded(
            number,
            &path.field("ceiling_tokens"),
            CEILING_TOKENS_BOUNDS,
            errors,
        )
    });
    // Both are within bounds that fit a u32.
    Some(EscalationSettings {
        max_escalations: u32::try_from(max_escalations?).ok()?,
        ceiling_tokens: u32::try_from(ceiling_tokens?).ok()?,
    })
}

impl<'de> Deserialize<'de> for EscalationSettings {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        normalize_escalation(&value, &FieldPath::root()).map_err(|errors| {
            let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
            serde::de::Error::custom(format!(
                "invalid escalation settings: {}",
                messages.join("; ")
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::EscalationSettings;

    #[test]
    fn next_budget_table() {
        // (max_escalations, ceiling_tokens, current_max_tokens, escalations_done, expected)
        let table = [
            (1, 32_768, 4_096, 0, Some(8_192)),
            (1, 32_768, 4_096, 1, None),          // count used up
            (0, 32_768, 4_096, 0, None),          // escalation disabled
            (3, 32_768, 20_000, 0, Some(32_768)), // capped at the ceiling
            (3, 32_768, 32_768, 0, None),         // at the ceiling
            (3, 32_768, 40_000, 0, None),         // above the ceiling
            (3, 1_000_000, u32::MAX / 2 + 1, 0, None),
            (3, 1_000_000, 600_000, 2, Some(1_000_000)),
            (3, 1_000_000, 600_000, 3, None),
            (3, 1, 0, 0, None), // a zero budget cannot double
            (1, 1, 1, 0, None),
            (3, 32_768, 1, 0, Some(2)),
            (3, 32_768, 8_192, u32::MAX, None),
        ];
        for (max_escalations, ceiling_tokens, current, done, expected) in table {
            let settings = EscalationSettings {
                max_escalations,
                ceiling_tokens,
            };
            assert_eq!(
                settings.next_budget(current, done),
                expected,
                "{settings:?} {current} {done}"
            );
        }
    }
}
