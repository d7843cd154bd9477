//! The editor's dry run: what a draft policy would have done with a candidate's
//! stored calls. The calls are played back in order as the provider's answers
//! (the first call the draft makes gets the first stored outcome, and so on),
//! each failure judged by [`crate::evaluate::evaluate_within`], the same code the
//! server runs, with times moved to where the draft's waits put them: a reset a
//! failure stated is kept as the same distance from that failure's end. Nothing
//! is sent anywhere.
//!
//! ```
//! use policy::replay::{StoredCall, ReplayEnd, replay};
//! use policy::{Classification, Confidence, PolicyDocument, SemanticCode};
//! let overloaded = Classification::new(SemanticCode::Overloaded, Confidence::High);
//! let calls = [
//!     StoredCall::failed(overloaded, None, 200),
//!     StoredCall::failed(overloaded, None, 200),
//!     StoredCall::answered(300),
//! ];
//! // The default policy retries a transient failure after 0.5 s, then 1 s.
//! let played = replay(&PolicyDocument::default(), &calls, true, 0);
//! assert_eq!(played.end, ReplayEnd::Answered);
//! assert_eq!(played.steps.len(), 3);
//! assert_eq!(played.elapsed_ms, 200 + 500 + 200 + 1_000 + 300);
//! ```

use serde::{Deserialize, Serialize};

use crate::classification::Classification;
use crate::document::PolicyDocument;
use crate::evaluate::{
    Decision, Effects, Episode, HoldCause, RouteTiming, StopCause, evaluate_within,
};

/// One stored call of a candidate, as the dry run plays it back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCall {
    /// How long it took, milliseconds.
    pub took_ms: i64,
    /// How it ended.
    pub outcome: StoredOutcome,
}

/// How a stored call ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum StoredOutcome {
    /// The turn was answered.
    Answered,
    /// It failed.
    Failed {
        /// As the catalogue classified it (its own reset, if any, is ignored:
        /// `reset_in_ms` places it).
        classification: Classification,
        /// The stated reset, as milliseconds after the call ended.
        reset_in_ms: Option<i64>,
        /// Output or a tool effect came before the failure.
        unsafe_effect: bool,
        /// A gateway call's deadline, as milliseconds after the call ended (as the
        /// engine judged the failure against it): no wait ending past it is taken.
        deadline_in_ms: Option<i64>,
    },
}

impl StoredCall {
    /// A call that answered after `took_ms`.
    pub fn answered(took_ms: i64) -> Self {
        Self {
            took_ms,
            outcome: StoredOutcome::Answered,
        }
    }

    /// A call that failed as `classification` says after `took_ms`, stating a
    /// reset `reset_in_ms` after its end.
    pub fn failed(classification: Classification, reset_in_ms: Option<i64>, took_ms: i64) -> Self {
        Self {
            took_ms,
            outcome: StoredOutcome::Failed {
                classification,
                reset_in_ms,
                unsafe_effect: false,
                deadline_in_ms: None,
            },
        }
    }
}

/// One call the draft makes, and what it decides after it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplayStep {
    /// When the call starts, milliseconds after the first one started.
    pub at_ms: i64,
    /// The stored call it plays back (its index).
    pub call: usize,
    /// What the draft decides on its failure; `None` when it answered.
    pub decision: Option<Decision>,
}

/// How the candidate's part ends under the draft.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ReplayEnd {
    /// A call answered.
    Answered,
    /// The draft moves to the next candidate.
    Skipped,
    /// The draft ends the route.
    Stopped(StopCause),
    /// The draft holds the route for a person.
    Held(HoldCause),
    /// The draft would call again, and nothing stored says how that call went.
    BeyondTheRecord,
}

/// What the draft would have done.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// Every call it makes, in order.
    pub steps: Vec<ReplayStep>,
    /// How it ends.
    pub end: ReplayEnd,
    /// From the first call's start to the end: the last call's end, or (beyond
    /// the record) the time of the call nothing says more of.
    pub elapsed_ms: i64,
}

/// What `policy` would have done with `calls` (a candidate's stored calls, in
/// order, in one episode), `has_next_candidate` saying whether a skip has
/// somewhere to go, its retries jittered by `jitter_seed` (the task's, as the
/// engine seeds it: [`crate::backoff::jitter_seed`] of its id).
///
/// A stated reset and a gateway call's deadline each keep their distance from
/// the end of the call they were judged after, wherever the draft's waits put
/// that call: the replay's clock counts only the calls and the draft's waits,
/// not the time a route spent held by another's circuit or a pause, so a
/// distance from the first call would leave the draft more time than the
/// engine had.
pub fn replay(
    policy: &PolicyDocument,
    calls: &[StoredCall],
    has_next_candidate: bool,
    jitter_seed: u64,
) -> Replay {
    let mut episode = Episode::default();
    let mut steps = Vec::new();
    let mut now_ms = 0_i64;
    for (index, call) in calls.iter().enumerate() {
        let start_ms = now_ms;
        let end_ms = start_ms.saturating_add(call.took_ms.max(0));
        let (classification, reset_in_ms, unsafe_effect, deadline_in_ms) = match &call.outcome {
            StoredOutcome::Answered => {
                steps.push(ReplayStep {
                    at_ms: start_ms,
                    call: index,
                    decision: None,
                });
                return Replay {
                    steps,
                    end: ReplayEnd::Answered,
                    elapsed_ms: end_ms,
                };
            }
            StoredOutcome::Failed {
                classification,
                reset_in_ms,
                unsafe_effect,
                deadline_in_ms,
            } => (classification, reset_in_ms, *unsafe_effect, deadline_in_ms),
        };
        let timing = RouteTiming {
            respond_by_ms: deadline_in_ms
                .map(|deadline_in_ms| end_ms.saturating_add(deadline_in_ms)),
            jitter_seed,
        };
        let mut judged = *classification;
        judged.reset_at_ms = reset_in_ms.map(|reset_in_ms| end_ms.saturating_add(reset_in_ms));
        let decision = evaluate_within(
            policy,
            &judged,
            &episode,
            Effects {
                partial_output: unsafe_effect,
                ambiguous_side_effect: false,
            },
            has_next_candidate,
            end_ms,
            timing,
        );
        episode.record(&decision, judged.code.class());
        steps.push(ReplayStep {
            at_ms: start_ms,
            call: index,
            decision: Some(decision),
        });
        now_ms = match decision {
            Decision::Retry { at_ms, .. } => at_ms,
            Decision::WaitForReset { until_ms } => until_ms,
            Decision::Skip => return ended(steps, ReplayEnd::Skipped, end_ms),
            Decision::Stop { cause } => return ended(steps, ReplayEnd::Stopped(cause), end_ms),
            Decision::Hold { cause } => return ended(steps, ReplayEnd::Held(cause), end_ms),
        };
    }
    ended(steps, ReplayEnd::BeyondTheRecord, now_ms)
}

fn ended(steps: Vec<ReplayStep>, end: ReplayEnd, elapsed_ms: i64) -> Replay {
    Replay {
        steps,
        end,
        elapsed_ms,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Confidence, OnExhausted, SemanticCode};

    fn limited() -> Classification {
        Classification::new(SemanticCode::RateLimited, Confidence::High)
    }

    #[test]
    fn a_stated_reset_keeps_its_distance_from_the_failure() {
        // Waits once for a reset 30 s after the failure's end, then answers.
        let calls = [
            StoredCall::failed(limited(), Some(30_000), 100),
            StoredCall::answered(100),
        ];
        let played = replay(&PolicyDocument::default(), &calls, true, 0);
        assert_eq!(
            played.steps[0].decision,
            Some(Decision::WaitForReset { until_ms: 30_100 })
        );
        assert_eq!(played.steps[1].at_ms, 30_100);
        assert_eq!(
            (played.end, played.elapsed_ms),
            (ReplayEnd::Answered, 30_200)
        );
    }

    #[test]
    fn a_draft_that_gives_up_sooner_skips_before_the_answer_and_one_that_tries_more_runs_past_the_record()
     {
        let calls = [
            StoredCall::failed(limited(), None, 100),
            StoredCall::failed(limited(), None, 100),
        ];
        let mut quick = PolicyDocument::default();
        quick.transient.retry.enabled = false;
        quick.transient.on_exhausted = OnExhausted::Skip;
        let played = replay(&quick, &calls, true, 0);
        assert_eq!((played.steps.len(), played.end), (1, ReplayEnd::Skipped));
        assert_eq!(played.elapsed_ms, 100);
        let played = replay(&quick, &calls, false, 0);
        assert_eq!(played.end, ReplayEnd::Stopped(StopCause::Exhausted));
        // The default retries twice: a third call nothing stored answers.
        let played = replay(&PolicyDocument::default(), &calls, true, 0);
        assert_eq!(played.end, ReplayEnd::BeyondTheRecord);
        assert_eq!(played.elapsed_ms, 100 + 500 + 100 + 1_000);
    }

    #[test]
    fn a_wait_past_a_gateway_calls_deadline_is_not_taken() {
        // A reset 30 s after the failure; the caller's deadline 10 s after it.
        let with_deadline = |deadline_in_ms| StoredCall {
            took_ms: 100,
            outcome: StoredOutcome::Failed {
                classification: limited(),
                reset_in_ms: Some(30_000),
                unsafe_effect: false,
                deadline_in_ms,
            },
        };
        let mut skips = PolicyDocument::default();
        skips.transient.on_exhausted = OnExhausted::Skip;
        let calls = [with_deadline(Some(10_000)), StoredCall::answered(100)];
        let played = replay(&skips, &calls, true, 0);
        assert_eq!(
            (played.steps.len(), played.end, played.elapsed_ms),
            (1, ReplayEnd::Skipped, 100)
        );
        // A deadline past the reset lets the same draft wait for it and answer.
        let calls = [with_deadline(Some(40_000)), StoredCall::answered(100)];
        let played = replay(&skips, &calls, true, 0);
        assert_eq!(played.end, ReplayEnd::Answered);
    }

    #[test]
    fn a_deadline_keeps_its_distance_from_the_call_it_was_judged_after() {
        // Overloaded, retried after 0.5 s; the retry came 9 s late (held by a
        // circuit), 0.4 s before the caller's deadline, so the engine did not
        // retry again after 1 s. The draft is judged the same, wherever its own
        // clock puts the second call.
        let overloaded = Classification::new(SemanticCode::Overloaded, Confidence::High);
        let failed = |deadline_in_ms| StoredCall {
            took_ms: 100,
            outcome: StoredOutcome::Failed {
                classification: overloaded,
                reset_in_ms: None,
                unsafe_effect: false,
                deadline_in_ms: Some(deadline_in_ms),
            },
        };
        let calls = [failed(9_900), failed(400), StoredCall::answered(100)];
        let played = replay(&PolicyDocument::default(), &calls, true, 0);
        assert_eq!(played.steps.len(), 2);
        assert_eq!(played.end, ReplayEnd::Skipped);
    }

    #[test]
    fn an_unsafe_failure_is_held_whatever_the_draft() {
        let calls = [StoredCall {
            took_ms: 10,
            outcome: StoredOutcome::Failed {
                classification: limited(),
                reset_in_ms: None,
                unsafe_effect: true,
                deadline_in_ms: None,
            },
        }];
        let played = replay(&PolicyDocument::default(), &calls, true, 0);
        assert_eq!(played.end, ReplayEnd::Held(HoldCause::UnsafeEffect));
    }
}
