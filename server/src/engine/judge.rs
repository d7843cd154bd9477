//! Judging, pure: what a call's outcome does to its route (the event, and what the
//! commit writes beside it: the attempt's end, the turn's answer, a circuit), and
//! what a route due to send does about an open circuit over its candidate. The
//! catalogue classifies, `policy::evaluate` decides, `policy::circuit` says what
//! opens; `now` comes in. Metrics, logs and the commit are the caller's.

use api::Timestamp;
use policy::circuit::{CircuitScope, Gate, gate_within, opens};
use policy::evaluate::{RouteTiming, evaluate_within, exhausted};
use policy::route::{Failure, RouteEvent};
use policy::{Class, Effects, OnExhausted, PolicySection, SemanticCode};
use providers::{CallOutcome, StopReason};

use super::commit::Changes;
use crate::domain::{
    Attempt, AttemptEnd, AttemptOutcome, Circuit, CircuitChange, CircuitKey, CompletedTurn,
    Producer, RouteRecord, Task, Verdict,
};

/// A call's outcome, judged.
#[derive(Debug)]
pub(super) struct Judged {
    /// The route's event.
    pub(super) event: RouteEvent,
    /// What the commit writes beside the route.
    pub(super) changes: Changes,
    /// How the attempt is counted: its outcome, class and code.
    pub(super) counted: [&'static str; 3],
}

/// What the outcome of `attempt`, started on `started`, does: an answer completes
/// the turn (or, stopped at its token budget with an escalation left, sends the
/// turn again with a larger one) and closes the circuits over its candidate; a
/// failure is classified, evaluated by the candidate's policy with the episode's
/// counts and the attempt's effects, and may open a circuit (or, failing as a
/// probe without reopening one, release it).
pub(super) fn judge(
    task: &Task,
    started: &RouteRecord,
    attempt: &Attempt,
    outcome: CallOutcome,
    now: Timestamp,
) -> Judged {
    let now_ms = now.as_millis();
    let route = &started.route;
    let candidate = &task.candidates[route.candidate];
    let ended =
        |outcome: AttemptOutcome| Some((attempt.id.clone(), AttemptEnd::bare(outcome, now)));
    let close = Some(CircuitChange::Close {
        provider_id: candidate.provider_id.clone(),
        model: candidate.model.clone(),
    });
    match outcome {
        CallOutcome::Answered {
            text,
            stop,
            tool_calls,
        } => {
            let truncated = matches!(stop, StopReason::MaxTokens);
            // A gateway client set its own budget: its answer ends where it said.
            let escalation = (truncated && task.gateway.is_none())
                .then(|| {
                    candidate
                        .escalation
                        .next_budget(attempt.max_tokens, route.escalations)
                })
                .flatten();
            let counted = ["answered", "none", "none"];
            match escalation {
                Some(max_tokens) => Judged {
                    event: RouteEvent::Escalated { max_tokens },
                    changes: Changes {
                        finish_attempt: ended(AttemptOutcome::Escalated),
                        circuit: close,
                        ..Changes::default()
                    },
                    counted,
                },
                None => Judged {
                    event: RouteEvent::Succeeded,
                    changes: Changes {
                        finish_attempt: ended(if truncated {
                            AttemptOutcome::Truncated
                        } else {
                            AttemptOutcome::Answered
                        }),
                        complete_turn: Some(CompletedTurn {
                            number: route.turn,
                            answer: text,
                            truncated,
                            tool_calls,
                            producer: Producer {
                                candidate_index: route.candidate,
                                candidate_id: candidate.id.clone(),
                                model: candidate.model.clone(),
                            },
                        }),
                        circuit: close,
                        ..Changes::default()
                    },
                    counted,
                },
            }
        }
        CallOutcome::Failed {
            mut evidence,
            partial_output,
        } => {
            evidence.observed_at_ms.get_or_insert(now_ms);
            let verdict = catalogue::classify(&evidence, now_ms);
            let classification = verdict.classification;
            let class = classification.code.class();
            // Output that reached someone makes a repeat unsafe: a task's is
            // stored, a streaming gateway client's was sent on as it came; a
            // gateway client that waits for the whole answer saw none of it.
            let delivered = task.gateway.as_ref().is_none_or(|call| call.stream);
            let decision = evaluate_within(
                &candidate.policy,
                &classification,
                &route.episode,
                Effects {
                    partial_output: delivered && !partial_output.is_empty(),
                    ambiguous_side_effect: false,
                },
                task.next_enabled_after(route.candidate).is_some(),
                now_ms,
                // The task id seeds the retries' jitter: the same route gets the
                // same offsets however often its failures are judged.
                RouteTiming::for_task(task.id.as_str(), task.respond_by_ms()),
            );
            let circuit = match opens(&classification, now_ms) {
                Some(opening) => Some(CircuitChange::Open {
                    key: CircuitKey {
                        provider_id: candidate.provider_id.clone(),
                        model: (opening.scope == CircuitScope::Model)
                            .then(|| candidate.model.clone()),
                    },
                    code: classification.code,
                    until_ms: opening.until_ms,
                }),
                None if attempt.probe => Some(CircuitChange::Release {
                    provider_id: candidate.provider_id.clone(),
                    model: candidate.model.clone(),
                }),
                None => None,
            };
            let failure = Failure {
                class,
                code: classification.code,
                catalogue: verdict.catalogue.to_owned(),
                safe_cause: verdict.safe_cause.clone(),
            };
            let end = AttemptEnd {
                finished_at: now,
                outcome: AttemptOutcome::Failed,
                verdict: Some(Verdict {
                    class,
                    code: classification.code,
                    confidence: classification.confidence,
                    catalogue: verdict.catalogue.to_owned(),
                    rule: verdict.rule.to_owned(),
                    safe_cause: verdict.safe_cause,
                    reset_at_ms: classification.reset_at_ms,
                }),
                decision: Some(decision),
                evidence: Some(evidence_json(&evidence)),
            };
            Judged {
                event: RouteEvent::Failed {
                    decision,
                    failure,
                    on_exhausted: candidate
                        .policy
                        .section(class)
                        .map(|section| section.on_exhausted),
                },
                changes: Changes {
                    finish_attempt: Some((attempt.id.clone(), end)),
                    circuit,
                    ..Changes::default()
                },
                counted: ["failed", class.as_str(), classification.code.as_str()],
            }
        }
    }
}

/// What a route due to send does while its candidate's circuit `open` is open
/// (`provider` names the candidate's provider for people): wait for its reset
/// when that is within the candidate's own `max_wait_s` for the circuit's class
/// (and the caller's deadline), else take the exhausted outcome at once, without
/// a call. `None`: send (a person's retry now goes through as the probe). The
/// route shows why, in a sentence naming the provider, the reset and the wait.
pub(super) fn at_open_circuit(
    task: &Task,
    record: &RouteRecord,
    open: &Circuit,
    provider: &str,
    now_ms: i64,
) -> Option<RouteEvent> {
    let route = &record.route;
    let candidate = &task.candidates[route.candidate];
    let class = open.code.class();
    let section = candidate
        .policy
        .section(class)
        .copied()
        .unwrap_or_else(PolicySection::hard_default);
    let failure = |safe_cause: String| Failure {
        class,
        code: open.code,
        catalogue: catalogue::CATALOGUE_VERSION.to_owned(),
        safe_cause,
    };
    let reset = circuit_reset_words(open, provider, now_ms);
    let max_wait = policy::format_duration_ms(section.reset_wait.max_wait_ms());
    let on_exhausted = section.on_exhausted;
    match gate_within(
        Some(open.until_ms),
        &section,
        route.through_circuit,
        now_ms,
        task.respond_by_ms(),
    ) {
        Gate::Wait { until_ms } => Some(RouteEvent::CircuitOpen {
            until_ms,
            failure: failure(format!(
                "Waiting: {reset}, within this candidate's {max_wait} wait."
            )),
            on_exhausted,
        }),
        Gate::Exhausted => {
            let within_wait = u64::try_from(open.until_ms.saturating_sub(now_ms))
                .is_ok_and(|wait_ms| wait_ms <= section.reset_wait.max_wait_ms());
            let past = match task.respond_by_ms() {
                Some(by_ms) if within_wait => format!(
                    "after this call's deadline ({})",
                    Timestamp::from_millis(by_ms)
                ),
                _ => format!("past this candidate's {max_wait} wait"),
            };
            Some(RouteEvent::NotSent {
                decision: exhausted(&section, task.next_enabled_after(route.candidate).is_some()),
                failure: failure(format!("Not sent: {reset}, {past}.")),
                on_exhausted,
            })
        }
        Gate::Send => None,
    }
}

/// What stands in the way and when it goes, for people: "Claude Code's usage
/// window resets in 3 h (2026-12-07T08:00:00.000Z)". The time left is rounded
/// up to the minute past an hour and to the second below.
fn circuit_reset_words(open: &Circuit, provider: &str, now_ms: i64) -> String {
    let model = open.key.model.as_deref().unwrap_or_default();
    let what = match open.code {
        SemanticCode::UsageLimited => format!("{provider}'s usage window resets"),
        SemanticCode::QuotaExhausted => format!("{provider}'s quota resets"),
        SemanticCode::InsufficientCredits => {
            format!("{provider}'s circuit (out of credits) half-opens")
        }
        SemanticCode::RateLimited => format!("{provider}'s rate limit on {model} resets"),
        SemanticCode::Overloaded => {
            format!("{provider}'s circuit on {model} (overloaded) half-opens")
        }
        _ => format!("{provider}'s circuit half-opens"),
    };
    let left_ms = u64::try_from(open.until_ms.saturating_sub(now_ms)).unwrap_or(0);
    let unit_ms = if left_ms > 3_600_000 { 60_000 } else { 1_000 };
    format!(
        "{what} in {} ({})",
        policy::format_duration_ms(left_ms.div_ceil(unit_ms) * unit_ms),
        Timestamp::from_millis(open.until_ms)
    )
}

/// What a route due to send does when its candidate cannot carry the gateway
/// client's request (`unsupported` names the field): nothing is sent, and it
/// skips to the next candidate, or stops when none is left. A fact about the
/// request, not a provider's failure: no retry or wait could change it.
pub(super) fn not_carried(
    task: &Task,
    record: &RouteRecord,
    unsupported: &providers::Unsupported,
) -> RouteEvent {
    let section = PolicySection::hard_default();
    let on_exhausted = OnExhausted::Skip;
    RouteEvent::NotSent {
        decision: exhausted(
            &PolicySection {
                on_exhausted,
                ..section
            },
            task.next_enabled_after(record.route.candidate).is_some(),
        ),
        failure: Failure {
            class: Class::Hard,
            code: SemanticCode::InvalidRequest,
            catalogue: catalogue::CATALOGUE_VERSION.to_owned(),
            safe_cause: format!(
                "Not sent: this candidate cannot carry the request: {unsupported}."
            ),
        },
        on_exhausted,
    }
}

/// Evidence as SPEC 2.1 JSON, for the attempt's record: what the adapter saw (it
/// never puts the key in), less cookies and credentials, secrets redacted.
pub(crate) fn evidence_json(evidence: &catalogue::Evidence) -> serde_json::Value {
    // Cookies and credentials are never kept; every other value, and the body, with
    // what looks like a secret redacted.
    let headers: serde_json::Map<String, serde_json::Value> = evidence
        .headers
        .iter()
        .filter(|(name, _)| {
            !matches!(
                *name,
                "set-cookie" | "cookie" | "authorization" | "proxy-authorization" | "x-api-key"
            )
        })
        .map(|(name, value)| {
            (
                name.to_owned(),
                serde_json::Value::from(catalogue::redact_secrets(value)),
            )
        })
        .collect();
    let mut object = serde_json::Map::new();
    object.insert("provider".into(), evidence.provider.clone().into());
    if let Some(status) = evidence.status {
        object.insert("status".into(), status.into());
    }
    if !headers.is_empty() {
        object.insert("headers".into(), headers.into());
    }
    if let Some(body) = &evidence.body {
        object.insert("body".into(), catalogue::redact_secrets(body).into());
    }
    if let Some(output) = &evidence.output {
        object.insert("output".into(), catalogue::redact_secrets(output).into());
    }
    if let Some(transport) = &evidence.transport {
        object.insert("transport".into(), transport.as_str().into());
    }
    if let Some(observed_at_ms) = evidence.observed_at_ms {
        object.insert(
            "observed_at".into(),
            Timestamp::from_millis(observed_at_ms).to_string().into(),
        );
    }
    object.into()
}

#[cfg(test)]
mod tests {
    use api::{AttemptId, CandidateId, ProfileId, ProviderId, TaskId};
    use catalogue::{Evidence, Transport};
    use policy::route::Route;
    use policy::{
        Decision, EscalationSettings, HoldCause, OnExhausted, PolicyDocument, SemanticCode,
        StopCause,
    };

    use super::*;
    use crate::domain::{Candidate, CircuitKey};

    const NOW_MS: i64 = 1_796_004_000_000;

    fn candidate(index: usize, enabled: bool) -> Candidate {
        Candidate {
            id: CandidateId::new(format!("c{index}")),
            provider_id: ProviderId::new(format!("p{index}")),
            model: format!("model-{index}"),
            enabled,
            max_tokens: 1_024,
            escalation: EscalationSettings::default(),
            policy: PolicyDocument::default(),
        }
    }

    /// A task of two candidates, the second one enabled when `next` is.
    fn task(next: bool) -> Task {
        Task {
            id: TaskId::new("t"),
            profile_id: ProfileId::new("p"),
            profile_name: "profile".to_owned(),
            candidates: vec![candidate(0, true), candidate(1, next)],
            created_at: Timestamp::from_millis(NOW_MS - 60_000),
            gateway: None,
        }
    }

    fn running(escalations: u32) -> RouteRecord {
        RouteRecord {
            task_id: TaskId::new("t"),
            route: Route {
                state: policy::route::RouteState::Running,
                generation: 3,
                turn: 2,
                escalations,
                new_episode: false,
                ..Route::new(0)
            },
            updated_at: Timestamp::from_millis(NOW_MS - 1_000),
        }
    }

    fn attempt(probe: bool) -> Attempt {
        Attempt {
            id: AttemptId::new("a"),
            task_id: TaskId::new("t"),
            seq: 1,
            turn: 2,
            generation: 3,
            candidate_index: 0,
            candidate_id: CandidateId::new("c0"),
            provider_id: ProviderId::new("p0"),
            model: "model-0".to_owned(),
            ordinal: None,
            max_tokens: 1_024,
            probe,
            after_circuit_wait: false,
            started_at: Timestamp::from_millis(NOW_MS - 1_000),
            end: None,
        }
    }

    fn answered(stop: StopReason) -> CallOutcome {
        CallOutcome::Answered {
            text: "the answer".to_owned(),
            stop,
            tool_calls: Vec::new(),
        }
    }

    fn failed(evidence: Evidence, partial_output: &str) -> CallOutcome {
        CallOutcome::Failed {
            evidence,
            partial_output: partial_output.to_owned(),
        }
    }

    fn anthropic(status: u16, error_type: &str) -> Evidence {
        Evidence::new("anthropic")
            .with_status(status)
            .with_body(&format!(
                r#"{{"type":"error","error":{{"type":"{error_type}","message":"{error_type}"}}}}"#
            ))
    }

    /// What a judgement comes to, in the terms the table states.
    #[derive(Debug, PartialEq, Eq)]
    struct Summary {
        event: &'static str,
        decision: Option<Decision>,
        code: Option<SemanticCode>,
        on_exhausted: Option<Option<OnExhausted>>,
        max_tokens: Option<u32>,
        ended: AttemptOutcome,
        /// The turn answered, and whether it was cut at its budget.
        turn: Option<(u32, bool)>,
        circuit: Option<&'static str>,
        counted: [&'static str; 3],
    }

    fn summary(judged: &Judged) -> Summary {
        let (code, on_exhausted, max_tokens) = match &judged.event {
            RouteEvent::Failed {
                failure,
                on_exhausted,
                ..
            } => (Some(failure.code), Some(*on_exhausted), None),
            RouteEvent::Escalated { max_tokens } => (None, None, Some(*max_tokens)),
            _ => (None, None, None),
        };
        let changes = &judged.changes;
        Summary {
            event: judged.event.name(),
            decision: judged.event.decision(),
            code,
            on_exhausted,
            max_tokens,
            ended: changes
                .finish_attempt
                .as_ref()
                .map(|(_, end)| end.outcome)
                .expect("every outcome finishes its attempt"),
            turn: changes
                .complete_turn
                .as_ref()
                .map(|turn| (turn.number, turn.truncated)),
            circuit: changes.circuit.as_ref().map(|circuit| match circuit {
                CircuitChange::Open { key, .. } if key.model.is_some() => "open model",
                CircuitChange::Open { .. } => "open provider",
                CircuitChange::Close { .. } => "close",
                CircuitChange::Release { .. } => "release",
            }),
            counted: judged.counted,
        }
    }

    fn answer(turn: Option<(u32, bool)>, ended: AttemptOutcome) -> Summary {
        Summary {
            event: "succeeded",
            decision: None,
            code: None,
            on_exhausted: None,
            max_tokens: None,
            ended,
            turn,
            circuit: Some("close"),
            counted: ["answered", "none", "none"],
        }
    }

    fn failure(
        decision: Decision,
        code: SemanticCode,
        on_exhausted: Option<OnExhausted>,
        circuit: Option<&'static str>,
    ) -> Summary {
        Summary {
            event: "failed",
            decision: Some(decision),
            code: Some(code),
            on_exhausted: Some(on_exhausted),
            max_tokens: None,
            ended: AttemptOutcome::Failed,
            turn: None,
            circuit,
            counted: ["failed", code.class().as_str(), code.as_str()],
        }
    }

    /// One row: the rule it proves, whether a next candidate is enabled, the
    /// escalations already made, whether the attempt probed, the outcome, and what
    /// it comes to.
    type Row = (&'static str, bool, u32, bool, CallOutcome, Summary);

    fn table() -> Vec<Row> {
        let retry = |ordinal| Decision::Retry {
            ordinal,
            at_ms: NOW_MS + 500,
        };
        vec![
            (
                "an answer completes the turn and closes the candidate's circuits",
                true,
                0,
                false,
                answered(StopReason::End),
                answer(Some((2, false)), AttemptOutcome::Answered),
            ),
            (
                "an answer cut at its budget with an escalation left is sent again with twice the budget",
                true,
                0,
                false,
                answered(StopReason::MaxTokens),
                Summary {
                    event: "escalated",
                    max_tokens: Some(2_048),
                    ended: AttemptOutcome::Escalated,
                    turn: None,
                    ..answer(None, AttemptOutcome::Escalated)
                },
            ),
            (
                "an answer cut at its budget with no escalation left completes the turn, truncated",
                true,
                1,
                false,
                answered(StopReason::MaxTokens),
                answer(Some((2, true)), AttemptOutcome::Truncated),
            ),
            (
                "an overload is retried after the backoff",
                true,
                0,
                false,
                failed(anthropic(529, "overloaded_error"), ""),
                failure(
                    retry(1),
                    SemanticCode::Overloaded,
                    Some(OnExhausted::Skip),
                    None,
                ),
            ),
            (
                "a throttle with a reset waits for it and opens the model's circuit until then",
                true,
                0,
                false,
                failed(
                    anthropic(429, "rate_limit_error").with_header("retry-after", "20"),
                    "",
                ),
                failure(
                    Decision::WaitForReset {
                        until_ms: NOW_MS + 20_000,
                    },
                    SemanticCode::RateLimited,
                    Some(OnExhausted::Skip),
                    Some("open model"),
                ),
            ),
            (
                "a failure after part of the answer streamed is held: repeating it is unsafe",
                true,
                0,
                false,
                failed(anthropic(529, "overloaded_error"), "half an answer"),
                failure(
                    Decision::Hold {
                        cause: HoldCause::UnsafeEffect,
                    },
                    SemanticCode::Overloaded,
                    Some(OnExhausted::Skip),
                    None,
                ),
            ),
            (
                "the request's own error stops the route, with no exhausted outcome",
                true,
                0,
                false,
                failed(anthropic(400, "invalid_request_error"), ""),
                failure(
                    Decision::Stop {
                        cause: StopCause::Unrecoverable,
                    },
                    SemanticCode::InvalidRequest,
                    None,
                    None,
                ),
            ),
            (
                "a bad key skips to the next candidate (hard, retries off by default)",
                true,
                0,
                false,
                failed(anthropic(401, "authentication_error"), ""),
                failure(
                    Decision::Skip,
                    SemanticCode::AuthFailed,
                    Some(OnExhausted::Skip),
                    None,
                ),
            ),
            (
                "with no next candidate the exhausted skip is a stop",
                false,
                0,
                false,
                failed(anthropic(401, "authentication_error"), ""),
                failure(
                    Decision::Stop {
                        cause: StopCause::Exhausted,
                    },
                    SemanticCode::AuthFailed,
                    Some(OnExhausted::Skip),
                    None,
                ),
            ),
            (
                "a probe that fails without reopening its circuit releases it",
                true,
                0,
                true,
                failed(
                    Evidence::new("anthropic").with_transport(Transport::ConnectionReset),
                    "",
                ),
                failure(
                    retry(1),
                    SemanticCode::Network,
                    Some(OnExhausted::Skip),
                    Some("release"),
                ),
            ),
        ]
    }

    #[test]
    fn judgement_table() {
        for (name, next, escalations, probe, outcome, expected) in table() {
            let judged = judge(
                &task(next),
                &running(escalations),
                &attempt(probe),
                outcome,
                Timestamp::from_millis(NOW_MS),
            );
            assert_eq!(summary(&judged), expected, "{name}");
            // Whatever the outcome, the route machine takes the event from running.
            let context = policy::route::RouteContext {
                next_candidate: task(next).next_enabled_after(0),
            };
            assert!(
                policy::route::transition(&running(escalations).route, &judged.event, &context)
                    .is_ok(),
                "{name}"
            );
        }
    }

    /// With jitter, a retry's deadline lies in its band, is the same for the same
    /// task and ordinal, and differs between tasks.
    #[test]
    fn a_jittered_retry_deadline_is_seeded_by_the_task_id() {
        let deadline = |task_id: &str, retries: u32| {
            let mut task = task(true);
            task.id = TaskId::new(task_id);
            task.candidates[0].policy.transient.retry.jitter_pct = 50;
            task.candidates[0].policy.transient.retry.max_retries = 4;
            let mut route = running(0);
            route.route.episode.retries.transient = retries;
            let judged = judge(
                &task,
                &route,
                &attempt(false),
                failed(anthropic(529, "overloaded_error"), ""),
                Timestamp::from_millis(NOW_MS),
            );
            match judged.event.decision() {
                Some(Decision::Retry { ordinal, at_ms }) => {
                    assert_eq!(ordinal, retries + 1);
                    at_ms
                }
                other => panic!("expected a retry, got {other:?}"),
            }
        };
        let ids = ["t1", "t2", "t3", "t4", "t5", "t6"];
        for retries in 0..3 {
            let (earliest_ms, latest_ms) = policy::jitter_band_ms(500, retries + 1, 50);
            let band = NOW_MS + earliest_ms as i64..=NOW_MS + latest_ms as i64;
            let deadlines: Vec<i64> = ids.iter().map(|id| deadline(id, retries)).collect();
            for (id, at_ms) in ids.iter().zip(&deadlines) {
                assert!(band.contains(at_ms), "{id}: {at_ms} outside {band:?}");
                assert_eq!(deadline(id, retries), *at_ms, "{id}: the same again");
            }
            let mut distinct = deadlines.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), ids.len(), "{deadlines:?}");
        }
    }

    /// The evidence stored with a failed attempt is stamped with the time it was
    /// judged and keeps no credential.
    #[test]
    fn a_failures_evidence_is_stamped_and_keeps_no_credentials() {
        let evidence = anthropic(529, "overloaded_error")
            .with_header("set-cookie", "session=1")
            .with_header("x-request-id", "req_1");
        let judged = judge(
            &task(true),
            &running(0),
            &attempt(false),
            failed(evidence, ""),
            Timestamp::from_millis(NOW_MS),
        );
        let (_, end) = judged.changes.finish_attempt.unwrap();
        let stored = end.evidence.unwrap();
        assert_eq!(
            stored["headers"],
            serde_json::json!({"x-request-id": "req_1"})
        );
        assert_eq!(
            stored["observed_at"],
            Timestamp::from_millis(NOW_MS).to_string()
        );
    }

    fn circuit(code: SemanticCode, until_ms: i64) -> Circuit {
        Circuit {
            key: CircuitKey {
                provider_id: ProviderId::new("p0"),
                model: None,
            },
            code,
            until_ms,
            probe_task_id: None,
            opened_at_ms: NOW_MS,
        }
    }

    #[test]
    fn a_route_due_on_an_open_circuit_waits_within_its_wait_and_otherwise_takes_its_outcome() {
        let hour_ms = 3_600_000;
        let due = |through_circuit| RouteRecord {
            route: Route {
                state: policy::route::RouteState::Retrying,
                through_circuit,
                ..running(0).route
            },
            ..running(0)
        };
        let decision = |task: &Task, record, open| match at_open_circuit(
            task,
            record,
            open,
            "Claude Code",
            NOW_MS,
        ) {
            Some(RouteEvent::CircuitOpen { until_ms, .. }) => format!("wait until {until_ms}"),
            Some(event) => {
                event
                    .decision()
                    .map_or("none", |decision| decision.name())
                    .to_owned()
                    + &format!(" ({})", event.name())
            }
            None => "send as the probe".to_owned(),
        };
        let (waiting, probing) = (due(false), due(true));
        // The hard section waits up to an hour.
        let within = circuit(SemanticCode::UsageLimited, NOW_MS + hour_ms);
        let beyond = circuit(SemanticCode::UsageLimited, NOW_MS + 2 * hour_ms);
        assert_eq!(
            decision(&task(true), &waiting, &within),
            format!("wait until {}", NOW_MS + hour_ms)
        );
        assert_eq!(decision(&task(true), &waiting, &beyond), "skip (not_sent)");
        assert_eq!(decision(&task(false), &waiting, &beyond), "stop (not_sent)");
        assert_eq!(
            decision(&task(true), &probing, &beyond),
            "send as the probe"
        );
        // What the route shows: the circuit's code, when it opens again, and why
        // the route waits or passes the candidate over.
        let Some(RouteEvent::CircuitOpen {
            failure,
            on_exhausted,
            ..
        }) = at_open_circuit(&task(true), &waiting, &within, "Claude Code", NOW_MS)
        else {
            panic!("a wait")
        };
        assert_eq!(
            (failure.code, on_exhausted),
            (SemanticCode::UsageLimited, OnExhausted::Skip)
        );
        assert_eq!(
            failure.safe_cause,
            format!(
                "Waiting: Claude Code's usage window resets in 1 h ({}), within this \
                 candidate's 1 h wait.",
                Timestamp::from_millis(NOW_MS + hour_ms)
            )
        );
        let Some(RouteEvent::NotSent { failure, .. }) = at_open_circuit(
            &task(true),
            &waiting,
            &circuit(SemanticCode::UsageLimited, NOW_MS + 3 * hour_ms - 1),
            "Claude Code",
            NOW_MS,
        ) else {
            panic!("passed over")
        };
        assert_eq!(
            failure.safe_cause,
            format!(
                "Not sent: Claude Code's usage window resets in 3 h ({}), past this \
                 candidate's 1 h wait.",
                Timestamp::from_millis(NOW_MS + 3 * hour_ms - 1)
            )
        );
    }
}
