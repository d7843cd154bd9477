//! Shared circuits (SPEC 5): which failures open one and over what, and what a route
//! due to send does while its candidate's circuit is open. Pure: the engine stores the
//! circuits, and the lease that lets exactly one route probe a half-open one.
//!
//! ```
//! use policy::circuit::*;
//! use policy::{Classification, Confidence, PolicySection, SemanticCode};
//! let now_ms = 1_796_004_000_000;
//! let limited = Classification::new(SemanticCode::UsageLimited, Confidence::High)
//!     .with_reset_at(now_ms + 3_600_000);
//! let opening = opens(&limited, now_ms).unwrap();
//! assert_eq!(opening, Opening { scope: CircuitScope::Provider, until_ms: now_ms + 3_600_000 });
//!
//! // A route due on that provider waits for the reset if its own wait allows it (the
//! // hard section's default: an hour), and takes its exhausted outcome if not.
//! let section = PolicySection::hard_default();
//! assert_eq!(gate(Some(opening.until_ms), &section, false, now_ms), Gate::Wait { until_ms: opening.until_ms });
//! assert_eq!(gate(Some(now_ms + 7_200_000), &section, false, now_ms), Gate::Exhausted);
//! assert_eq!(gate(None, &section, false, now_ms), Gate::Send);
//! ```

use serde::{Deserialize, Serialize};

use crate::classification::Classification;
use crate::codes::SemanticCode;
use crate::document::PolicySection;

/// What an open circuit closes.
///
/// ```
/// use policy::circuit::CircuitScope;
/// use policy::SemanticCode;
/// assert_eq!(CircuitScope::of(SemanticCode::QuotaExhausted), Some(CircuitScope::Provider));
/// assert_eq!(CircuitScope::of(SemanticCode::RateLimited), Some(CircuitScope::Model));
/// assert_eq!(CircuitScope::of(SemanticCode::ServerError), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CircuitScope {
    /// The whole provider: a subscription window, a quota or the account's credits.
    Provider,
    /// One model of the provider: its rate limit or its capacity.
    Model,
}

impl CircuitScope {
    /// The scope a failure of `code` closes, if it closes one: `usage_limited`,
    /// `quota_exhausted` and `insufficient_credits` the provider; `rate_limited` and
    /// `overloaded` that provider's model.
    pub fn of(code: SemanticCode) -> Option<Self> {
        match code {
            SemanticCode::UsageLimited
            | SemanticCode::QuotaExhausted
            | SemanticCode::InsufficientCredits => Some(Self::Provider),
            SemanticCode::RateLimited | SemanticCode::Overloaded => Some(Self::Model),
            _ => None,
        }
    }
}

/// A circuit a failure opens: over what, and until when (unix milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Opening {
    /// What it closes.
    pub scope: CircuitScope,
    /// When it half-opens.
    pub until_ms: i64,
}

/// The circuit a classified failure opens: only a reset hint still ahead opens one, and
/// only for a code with a scope.
///
/// ```
/// use policy::{Classification, Confidence, SemanticCode, circuit::opens};
/// let throttled = Classification::new(SemanticCode::RateLimited, Confidence::High);
/// assert_eq!(opens(&throttled, 0), None); // no hint
/// assert_eq!(opens(&throttled.with_reset_at(-1), 0), None); // a hint already past
/// ```
pub fn opens(classification: &Classification, now_ms: i64) -> Option<Opening> {
    let scope = CircuitScope::of(classification.code)?;
    let until_ms = classification
        .reset_at_ms
        .filter(|reset_at_ms| *reset_at_ms > now_ms)?;
    Some(Opening { scope, until_ms })
}

/// What a route due to send does about its candidate's circuit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Send: no circuit is open, it has half-opened (the engine lets one route probe),
    /// or a person's `retry_now` goes through as the probe.
    Send,
    /// Wait for the circuit's reset, within the route's own `max_wait_s` (this is not
    /// its episode's one reset wait).
    Wait {
        /// When the circuit half-opens.
        until_ms: i64,
    },
    /// The reset is beyond the route's wait: it takes its exhausted outcome
    /// ([`crate::evaluate::exhausted`]).
    Exhausted,
}

/// Decides what a route due to send does: `open_until_ms` is its candidate's open
/// circuit's reset, `section` the candidate's policy section for the class of the
/// failure that opened it, `through_circuit` whether a person's `retry_now` sends it as
/// the probe.
///
/// ```
/// use policy::circuit::{Gate, gate};
/// use policy::PolicySection;
/// let section = PolicySection::transient_default(); // max_wait_s: 60
/// let now_ms = 1_000_000;
/// assert_eq!(gate(Some(now_ms + 60_000), &section, false, now_ms), Gate::Wait { until_ms: now_ms + 60_000 });
/// assert_eq!(gate(Some(now_ms + 600_000), &section, false, now_ms), Gate::Exhausted);
/// assert_eq!(gate(Some(now_ms + 600_000), &section, true, now_ms), Gate::Send);
/// assert_eq!(gate(Some(now_ms), &section, false, now_ms), Gate::Send); // half-open
/// ```
pub fn gate(
    open_until_ms: Option<i64>,
    section: &PolicySection,
    through_circuit: bool,
    now_ms: i64,
) -> Gate {
    gate_within(open_until_ms, section, through_circuit, now_ms, None)
}

/// [`gate`] for a route whose caller waits for its answer until `respond_by_ms`
/// (a gateway call's deadline): a circuit that half-opens after it is not waited
/// for, and the route takes its exhausted outcome. `None` is [`gate`].
///
/// ```
/// use policy::circuit::{Gate, gate_within};
/// use policy::PolicySection;
/// let section = PolicySection::transient_default(); // max_wait_s: 60
/// let now_ms = 1_000_000;
/// let open_until_ms = Some(now_ms + 60_000);
/// assert_eq!(gate_within(open_until_ms, &section, false, now_ms, Some(now_ms + 60_000)), Gate::Wait { until_ms: now_ms + 60_000 });
/// assert_eq!(gate_within(open_until_ms, &section, false, now_ms, Some(now_ms + 59_999)), Gate::Exhausted);
/// ```
pub fn gate_within(
    open_until_ms: Option<i64>,
    section: &PolicySection,
    through_circuit: bool,
    now_ms: i64,
    respond_by_ms: Option<i64>,
) -> Gate {
    match open_until_ms {
        None => Gate::Send,
        Some(until_ms) if until_ms <= now_ms || through_circuit => Gate::Send,
        Some(until_ms) => {
            let wait_ms = until_ms.saturating_sub(now_ms);
            if u64::try_from(wait_ms)
                .is_ok_and(|wait_ms| wait_ms <= section.reset_wait.max_wait_ms())
                && respond_by_ms.is_none_or(|by_ms| until_ms <= by_ms)
            {
                Gate::Wait { until_ms }
            } else {
                Gate::Exhausted
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classification::Confidence;

    /// Every code: the scope SPEC 5 gives it, and none for the others.
    #[test]
    fn each_code_closes_its_scope() {
        for code in SemanticCode::ALL {
            let expected = match code.as_str() {
                "usage_limited" | "quota_exhausted" | "insufficient_credits" => {
                    Some(CircuitScope::Provider)
                }
                "rate_limited" | "overloaded" => Some(CircuitScope::Model),
                _ => None,
            };
            assert_eq!(CircuitScope::of(code), expected, "{code:?}");
            let hinted = Classification::new(code, Confidence::High).with_reset_at(10);
            assert_eq!(
                opens(&hinted, 0).map(|opening| opening.scope),
                expected,
                "{code:?}"
            );
        }
    }

    #[test]
    fn the_wait_is_bounded_by_the_sections_max_wait() {
        let mut section = PolicySection::hard_default();
        section.reset_wait.max_wait_s = 60;
        let now_ms = 5_000;
        let cases = [
            (
                Some(now_ms + 60_000),
                false,
                Gate::Wait {
                    until_ms: now_ms + 60_000,
                },
            ),
            (Some(now_ms + 60_001), false, Gate::Exhausted),
            (Some(now_ms + 60_001), true, Gate::Send),
            (Some(now_ms - 1), false, Gate::Send),
            (None, false, Gate::Send),
            (Some(i64::MAX), false, Gate::Exhausted),
        ];
        for (open_until_ms, through_circuit, expected) in cases {
            assert_eq!(
                gate(open_until_ms, &section, through_circuit, now_ms),
                expected,
                "{open_until_ms:?} {through_circuit}"
            );
        }
    }

    /// A caller's deadline bounds the wait as the section's `max_wait_s` does; a
    /// probe and a half-open circuit send whatever it is.
    #[test]
    fn the_wait_is_bounded_by_the_callers_deadline_too() {
        let section = PolicySection::transient_default(); // max_wait_s: 60
        let now_ms = 5_000;
        let until_ms = now_ms + 60_000;
        let cases = [
            (
                Some(until_ms),
                false,
                Some(until_ms),
                Gate::Wait { until_ms },
            ),
            (Some(until_ms), false, Some(until_ms - 1), Gate::Exhausted),
            (Some(until_ms), false, None, Gate::Wait { until_ms }),
            (Some(until_ms), true, Some(now_ms), Gate::Send),
            (Some(now_ms), false, Some(now_ms), Gate::Send),
            (None, false, Some(now_ms), Gate::Send),
        ];
        for (open_until_ms, through_circuit, respond_by_ms, expected) in cases {
            assert_eq!(
                gate_within(
                    open_until_ms,
                    &section,
                    through_circuit,
                    now_ms,
                    respond_by_ms
                ),
                expected,
                "{open_until_ms:?} {through_circuit} {respond_by_ms:?}"
            );
        }
    }
}
