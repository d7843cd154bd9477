//! The decision after a failed attempt (SPEC 4): pure, in a fixed order.

use std::ops::Index;

use serde::{Deserialize, Serialize};

use crate::backoff::jittered_backoff_ms;
use crate::classification::{Classification, Confidence};
use crate::codes::{Class, SemanticCode};
use crate::document::{OnExhausted, PolicyDocument, PolicySection};

/// The longest a retry may be pushed back by a reset hint: one hour, in milliseconds.
///
/// ```
/// assert_eq!(policy::MAX_RETRY_PUSH_MS, 3_600_000);
/// ```
pub const MAX_RETRY_PUSH_MS: u64 = 3_600_000;

/// Retries made by `retry` decisions in this episode, per class.
///
/// ```
/// use policy::{Class, RetryCounts};
/// let counts = RetryCounts { transient: 2, hard: 0 };
/// assert_eq!(counts[Class::Transient], 2);
/// assert_eq!(counts[Class::Outside], 0);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct RetryCounts {
    /// Retries for `transient` failures.
    pub transient: u32,
    /// Retries for `hard` failures.
    pub hard: u32,
}

impl Index<Class> for RetryCounts {
    type Output = u32;

    fn index(&self, class: Class) -> &u32 {
        match class {
            Class::Transient => &self.transient,
            Class::Hard => &self.hard,
            Class::Outside => &0,
        }
    }
}

/// The run of failures on one candidate (SPEC 4). It starts afresh when the route
/// moves to another candidate, when an attempt succeeds, and on `retry_now` from `held`.
///
/// ```
/// use policy::{Class, Decision, Episode};
/// let mut episode = Episode::default();
/// episode.record(&Decision::Retry { ordinal: 1, at_ms: 500 }, Class::Hard);
/// episode.record(&Decision::WaitForReset { until_ms: 9_000 }, Class::Hard);
/// assert_eq!((episode.retries.hard, episode.waited_for_reset), (1, true));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Episode {
    /// Dispatches made by `retry` decisions, per class (a dispatch after a reset wait is not one).
    pub retries: RetryCounts,
    /// Whether this episode has already waited for a reset (once per episode).
    pub waited_for_reset: bool,
}

impl Episode {
    /// Counts `decision`, made for a failure of `class`, into the episode: a retry adds
    /// one to its class, a reset wait uses up the episode's one wait.
    ///
    /// ```
    /// use policy::{Class, Decision, Episode};
    /// let mut episode = Episode::default();
    /// episode.record(&Decision::Skip, Class::Transient);
    /// assert_eq!(episode, Episode::default());
    /// ```
    pub fn record(&mut self, decision: &Decision, class: Class) {
        match (decision, class) {
            (Decision::Retry { .. }, Class::Transient) => {
                self.retries.transient = self.retries.transient.saturating_add(1)
            }
            (Decision::Retry { .. }, Class::Hard) => {
                self.retries.hard = self.retries.hard.saturating_add(1)
            }
            (Decision::WaitForReset { .. }, _) => self.waited_for_reset = true,
            _ => {}
        }
    }
}

/// What the failed attempt may have done besides failing.
///
/// ```
/// let effects = policy::Effects { partial_output: true, ..Default::default() };
/// assert!(effects.is_unsafe());
/// assert!(!policy::Effects::default().is_unsafe());
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Effects {
    /// Part of an answer was already streamed out.
    pub partial_output: bool,
    /// The attempt may have had a side effect that cannot be told apart from success.
    pub ambiguous_side_effect: bool,
}

impl Effects {
    /// Whether repeating the attempt could duplicate or contradict what happened.
    ///
    /// ```
    /// assert!(policy::Effects { partial_output: false, ambiguous_side_effect: true }.is_unsafe());
    /// ```
    pub fn is_unsafe(self) -> bool {
        self.partial_output || self.ambiguous_side_effect
    }
}

/// Why a route is held for a person.
///
/// ```
/// assert_eq!(serde_json::to_value(policy::HoldCause::UnsafeEffect).unwrap(), "unsafe_effect");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldCause {
    /// Partial output or an ambiguous side effect.
    UnsafeEffect,
    /// An `unknown` code or low confidence.
    Unrecognized,
}

/// Why a route stops.
///
/// ```
/// assert_eq!(serde_json::to_value(policy::StopCause::Exhausted).unwrap(), "exhausted");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopCause {
    /// An `outside` code: recovery cannot help.
    Unrecoverable,
    /// The policy has nothing more to try here, and no skip is possible or wanted.
    Exhausted,
}

/// The outcome of [`evaluate`]. Times are unix milliseconds.
///
/// ```
/// use policy::{Decision, StopCause};
/// let decision = Decision::Stop { cause: StopCause::Exhausted };
/// assert_eq!(decision.name(), "stop");
/// assert_eq!(serde_json::to_value(decision).unwrap(), serde_json::json!({"decision": "stop", "cause": "exhausted"}));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decision {
    /// Wait for the provider's stated reset, then dispatch again (not a retry).
    WaitForReset {
        /// When to dispatch.
        until_ms: i64,
    },
    /// Retry the same candidate.
    Retry {
        /// Which retry of this class in this episode, from 1.
        ordinal: u32,
        /// When to dispatch.
        at_ms: i64,
    },
    /// Move to the next enabled candidate.
    Skip,
    /// End the route.
    Stop {
        /// Why.
        cause: StopCause,
    },
    /// Hold the route for a person.
    Hold {
        /// Why.
        cause: HoldCause,
    },
}

impl Decision {
    /// The decision's name as SPEC 5 writes it: `wait_for_reset`, `retry`, `skip`, `stop`, `hold`.
    ///
    /// ```
    /// assert_eq!(policy::Decision::WaitForReset { until_ms: 0 }.name(), "wait_for_reset");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            Self::WaitForReset { .. } => "wait_for_reset",
            Self::Retry { .. } => "retry",
            Self::Skip => "skip",
            Self::Stop { .. } => "stop",
            Self::Hold { .. } => "hold",
        }
    }
}

/// Decides what follows a failed attempt, in SPEC 4's order:
///
/// 1. unsafe effects -> `hold(unsafe_effect)`;
/// 2. `unknown` or low confidence -> `hold(unrecognized)`; another `outside` code -> `stop(unrecoverable)`;
/// 3. a reset wait (enabled, `now < reset_at <= now + max_wait_s`, not yet waited this episode);
/// 4. a retry (enabled, retries of this class below `max_retries`) at `now + backoff`
///    (moved within its band when the section has `jitter_pct`), or at a later valid
///    `reset_at` when that is within `min(max_wait_s, 1 h)`; beyond that, retrying is
///    pointless;
/// 5. `on_exhausted`: `skip` (or `stop(exhausted)` with no next candidate), or `stop(exhausted)`.
///
/// Pure: `now_ms` comes in; no clock, no I/O. Arithmetic saturates.
///
/// ```
/// use policy::*;
/// let document = PolicyDocument::default();
/// let now_ms = 1_796_000_000_000;
/// let verdict = Classification::new(SemanticCode::Overloaded, Confidence::High);
/// let decision = evaluate(&document, &verdict, &Episode::default(), Effects::default(), true, now_ms);
/// assert_eq!(decision, Decision::Retry { ordinal: 1, at_ms: now_ms + 500 });
///
/// let limited = verdict.with_reset_at(now_ms + 30_000);
/// let decision = evaluate(&document, &limited, &Episode::default(), Effects::default(), true, now_ms);
/// assert_eq!(decision, Decision::WaitForReset { until_ms: now_ms + 30_000 });
/// ```
pub fn evaluate(
    policy: &PolicyDocument,
    classification: &Classification,
    episode: &Episode,
    effects: Effects,
    has_next_candidate: bool,
    now_ms: i64,
) -> Decision {
    evaluate_within(
        policy,
        classification,
        episode,
        effects,
        has_next_candidate,
        now_ms,
        RouteTiming::default(),
    )
}

/// What a route brings to [`evaluate_within`] about time, beside `now`: the
/// deadline of a caller waiting for its answer, and the seed of its retries'
/// jitter. The default has no deadline and seed 0.
///
/// ```
/// use policy::evaluate::RouteTiming;
/// let timing = RouteTiming::for_task("0190f1d2-7a5b-7c3e-9d4f-1a2b3c4d5e6f", Some(1_000));
/// assert_eq!(timing.jitter_seed, policy::jitter_seed("0190f1d2-7a5b-7c3e-9d4f-1a2b3c4d5e6f"));
/// assert_eq!(RouteTiming::default().respond_by_ms, None);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct RouteTiming {
    /// When the caller stops waiting (a gateway call's deadline), unix milliseconds.
    pub respond_by_ms: Option<i64>,
    /// The seed that places each retry within its jitter band
    /// ([`jittered_backoff_ms`]); it matters only when `retry.jitter_pct` is above 0.
    pub jitter_seed: u64,
}

impl RouteTiming {
    /// The timing of the route of task `task_id`: its jitter seeded by the id
    /// ([`jitter_seed`](crate::backoff::jitter_seed)), so the route's retries
    /// land at the same offsets however often they are computed.
    pub fn for_task(task_id: &str, respond_by_ms: Option<i64>) -> Self {
        Self {
            respond_by_ms,
            jitter_seed: crate::backoff::jitter_seed(task_id),
        }
    }
}

/// [`evaluate`] for a route with its own [`RouteTiming`]. Its retries are placed
/// in their jitter band by `timing.jitter_seed`. When a caller waits for its
/// answer until `timing.respond_by_ms` (a gateway call's deadline), a reset wait
/// or a retry that would end after it is not taken, so the failure falls through
/// to step 5, the section's exhausted outcome. `RouteTiming::default()` is
/// [`evaluate`].
///
/// ```
/// use policy::*;
/// use policy::evaluate::{RouteTiming, evaluate_within};
/// let document = PolicyDocument::default();
/// let now_ms = 1_796_000_000_000;
/// let limited = Classification::new(SemanticCode::RateLimited, Confidence::High)
///     .with_reset_at(now_ms + 30_000);
/// let within = |respond_by_ms| {
///     let timing = RouteTiming { respond_by_ms, jitter_seed: 0 };
///     evaluate_within(&document, &limited, &Episode::default(), Effects::default(), true, now_ms, timing)
/// };
/// assert_eq!(within(Some(now_ms + 30_000)), Decision::WaitForReset { until_ms: now_ms + 30_000 });
/// assert_eq!(within(Some(now_ms + 29_999)), Decision::Skip);
/// ```
pub fn evaluate_within(
    policy: &PolicyDocument,
    classification: &Classification,
    episode: &Episode,
    effects: Effects,
    has_next_candidate: bool,
    now_ms: i64,
    timing: RouteTiming,
) -> Decision {
    let in_time = |at_ms: i64| timing.respond_by_ms.is_none_or(|by_ms| at_ms <= by_ms);
    // Step 1: repeating an attempt that may have had an effect needs a person.
    if effects.is_unsafe() {
        return Decision::Hold {
            cause: HoldCause::UnsafeEffect,
        };
    }
    // Step 2: the catalogue is unsure, or recovery cannot help.
    let code = classification.code;
    if code == SemanticCode::Unknown || classification.confidence == Confidence::Low {
        return Decision::Hold {
            cause: HoldCause::Unrecognized,
        };
    }
    let class = code.class();
    let Some(section) = policy.section(class) else {
        return Decision::Stop {
            cause: StopCause::Unrecoverable,
        };
    };
    // A hint counts only while it lies in the future.
    let reset_at_ms = classification
        .reset_at_ms
        .filter(|reset_at_ms| *reset_at_ms > now_ms);
    // Step 3: one reset wait per episode.
    if let Some(until_ms) = reset_at_ms {
        let latest_ms = add_ms(now_ms, section.reset_wait.max_wait_ms());
        if section.reset_wait.enabled
            && !episode.waited_for_reset
            && until_ms <= latest_ms
            && in_time(until_ms)
        {
            return Decision::WaitForReset { until_ms };
        }
    }
    // Step 4: retry, never before a valid reset.
    if let Some(decision) = retry(
        section,
        episode.retries[class],
        reset_at_ms,
        now_ms,
        timing.jitter_seed,
    ) && let Decision::Retry { at_ms, .. } = decision
        && in_time(at_ms)
    {
        return decision;
    }
    // Step 5.
    exhausted(section, has_next_candidate)
}

/// Step 5, the section's `on_exhausted`: `skip` (or `stop(exhausted)` with no next
/// candidate), or `stop(exhausted)`. Also what a route takes when an open circuit
/// keeps it from sending beyond its wait.
///
/// ```
/// use policy::{Decision, PolicySection, StopCause, evaluate::exhausted};
/// let section = PolicySection::transient_default();
/// assert_eq!(exhausted(&section, true), Decision::Skip);
/// assert_eq!(exhausted(&section, false), Decision::Stop { cause: StopCause::Exhausted });
/// ```
pub fn exhausted(section: &PolicySection, has_next_candidate: bool) -> Decision {
    match section.on_exhausted {
        OnExhausted::Skip if has_next_candidate => Decision::Skip,
        OnExhausted::Skip | OnExhausted::Stop => Decision::Stop {
            cause: StopCause::Exhausted,
        },
    }
}

/// Step 4: the retry decision, or `None` when retrying is disabled, used up, or pointless.
fn retry(
    section: &PolicySection,
    retries: u32,
    reset_at_ms: Option<i64>,
    now_ms: i64,
    jitter_seed: u64,
) -> Option<Decision> {
    if !section.retry.enabled || retries >= section.retry.max_retries {
        return None;
    }
    let ordinal = retries.saturating_add(1);
    let backoff_at_ms = add_ms(
        now_ms,
        jittered_backoff_ms(
            section.retry.initial_interval_ms,
            ordinal,
            section.retry.jitter_pct,
            jitter_seed,
        ),
    );
    let at_ms = match reset_at_ms {
        Some(reset_at_ms) if reset_at_ms > backoff_at_ms => {
            // The section's max_wait_s counts here even when reset_wait is disabled.
            let push_limit_ms = add_ms(
                now_ms,
                section.reset_wait.max_wait_ms().min(MAX_RETRY_PUSH_MS),
            );
            if reset_at_ms > push_limit_ms {
                return None;
            }
            reset_at_ms
        }
        _ => backoff_at_ms,
    };
    Some(Decision::Retry { ordinal, at_ms })
}

fn add_ms(time_ms: i64, duration_ms: u64) -> i64 {
    time_ms.saturating_add(i64::try_from(duration_ms).unwrap_or(i64::MAX))
}
