//! The SPEC 4 evaluation table: one row per decision path, ordered by step, with rows
//! where two steps could apply proving which comes first.

use SemanticCode::*;
use policy::{
    Classification, Confidence, Decision, Effects, Episode, HoldCause, PolicyDocument, RetryCounts,
    SemanticCode, StopCause, evaluate,
    evaluate::{RouteTiming, evaluate_within},
    jitter_band_ms,
};

const NOW: i64 = 1_796_000_000_000;
const SECOND: i64 = 1_000;

/// One row: its name, the policy, the verdict, the episode, the effects, whether a next
/// candidate exists, and the expected decision.
struct Row {
    name: &'static str,
    policy: PolicyDocument,
    classification: Classification,
    episode: Episode,
    effects: Effects,
    has_next_candidate: bool,
    now_ms: i64,
    /// The caller's deadline (a gateway call's), if any.
    respond_by_ms: Option<i64>,
    expected: Decision,
}

fn high(code: SemanticCode) -> Classification {
    Classification::new(code, Confidence::High)
}

fn low(code: SemanticCode) -> Classification {
    Classification::new(code, Confidence::Low)
}

fn row(name: &'static str, classification: Classification, expected: Decision) -> Row {
    Row {
        name,
        policy: PolicyDocument::default(),
        classification,
        episode: Episode::default(),
        effects: Effects::default(),
        has_next_candidate: true,
        now_ms: NOW,
        respond_by_ms: None,
        expected,
    }
}

impl Row {
    fn policy(mut self, change: impl FnOnce(&mut PolicyDocument)) -> Self {
        change(&mut self.policy);
        self
    }
    fn retries(mut self, transient: u32, hard: u32) -> Self {
        self.episode.retries = RetryCounts { transient, hard };
        self
    }
    fn waited(mut self) -> Self {
        self.episode.waited_for_reset = true;
        self
    }
    fn effects(mut self, partial_output: bool, ambiguous_side_effect: bool) -> Self {
        self.effects = Effects {
            partial_output,
            ambiguous_side_effect,
        };
        self
    }
    fn at(mut self, now_ms: i64) -> Self {
        self.now_ms = now_ms;
        self
    }
    fn last_candidate(mut self) -> Self {
        self.has_next_candidate = false;
        self
    }
    fn respond_by(mut self, respond_by_ms: i64) -> Self {
        self.respond_by_ms = Some(respond_by_ms);
        self
    }
}

/// The hard section with retry enabled (and, by default, reset wait disabled).
fn hard_retry(policy: &mut PolicyDocument) {
    policy.hard.retry.enabled = true;
}

const UNSAFE: Decision = Decision::Hold {
    cause: HoldCause::UnsafeEffect,
};
const UNRECOGNIZED: Decision = Decision::Hold {
    cause: HoldCause::Unrecognized,
};
const UNRECOVERABLE: Decision = Decision::Stop {
    cause: StopCause::Unrecoverable,
};
const EXHAUSTED: Decision = Decision::Stop {
    cause: StopCause::Exhausted,
};

fn wait(until_ms: i64) -> Decision {
    Decision::WaitForReset { until_ms }
}

fn retry(ordinal: u32, at_ms: i64) -> Decision {
    Decision::Retry { ordinal, at_ms }
}

fn table() -> Vec<Row> {
    vec![
        // Step 1: unsafe effects hold, before anything else.
        row(
            "1: partial output holds, even for an unknown low-confidence code",
            low(Unknown),
            UNSAFE,
        )
        .effects(true, false),
        row(
            "1: an ambiguous side effect holds, even with a reset wait available",
            high(RateLimited).with_reset_at(NOW + 10 * SECOND),
            UNSAFE,
        )
        .effects(false, true),
        row(
            "1: an unsafe outside code holds rather than stops",
            high(InvalidRequest),
            UNSAFE,
        )
        .effects(true, true),
        // Step 2: unrecognized holds; other outside codes stop.
        row("2: unknown holds", high(Unknown), UNRECOGNIZED),
        row(
            "2: low confidence holds, before a reset wait (step 3)",
            low(RateLimited).with_reset_at(NOW + 10 * SECOND),
            UNRECOGNIZED,
        ),
        row(
            "2: low confidence holds, before a retry (step 4)",
            low(ServerError),
            UNRECOGNIZED,
        ),
        row(
            "2: low confidence on an outside code holds rather than stops",
            low(InvalidRequest),
            UNRECOGNIZED,
        ),
        row(
            "2: invalid_request stops",
            high(InvalidRequest),
            UNRECOVERABLE,
        ),
        row(
            "2: context_length_exceeded stops",
            high(ContextLengthExceeded),
            UNRECOVERABLE,
        ),
        row(
            "2: content_filtered stops",
            high(ContentFiltered),
            UNRECOVERABLE,
        ),
        row(
            "2: cancelled stops, even with a hint and a next candidate",
            high(Cancelled).with_reset_at(NOW + SECOND),
            UNRECOVERABLE,
        ),
        // Step 3: one reset wait per episode, within max_wait_s.
        row(
            "3: a reset in 30 s waits, before a retry (step 4)",
            high(RateLimited).with_reset_at(NOW + 30 * SECOND),
            wait(NOW + 30 * SECOND),
        ),
        row(
            "3: a reset exactly at now + max_wait_s waits",
            high(Overloaded).with_retry_after(NOW, 60_000),
            wait(NOW + 60 * SECOND),
        ),
        row(
            "3: a hard reset within its max_wait_s waits when enabled",
            high(UsageLimited).with_reset_at(NOW + 3_600 * SECOND),
            wait(NOW + 3_600 * SECOND),
        )
        .policy(|policy| policy.hard.reset_wait.enabled = true),
        row(
            "3: a wait is not counted against retries",
            high(RateLimited).with_reset_at(NOW + SECOND),
            wait(NOW + SECOND),
        )
        .retries(2, 0),
        // Step 3 does not apply; step 4 retries.
        row(
            "4: no hint retries after the first backoff",
            high(Overloaded),
            retry(1, NOW + 500),
        ),
        row(
            "4: the second retry doubles the backoff",
            high(ServerError),
            retry(2, NOW + 1_000),
        )
        .retries(1, 0),
        row(
            "4: a reset at now is not after now: no wait, plain retry",
            high(RateLimited).with_reset_at(NOW),
            retry(1, NOW + 500),
        ),
        row(
            "4: a past reset is ignored",
            high(RateLimited).with_reset_at(NOW - 5 * SECOND),
            retry(1, NOW + 500),
        ),
        row(
            "4: after this episode's wait, the retry fires at the reset",
            high(RateLimited).with_reset_at(NOW + 30 * SECOND),
            retry(1, NOW + 30 * SECOND),
        )
        .waited(),
        row(
            "4: a reset before the backoff does not delay the retry",
            high(RateLimited).with_reset_at(NOW + 200),
            retry(1, NOW + 500),
        )
        .waited(),
        row(
            "4: reset wait disabled, the retry still waits for the reset",
            high(RateLimited).with_reset_at(NOW + 30 * SECOND),
            retry(1, NOW + 30 * SECOND),
        )
        .policy(|policy| policy.transient.reset_wait.enabled = false),
        row(
            "4: hard retry fires at a reset within max_wait_s though reset wait is disabled",
            high(QuotaExhausted).with_reset_at(NOW + 1_200 * SECOND),
            retry(1, NOW + 1_200 * SECOND),
        )
        .policy(hard_retry),
        row(
            "4: a reset exactly one hour ahead is still worth a retry",
            high(QuotaExhausted).with_reset_at(NOW + 3_600 * SECOND),
            retry(1, NOW + 3_600 * SECOND),
        )
        .policy(|policy| {
            hard_retry(policy);
            policy.hard.reset_wait.max_wait_s = 7_200;
        }),
        row(
            "4: retries count per class: transient used up, hard has its own",
            high(AuthFailed),
            retry(1, NOW + 500),
        )
        .retries(2, 0)
        .policy(hard_retry),
        row(
            "4: hard retries use the hard section's interval",
            high(AuthFailed),
            retry(2, NOW + 2_000),
        )
        .retries(0, 1)
        .policy(|policy| {
            hard_retry(policy);
            policy.hard.retry.initial_interval_ms = 1_000;
        }),
        // Step 4 does not apply; step 5 takes on_exhausted.
        row(
            "5: a reset beyond max_wait_s makes the retry pointless: skip",
            high(RateLimited).with_reset_at(NOW + 60 * SECOND + 1),
            Decision::Skip,
        ),
        row(
            "5: past one hour a retry is pointless even if max_wait_s allows more",
            high(QuotaExhausted).with_reset_at(NOW + 3_600 * SECOND + 1),
            Decision::Skip,
        )
        .policy(|policy| {
            hard_retry(policy);
            policy.hard.reset_wait.max_wait_s = 7_200;
        }),
        row(
            "5: max_wait_s below the reset makes the retry pointless",
            high(RateLimited).with_reset_at(NOW + 2 * SECOND),
            Decision::Skip,
        )
        .waited()
        .policy(|policy| policy.transient.reset_wait.max_wait_s = 1),
        row(
            "5: second reset in an episode, beyond max_wait_s: skip",
            high(RateLimited).with_reset_at(NOW + 90 * SECOND),
            Decision::Skip,
        )
        .waited(),
        row("5: retries used up skip", high(Timeout), Decision::Skip).retries(2, 0),
        row(
            "5: retries used up, no next candidate: stop(exhausted)",
            high(Network),
            EXHAUSTED,
        )
        .retries(2, 0)
        .last_candidate(),
        row(
            "5: on_exhausted stop stops even with a next candidate",
            high(Network),
            EXHAUSTED,
        )
        .retries(2, 0)
        .policy(|policy| policy.transient.on_exhausted = policy::OnExhausted::Stop),
        row(
            "5: hard defaults (nothing enabled) skip, hint or not",
            high(UsageLimited).with_reset_at(NOW + 60 * SECOND),
            Decision::Skip,
        ),
        row(
            "5: hard defaults on the last candidate stop",
            high(ModelUnavailable),
            EXHAUSTED,
        )
        .last_candidate(),
        row(
            "5: transient retry disabled skips",
            high(Overloaded),
            Decision::Skip,
        )
        .policy(|policy| policy.transient.retry.enabled = false),
        // A caller waiting until a deadline (a gateway call): no wait ends after it.
        row(
            "1: unsafe effects hold whatever the caller's deadline",
            high(Overloaded),
            Decision::Hold {
                cause: HoldCause::UnsafeEffect,
            },
        )
        .effects(true, false)
        .respond_by(NOW),
        row(
            "3: a reset at the caller's deadline is waited for",
            high(RateLimited).with_reset_at(NOW + 30 * SECOND),
            wait(NOW + 30 * SECOND),
        )
        .respond_by(NOW + 30 * SECOND),
        row(
            "3 before 4: a reset past the caller's deadline is neither waited for nor retried at: skip",
            high(RateLimited).with_reset_at(NOW + 30 * SECOND),
            Decision::Skip,
        )
        .respond_by(NOW + 30 * SECOND - 1),
        row(
            "4: a retry due by the caller's deadline is taken",
            high(Overloaded),
            retry(1, NOW + 500),
        )
        .respond_by(NOW + 500),
        row(
            "4: a retry due after the caller's deadline is not: skip",
            high(Overloaded),
            Decision::Skip,
        )
        .respond_by(NOW + 499),
        row(
            "4: past the caller's deadline on the last candidate: stop(exhausted)",
            high(Overloaded),
            EXHAUSTED,
        )
        .respond_by(NOW + 499)
        .last_candidate(),
        row(
            "4: past the caller's deadline with on_exhausted stop: stop(exhausted)",
            high(Timeout),
            EXHAUSTED,
        )
        .respond_by(NOW)
        .policy(|policy| policy.transient.on_exhausted = policy::OnExhausted::Stop),
        // Saturation: no overflow near the end of time.
        row(
            "4: times saturate instead of overflowing",
            high(Overloaded),
            retry(1, i64::MAX),
        )
        .at(i64::MAX - 10),
    ]
}

#[test]
fn decision_table() {
    for row in table() {
        let decision = evaluate_within(
            &row.policy,
            &row.classification,
            &row.episode,
            row.effects,
            row.has_next_candidate,
            row.now_ms,
            RouteTiming {
                respond_by_ms: row.respond_by_ms,
                jitter_seed: 0,
            },
        );
        assert_eq!(decision, row.expected, "{}", row.name);
        if row.respond_by_ms.is_none() {
            let without = evaluate(
                &row.policy,
                &row.classification,
                &row.episode,
                row.effects,
                row.has_next_candidate,
                row.now_ms,
            );
            assert_eq!(without, row.expected, "{} (evaluate)", row.name);
        }
    }
}

#[test]
fn the_table_covers_every_decision_and_cause() {
    let covered: std::collections::BTreeSet<&str> =
        table().iter().map(|row| label(&row.expected)).collect();
    let all = [
        "hold(unrecognized)",
        "hold(unsafe_effect)",
        "retry",
        "skip",
        "stop(exhausted)",
        "stop(unrecoverable)",
        "wait_for_reset",
    ];
    assert_eq!(covered.into_iter().collect::<Vec<_>>(), all);
}

fn label(decision: &Decision) -> &'static str {
    match decision {
        Decision::WaitForReset { .. } => "wait_for_reset",
        Decision::Retry { .. } => "retry",
        Decision::Skip => "skip",
        Decision::Stop {
            cause: StopCause::Unrecoverable,
        } => "stop(unrecoverable)",
        Decision::Stop {
            cause: StopCause::Exhausted,
        } => "stop(exhausted)",
        Decision::Hold {
            cause: HoldCause::UnsafeEffect,
        } => "hold(unsafe_effect)",
        Decision::Hold {
            cause: HoldCause::Unrecognized,
        } => "hold(unrecognized)",
    }
}

#[test]
fn an_episode_walks_wait_then_retries_then_skip() {
    let policy = PolicyDocument::default();
    let verdict = high(RateLimited).with_reset_at(NOW + 20 * SECOND);
    let mut episode = Episode::default();
    let mut decisions = Vec::new();
    for _ in 0..4 {
        let decision = evaluate(&policy, &verdict, &episode, Effects::default(), true, NOW);
        episode.record(&decision, verdict.class);
        decisions.push(decision);
    }
    // One wait, then two retries held back to the reset, then the skip.
    assert_eq!(
        decisions,
        [
            wait(NOW + 20 * SECOND),
            retry(1, NOW + 20 * SECOND),
            retry(2, NOW + 20 * SECOND),
            Decision::Skip
        ]
    );
    assert_eq!(
        episode,
        Episode {
            retries: RetryCounts {
                transient: 2,
                hard: 0
            },
            waited_for_reset: true
        }
    );
}

#[test]
fn decisions_serialize_as_tagged_objects() {
    let table = [
        (
            wait(5),
            serde_json::json!({"decision": "wait_for_reset", "until_ms": 5}),
        ),
        (
            retry(2, 7),
            serde_json::json!({"decision": "retry", "ordinal": 2, "at_ms": 7}),
        ),
        (Decision::Skip, serde_json::json!({"decision": "skip"})),
        (
            UNRECOVERABLE,
            serde_json::json!({"decision": "stop", "cause": "unrecoverable"}),
        ),
        (
            UNSAFE,
            serde_json::json!({"decision": "hold", "cause": "unsafe_effect"}),
        ),
    ];
    for (decision, json) in table {
        assert_eq!(serde_json::to_value(decision).unwrap(), json);
        assert_eq!(serde_json::from_value::<Decision>(json).unwrap(), decision);
    }
}

/// The retry of task `task_id` after one transient failure at `NOW`, with `jitter_pct`
/// percent of jitter and `retries` retries already made.
fn jittered_retry(task_id: &str, jitter_pct: u32, retries: u32) -> Decision {
    let mut policy = PolicyDocument::default();
    policy.transient.retry.max_retries = 10;
    policy.transient.retry.jitter_pct = jitter_pct;
    let episode = Episode {
        retries: RetryCounts {
            transient: retries,
            hard: 0,
        },
        waited_for_reset: false,
    };
    evaluate_within(
        &policy,
        &high(Overloaded),
        &episode,
        Effects::default(),
        true,
        NOW,
        RouteTiming::for_task(task_id, None),
    )
}

fn retry_at(decision: Decision) -> i64 {
    match decision {
        Decision::Retry { at_ms, .. } => at_ms,
        other => panic!("expected a retry, got {other:?}"),
    }
}

#[test]
fn a_jittered_retry_lands_in_its_band_the_same_for_the_same_task() {
    let ids: Vec<String> = (0..20)
        .map(|n| format!("0190f1d2-7a5b-7c3e-9d4f-{n:012}"))
        .collect();
    for retries in 0..4 {
        let ordinal = retries + 1;
        let (earliest_ms, latest_ms) = jitter_band_ms(500, ordinal, 50);
        let band = NOW + earliest_ms as i64..=NOW + latest_ms as i64;
        let deadlines: Vec<i64> = ids
            .iter()
            .map(|id| retry_at(jittered_retry(id, 50, retries)))
            .collect();
        for (id, at_ms) in ids.iter().zip(&deadlines) {
            assert!(
                band.contains(at_ms),
                "{id}, retry {ordinal}: {at_ms} outside {band:?}"
            );
            assert_eq!(
                retry_at(jittered_retry(id, 50, retries)),
                *at_ms,
                "{id}, retry {ordinal}: the same task and ordinal give the same deadline"
            );
        }
        let mut distinct = deadlines.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert!(
            distinct.len() >= 15,
            "retry {ordinal}: different tasks spread across the band: {deadlines:?}"
        );
    }
}

#[test]
fn no_jitter_is_the_exact_backoff_whatever_the_task() {
    for id in ["a", "b", "0190f1d2-7a5b-7c3e-9d4f-1a2b3c4d5e6f"] {
        assert_eq!(jittered_retry(id, 0, 0), retry(1, NOW + 500));
        assert_eq!(jittered_retry(id, 0, 2), retry(3, NOW + 2_000));
    }
}

#[test]
fn a_reset_hint_still_pushes_a_jittered_retry_back() {
    let mut policy = PolicyDocument::default();
    policy.transient.retry.jitter_pct = 50;
    policy.transient.reset_wait.enabled = false;
    let verdict = high(RateLimited).with_reset_at(NOW + 30 * SECOND);
    let decision = evaluate_within(
        &policy,
        &verdict,
        &Episode::default(),
        Effects::default(),
        true,
        NOW,
        RouteTiming::for_task("task", None),
    );
    assert_eq!(decision, retry(1, NOW + 30 * SECOND));
}
