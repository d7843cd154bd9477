//! From a route handed to the dispatcher to its attempt's outcome: the shared
//! circuits, the attempt recorded as started (committed before the request is
//! sent), the call, and its outcome through the catalogue and the policy.

use std::time::Instant;

use api::{AttemptId, TaskId};
use policy::circuit::{CircuitScope, Gate, gate, opens};
use policy::evaluate::exhausted;
use policy::route::{RouteEvent, RouteState};
use policy::{Classification, Effects, Episode, evaluate};
use providers::{CallOutcome, CallRequest, Message, Role, StopReason};
use tracing::Instrument;

use super::{Applied, Changes, Engine, Lane, Lanes, Rejection};
use std::sync::Arc;

use crate::domain::{
    Attempt, AttemptEnd, AttemptOutcome, CircuitChange, CircuitKey, Failure, Producer, Progress,
    RouteRecord, Task, Verdict,
};
use crate::services::new_id;
use crate::store::StoreError;

/// How many times an attempt's outcome is offered to a failing database.
const FINISH_TRIES: u32 = 30;

/// What to send, and what it was.
struct Sending {
    attempt: Attempt,
    request: CallRequest,
}

impl Engine {
    /// Receive routes and dispatch each, with a bounded number of calls in flight:
    /// once a call may start, the due lane goes first.
    pub(super) async fn run_dispatcher(self, mut lanes: Lanes) {
        let mut picks: u64 = 0;
        loop {
            let Ok(permit) = self.inner.permits.clone().acquire_owned().await else {
                return;
            };
            // Due routes first, but every eighth pick goes to a new task if one
            // waits, so retries alone never keep new work out.
            picks += 1;
            let fresh_turn = picks.is_multiple_of(8);
            let waiting_fresh = if fresh_turn {
                lanes.fresh.try_recv().ok()
            } else {
                None
            };
            let id = match waiting_fresh {
                Some(id) => id,
                None => tokio::select! {
                    biased;
                    Some(id) = lanes.due.recv() => id,
                    Some(id) = lanes.fresh.recv() => id,
                    else => return,
                },
            };
            let engine = self.clone();
            let span = tracing::info_span!("route", task_id = %id);
            tokio::spawn(
                async move {
                    let failed = engine.dispatch(&id, permit).await.err();
                    // A stop closes the store under a dispatch: no failure.
                    if let Some(error) = failed.filter(|_| !engine.is_stopping()) {
                        // The route is still queued or retrying in the database: try
                        // again shortly rather than leave it until a restart.
                        tracing::error!(error = %crate::error::chain(&error), "dispatch failed; trying again in a second");
                        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                        engine.enqueue(id, Lane::Due);
                    }
                }
                .instrument(span),
            );
        }
    }

    /// Dispatch one route if it is `queued` or `retrying`: through its circuits, then
    /// an attempt recorded as started, then the call. Anything else is left alone (a
    /// route handed over twice is dispatched once: the start is fenced).
    /// The permit is held until the call's outcome is written (or nothing is sent):
    /// it bounds the routes between their start and their outcome, database work
    /// included, so a due route waits for few others.
    pub(super) async fn dispatch(
        &self,
        id: &TaskId,
        permit: tokio::sync::OwnedSemaphorePermit,
    ) -> Result<(), StoreError> {
        if self.is_stopping() {
            return Ok(());
        }
        let progress = self.inner.store.get_progress(id).await?;
        let record = &progress.route;
        if !matches!(
            record.route.state,
            RouteState::Queued | RouteState::Retrying
        ) {
            return Ok(());
        }
        let task = self.snapshot(id).await?;
        let Some(candidate) = task.candidates.get(record.route.candidate) else {
            return Ok(());
        };
        let now_ms = self.now().as_millis();
        let circuits = self
            .inner
            .store
            .circuits_over(&candidate.provider_id, &candidate.model)
            .await?;
        let mut probe = false;
        // The latest-closing circuit decides whether to wait (they are sorted so).
        if let Some(open) = circuits.iter().find(|circuit| circuit.until_ms > now_ms) {
            let section = candidate
                .policy
                .section(open.code.class())
                .copied()
                .unwrap_or_else(policy::PolicySection::hard_default);
            // What the route shows while it waits, or why it did not send.
            let failure = Failure {
                class: open.code.class(),
                code: open.code,
                catalogue: catalogue::CATALOGUE_VERSION.to_owned(),
                safe_cause: format!(
                    "The {} circuit is open until {}.",
                    if open.key.model.is_some() {
                        "model's"
                    } else {
                        "provider's"
                    },
                    api::Timestamp::from_millis(open.until_ms)
                ),
            };
            let outcome = section.on_exhausted;
            let event = match gate(
                Some(open.until_ms),
                &section,
                record.route.through_circuit,
                now_ms,
            ) {
                Gate::Wait { until_ms } => Some(RouteEvent::CircuitOpen { until_ms }),
                Gate::Exhausted => {
                    let has_next = task.next_enabled_after(record.route.candidate).is_some();
                    Some(RouteEvent::NotSent(exhausted(&section, has_next)))
                }
                // A person's retry now goes through, as the probe.
                Gate::Send => None,
            };
            match event {
                None => probe = true,
                Some(event) => {
                    self.apply(&task, record, event, Changes::default(), |next| {
                        next.failure = Some(failure);
                        next.pending_outcome = Some(outcome);
                    })
                    .await
                    .map_err(into_store_error)?;
                    return Ok(());
                }
            }
        }
        // Half-open: exactly one route probes; the rest wait for its result.
        for circuit in circuits.iter().filter(|circuit| circuit.until_ms <= now_ms) {
            let claimed = self
                .inner
                .store
                .claim_probe(&circuit.key, id, now_ms)
                .await?;
            if !claimed && !record.route.through_circuit {
                self.park(id, &candidate.provider_id, &candidate.model)
                    .await?;
                return Ok(());
            }
            probe = true;
        }
        // Read before the start is committed: a store that fails here leaves the
        // route as it was, to be dispatched again.
        let provider = match self.inner.store.get_provider(&candidate.provider_id).await {
            Ok(provider) => Some(provider),
            Err(StoreError::NotFound { .. }) => None,
            Err(error) => return Err(error),
        };
        let sending = self.prepare(&task, &progress, probe);
        let attempt = sending.attempt.clone();
        let new_episode = record.route.new_episode;
        // The call is registered before its start is committed: a stop that commits
        // after the start finds it to cut, even before it is sent.
        let starting = record.route.generation + 1;
        let (abort, registration) = futures_util::future::AbortHandle::new_pair();
        if !self.register_call(id, starting, abort) {
            // Handed over twice: the other dispatch has it.
            return Ok(());
        }
        let applied = self
            .apply(
                &task,
                record,
                RouteEvent::AttemptStarted,
                Changes {
                    start_attempt: Some(attempt.clone()),
                    ..Changes::default()
                },
                |next| {
                    if new_episode {
                        next.episode = Episode::default();
                    }
                },
            )
            .await;
        let Ok(Applied::Committed(started)) = applied else {
            self.take_call(id, starting);
            return applied.map(|_| ()).map_err(into_store_error);
        };
        // Committed as started: now send.
        self.send(
            task.clone(),
            *started,
            sending,
            provider,
            permit,
            registration,
        )
        .await;
        Ok(())
    }

    /// Wait for another route's probe: parked, the route is handed to the
    /// dispatcher again when a probe finishes. The circuits are read again once
    /// parked, so a probe that finished in between (and found nobody to hand back)
    /// is not missed.
    async fn park(
        &self,
        id: &TaskId,
        provider_id: &api::ProviderId,
        model: &str,
    ) -> Result<(), StoreError> {
        self.inner
            .parked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .insert(id.clone());
        let now_ms = self.now().as_millis();
        // Still waiting only while another live route holds a half-open circuit's
        // probe: a claim whose route stopped, or a circuit gone or reopened, frees it.
        let mut still_probed = false;
        for circuit in self.inner.store.circuits_over(provider_id, model).await? {
            if circuit.until_ms <= now_ms
                && !self
                    .inner
                    .store
                    .claim_probe(&circuit.key, id, now_ms)
                    .await?
            {
                still_probed = true;
            }
        }
        if !still_probed {
            let removed = self
                .inner
                .parked
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .remove(id);
            if removed {
                self.enqueue(id.clone(), Lane::Due);
            }
        }
        Ok(())
    }

    /// The attempt and request for the route's current candidate.
    fn prepare(&self, task: &Task, progress: &Progress, probe: bool) -> Sending {
        let record = &progress.route;
        let candidate = &task.candidates[record.route.candidate];
        let max_tokens = record.max_tokens.unwrap_or(candidate.max_tokens);
        let mut messages = Vec::new();
        for turn in &progress.turns {
            messages.push(Message {
                role: Role::User,
                content: turn.prompt.clone(),
            });
            if turn.number == record.turn {
                break;
            }
            if let Some(answer) = &turn.answer {
                messages.push(Message {
                    role: Role::Assistant,
                    content: answer.clone(),
                });
            }
        }
        let call_index = progress.calls_on(record.route.candidate);
        let attempt = Attempt {
            id: AttemptId::new(new_id()),
            task_id: task.id.clone(),
            seq: 0,
            turn: record.turn,
            generation: record.route.generation + 1,
            candidate_index: record.route.candidate,
            candidate_id: candidate.id.clone(),
            provider_id: candidate.provider_id.clone(),
            model: candidate.model.clone(),
            ordinal: record.route.retry_ordinal,
            max_tokens,
            probe,
            after_circuit_wait: record.route.circuit_waited,
            started_at: self.now(),
            end: None,
        };
        Sending {
            attempt,
            request: CallRequest {
                model: candidate.model.clone(),
                max_tokens,
                messages,
                call_index,
            },
        }
    }

    /// Send the call in its own task (so `stop` can cancel it), then evaluate its outcome.
    async fn send(
        &self,
        task: Arc<Task>,
        started: RouteRecord,
        sending: Sending,
        provider: Option<crate::domain::Provider>,
        permit: tokio::sync::OwnedSemaphorePermit,
        registration: futures_util::future::AbortRegistration,
    ) {
        let span = tracing::info_span!(
            "attempt",
            task_id = %task.id,
            attempt_id = %sending.attempt.id,
            candidate = sending.attempt.candidate_index,
            model = %sending.attempt.model,
            generation = started.route.generation,
        );
        let caller = self.inner.caller.clone();
        let request = sending.request;
        let kind = provider
            .as_ref()
            .map_or("missing", |provider| provider.kind.as_str());
        let call = tokio::spawn(futures_util::future::Abortable::new(
            async move {
                let began = Instant::now();
                let outcome = match &provider {
                    Some(provider) => caller.call(provider, &request).await,
                    None => CallOutcome::Failed {
                        evidence: catalogue::Evidence::new("switchback")
                            .with_body("the provider of this candidate no longer exists"),
                        partial_output: String::new(),
                    },
                };
                (outcome, began.elapsed())
            }
            .instrument(span.clone()),
            registration,
        ));
        let joined = call.await;
        // Still ours, unless a stop took it: then the route has moved on, and what the
        // call brought back is dropped unevaluated.
        let current = self.take_call(&task.id, started.route.generation);
        let (outcome, elapsed) = match joined {
            Ok(Ok(done)) => done,
            // Cut by `stop` (or the runtime ending): the stop's commit finished the
            // attempt.
            Ok(Err(futures_util::future::Aborted)) => return,
            Err(error) if error.is_cancelled() => return,
            // A bug in an adapter: whether the call reached the provider is unknown,
            // so a person decides (the catalogue does not know this evidence).
            Err(_) => (
                CallOutcome::Failed {
                    evidence: catalogue::Evidence::new("switchback")
                        .with_body("the call failed inside Switchback (see its log)"),
                    partial_output: String::new(),
                },
                std::time::Duration::ZERO,
            ),
        };
        metrics::histogram!("switchback_provider_call_seconds", "kind" => kind)
            .record(elapsed.as_secs_f64());
        let attempt = sending.attempt;
        if !current {
            tracing::info!(parent: &span, "the route moved on during the call: its outcome is dropped");
        }
        // The outcome is only in memory until it is written: a failing database is
        // tried again (the commit is fenced, so a write that did land is not
        // repeated), and the route is left running only if it never recovers (the
        // next start holds it as interrupted).
        for tries in 1.. {
            let written = if current {
                self.finish(&task, started.clone(), attempt.clone(), outcome.clone())
                    .instrument(span.clone())
                    .await
            } else {
                self.supersede(&attempt, self.now()).await
            };
            match written {
                Ok(()) => break,
                Err(error) if tries < FINISH_TRIES && error.may_pass() => {
                    tracing::warn!(parent: &span, error = %crate::error::chain(&error), "writing an attempt's outcome failed; trying again in a second");
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                Err(error) => {
                    tracing::error!(parent: &span, error = %crate::error::chain(&error), "writing an attempt's outcome failed; the route stays running until a restart holds it");
                    break;
                }
            }
        }
        drop(permit);
    }

    /// Evaluate an attempt's outcome and commit what follows, fenced by the
    /// generation it started at. A running route moves on only by its attempt's
    /// outcome or a stop, and a stop takes the call from `in_flight` first, so
    /// evidence of an older generation never gets here; should the route have moved
    /// on all the same (another process), the fenced commit writes nothing and the
    /// attempt is marked superseded.
    async fn finish(
        &self,
        task: &Task,
        started: RouteRecord,
        attempt: Attempt,
        outcome: CallOutcome,
    ) -> Result<(), StoreError> {
        let now = self.now();
        let now_ms = now.as_millis();
        let candidate = &task.candidates[started.route.candidate];
        let producer = Producer {
            candidate_index: started.route.candidate,
            candidate_id: candidate.id.clone(),
            model: candidate.model.clone(),
        };
        let ended = |outcome: AttemptOutcome| AttemptEnd::bare(outcome, now);
        let close = Some(CircuitChange::Close {
            provider_id: candidate.provider_id.clone(),
            model: candidate.model.clone(),
        });
        let applied = match outcome {
            CallOutcome::Answered { text, stop } => {
                metrics::counter!(
                    "switchback_attempts_total",
                    "outcome" => "answered",
                    "class" => "none",
                    "code" => "none"
                )
                .increment(1);
                let escalate = matches!(stop, StopReason::MaxTokens)
                    .then(|| {
                        candidate
                            .escalation
                            .next_budget(attempt.max_tokens, started.escalations)
                    })
                    .flatten();
                if let Some(budget) = escalate {
                    self.apply(
                        task,
                        &started,
                        RouteEvent::Escalated,
                        Changes {
                            finish_attempt: Some((
                                attempt.id.clone(),
                                ended(AttemptOutcome::Escalated),
                            )),
                            circuit: close,
                            ..Changes::default()
                        },
                        |next| {
                            next.escalations += 1;
                            next.max_tokens = Some(budget);
                        },
                    )
                    .await
                } else {
                    let truncated = matches!(stop, StopReason::MaxTokens);
                    let outcome = if truncated {
                        AttemptOutcome::Truncated
                    } else {
                        AttemptOutcome::Answered
                    };
                    self.apply(
                        task,
                        &started,
                        RouteEvent::Succeeded,
                        Changes {
                            finish_attempt: Some((attempt.id.clone(), ended(outcome))),
                            complete_turn: Some((started.turn, text, truncated, producer)),
                            circuit: close,
                            ..Changes::default()
                        },
                        |next| {
                            next.episode = Episode::default();
                            next.failure = None;
                            next.pending_outcome = None;
                            next.escalations = 0;
                            next.max_tokens = None;
                        },
                    )
                    .await
                }
            }
            CallOutcome::Failed {
                mut evidence,
                partial_output,
            } => {
                evidence.observed_at_ms.get_or_insert(now_ms);
                let verdict = catalogue::classify(&evidence, now_ms);
                let classification: Classification = verdict.classification;
                let effects = Effects {
                    partial_output: !partial_output.is_empty(),
                    ambiguous_side_effect: false,
                };
                let has_next = task.next_enabled_after(started.route.candidate).is_some();
                let decision = evaluate(
                    &candidate.policy,
                    &classification,
                    &started.episode,
                    effects,
                    has_next,
                    now_ms,
                );
                let class = classification.code.class();
                metrics::counter!(
                    "switchback_attempts_total",
                    "outcome" => "failed",
                    "class" => class.as_str(),
                    "code" => classification.code.as_str()
                )
                .increment(1);
                tracing::info!(
                    code = classification.code.as_str(),
                    class = class.as_str(),
                    decision = decision.name(),
                    "attempt failed"
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
                let outcome = candidate
                    .policy
                    .section(class)
                    .map(|section| section.on_exhausted);
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
                self.apply(
                    task,
                    &started,
                    RouteEvent::Failed(decision),
                    Changes {
                        finish_attempt: Some((attempt.id.clone(), end)),
                        circuit,
                        ..Changes::default()
                    },
                    |next| {
                        next.episode.record(&decision, class);
                        next.failure = Some(failure);
                        next.pending_outcome = outcome;
                    },
                )
                .await
            }
        };
        match applied {
            Ok(Applied::Committed(_) | Applied::Answered(_)) => {}
            Ok(Applied::Stale(_)) => self.supersede(&attempt, now).await?,
            Err(rejection) => return Err(into_store_error(rejection)),
        }
        if attempt.probe {
            self.unpark();
        }
        Ok(())
    }

    /// An attempt whose route moved on: finish it, unevaluated, if nothing has (a
    /// stop already finished it as cancelled).
    async fn supersede(&self, attempt: &Attempt, now: api::Timestamp) -> Result<(), StoreError> {
        let end = AttemptEnd::bare(AttemptOutcome::Superseded, now);
        self.inner.store.finish_attempt(&attempt.id, &end).await?;
        if attempt.probe {
            self.unpark();
        }
        Ok(())
    }

    /// Apply an event that needs nothing beside the route.
    pub(super) async fn settle(
        &self,
        task: &Task,
        record: &RouteRecord,
        event: RouteEvent,
        changes: Changes,
    ) -> Result<Applied, StoreError> {
        self.apply(task, record, event, changes, |_| {})
            .await
            .map_err(into_store_error)
    }
}

/// A refusal where none can happen (the state was checked) is a store-level failure
/// to report; a store error is itself.
fn into_store_error(rejection: Rejection) -> StoreError {
    match rejection {
        Rejection::Store(error) => error,
        Rejection::Refused(state) => StoreError::Corrupt {
            what: "route transition",
            message: format!("refused in state {}", state.as_str()),
        },
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
            api::Timestamp::from_millis(observed_at_ms)
                .to_string()
                .into(),
        );
    }
    object.into()
}
