//! From a route handed to the dispatcher to its attempt's outcome: the shared
//! circuits, the attempt recorded as started (committed before the request is
//! sent), the call, and its outcome through the catalogue and the policy. A
//! gateway call's first attempt may skip the dispatcher: when nothing stands
//! in its way it is recorded as started in its task's creation commit, and
//! sent the same way ([`Engine::create_and_send`]).

use std::sync::Arc;
use std::time::Instant;

use api::{AttemptId, TaskId};
use futures_util::FutureExt;
use futures_util::future::{AbortHandle, AbortRegistration, Abortable, Aborted};
use policy::route::{RouteEvent, RouteState};
use providers::{CallOutcome, CallRequest, Message, Role};
use tokio::sync::OwnedSemaphorePermit;
use tracing::Instrument;

use super::calls::CallNews;
use super::commit::{Applied, Changes};
use super::judge::{at_open_circuit, judge, not_carried};
use super::wake::{Lane, Lanes};
use super::{Engine, EngineError};
use crate::domain::{
    Attempt, AttemptEnd, AttemptOutcome, Progress, RouteRecord, Task, TaskDetail, TaskWrite, Turn,
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

/// A new task's first attempt, ready to be recorded as started with the task.
struct FirstSend {
    sending: Sending,
    provider: crate::domain::Provider,
    permit: OwnedSemaphorePermit,
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
        permit: OwnedSemaphorePermit,
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
        // A person paused recovery here: nothing starts until they resume.
        if self.hold_back_if_paused(id, &candidate.provider_id) {
            return Ok(());
        }
        let now_ms = self.now().as_millis();
        // A gateway call whose client stopped waiting (its deadline passed, or a
        // restart lost its connection's process): nobody would read the answer.
        // On a store no other process shares, a gateway call nobody here waits
        // on has no client at all (a restart lost its connection).
        let orphaned = task.gateway.is_some()
            && !self.inner.store.is_shared()
            && !self.inner.watchers.watched(id);
        if orphaned || task.respond_by_ms().is_some_and(|by_ms| by_ms <= now_ms) {
            return match self.cancel_for_client(id).await {
                Ok(()) | Err(EngineError::Stale { .. }) => Ok(()),
                Err(error) => Err(error.into_store_error()),
            };
        }
        // Read before the start is committed: a store that fails here leaves the
        // route as it was, to be dispatched again.
        let provider = match self.inner.store.get_provider(&candidate.provider_id).await {
            Ok(provider) => Some(provider),
            Err(StoreError::NotFound { .. }) => None,
            Err(error) => return Err(error),
        };
        let circuits = self
            .inner
            .store
            .circuits_over(&candidate.provider_id, &candidate.model)
            .await?;
        let mut probe = false;
        // The latest-closing circuit decides whether to wait (they are sorted so).
        if let Some(open) = circuits.iter().find(|circuit| circuit.until_ms > now_ms) {
            let provider_name = provider
                .as_ref()
                .map_or(candidate.provider_id.as_str(), |provider| {
                    provider.name.as_str()
                });
            match at_open_circuit(&task, record, open, provider_name, now_ms) {
                // A person's retry now goes through, as the probe.
                None => probe = true,
                Some(event) => {
                    return match self.apply(&task, record, event, Changes::default()).await {
                        Ok(_) | Err(EngineError::Stale { .. }) => Ok(()),
                        Err(error) => Err(error.into_store_error()),
                    };
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
        let sending = self.prepare(&task, &progress, probe);
        // A gateway client's request this candidate's protocol cannot carry is not
        // sent with fields dropped: the candidate is skipped, saying which field.
        if let Some(provider) = &provider
            && let Err(unsupported) = self.inner.caller.carries(provider, &sending.request)
        {
            let event = not_carried(&task, record, &unsupported);
            return match self.apply(&task, record, event, Changes::default()).await {
                Ok(_) | Err(EngineError::Stale { .. }) => Ok(()),
                Err(error) => Err(error.into_store_error()),
            };
        }
        let attempt = sending.attempt.clone();
        // The call is registered before its start is committed: a stop that commits
        // after the start finds it to cut, even before it is sent.
        let starting = record.route.generation + 1;
        let (abort, registration) = AbortHandle::new_pair();
        if !self.inner.in_flight.register(id, starting, abort) {
            // Handed over twice: the other dispatch has it.
            return Ok(());
        }
        let applied = self
            .apply(
                &task,
                record,
                RouteEvent::AttemptStarted,
                Changes {
                    start_attempt: Some(attempt),
                    ..Changes::default()
                },
            )
            .await;
        let started = match applied {
            Ok(Applied::Committed(started)) => started,
            Ok(Applied::Answered(_)) => unreachable!("a start is not read back"),
            Err(error) => {
                self.inner.in_flight.take(id, starting);
                return match error {
                    EngineError::Stale { .. } => Ok(()),
                    error => Err(error.into_store_error()),
                };
            }
        };
        // Committed as started: now send.
        self.send(task, *started, sending, provider, permit, registration)
            .await;
        Ok(())
    }

    /// Start a task with its first attempt recorded as started in the same
    /// commit, then send it, when nothing stands in the way
    /// ([`Engine::first_send`]): one commit before the request goes out, not
    /// two and a trip through the dispatcher's queue. Otherwise (a circuit over
    /// the first candidate, no call free, ...) the task is created `queued`
    /// and the dispatcher takes it, as [`Engine::create_task`] does. Answers as
    /// that does.
    pub async fn create_and_send(
        &self,
        mut write: TaskWrite,
    ) -> Result<(TaskDetail, bool), EngineError> {
        let task = Arc::new(write.task.clone());
        let Some(first) = self.first_send(&task, &write.route, &write.turn).await else {
            return self.create_task(write).await;
        };
        let FirstSend {
            sending,
            provider,
            permit,
        } = first;
        let (started, start) = self.decide_commit(
            &task,
            &write.route,
            &RouteEvent::AttemptStarted,
            Changes {
                start_attempt: Some(sending.attempt.clone()),
                ..Changes::default()
            },
        )?;
        let generation = started.route.generation;
        // Registered before the commit, as a dispatch registers its call: a
        // stop that commits after the start finds it to cut.
        let (abort, registration) = AbortHandle::new_pair();
        if !self.inner.in_flight.register(&task.id, generation, abort) {
            return self.create_task(write).await;
        }
        write.start = Some(start);
        // On its own, like every commit: a caller that goes away leaves no
        // started attempt unsent. The task that commits goes on to send (the
        // caller hears of the commit first), so the request goes out without
        // waiting for another task to be scheduled.
        let (told, hear) = tokio::sync::oneshot::channel();
        let engine = self.clone();
        tokio::spawn(async move {
            let created = engine.inner.store.create_task(write).await;
            let send = match &created {
                Ok((detail, Some(_))) => {
                    engine.inner.snapshots.keep(detail.task.clone());
                    true
                }
                Ok((detail, None)) => {
                    // The key's first task: nothing of this one was written.
                    engine.inner.in_flight.take(&task.id, generation);
                    if detail.route.route.state == RouteState::Queued {
                        engine.enqueue(detail.task.id.clone(), Lane::Fresh);
                    }
                    false
                }
                Err(_) => {
                    engine.inner.in_flight.take(&task.id, generation);
                    false
                }
            };
            let heard = told
                .send(created.map(|(detail, event_id)| (detail, event_id.is_some())))
                .is_ok();
            if send && heard {
                engine
                    .send(task, started, sending, Some(provider), permit, registration)
                    .await;
            } else if send {
                // The caller left while the task was written: nobody waits for
                // the answer, so nothing is sent, and the route stops as its
                // client's (the stop's commit finishes the attempt and takes
                // the call back).
                drop(permit);
                match engine.cancel_for_client(&task.id).await {
                    Ok(()) | Err(EngineError::Stale { .. }) => {}
                    Err(error) => {
                        tracing::warn!(task_id = %task.id, error = %error, "stopping a call its client left failed");
                    }
                }
            }
        });
        Ok(hear
            .await
            .unwrap_or_else(|_| Err(StoreError::Write("creating a task panicked".to_owned())))?)
    }

    /// Whether a new task's first attempt can go out with its creation: the
    /// server is not stopping, the caller's deadline has not passed, a call may
    /// start now, nothing is paused there, no circuit covers the first candidate (open or half-open: the
    /// dispatcher decides those), its provider exists, and its protocol carries
    /// the request. `None` leaves the task to the dispatcher, which handles
    /// each of these cases (and a read that failed here).
    async fn first_send(&self, task: &Task, route: &RouteRecord, turn: &Turn) -> Option<FirstSend> {
        match self.try_first_send(task, route, turn).await {
            Ok(first) => first,
            Err(error) => {
                tracing::warn!(task_id = %task.id, error = %crate::error::chain(&error), "reading for a first send failed; the dispatcher takes the task");
                None
            }
        }
    }

    async fn try_first_send(
        &self,
        task: &Task,
        route: &RouteRecord,
        turn: &Turn,
    ) -> Result<Option<FirstSend>, StoreError> {
        let passed = task
            .respond_by_ms()
            .is_some_and(|by_ms| by_ms <= self.now().as_millis());
        // A gateway call nobody here waits on (see `dispatch`): the dispatcher
        // stops it.
        let orphaned = task.gateway.is_some()
            && !self.inner.store.is_shared()
            && !self.inner.watchers.watched(&task.id);
        if self.is_stopping() || passed || orphaned {
            return Ok(None);
        }
        let Ok(permit) = self.inner.permits.clone().try_acquire_owned() else {
            return Ok(None);
        };
        let Some(candidate) = task.candidates.get(route.route.candidate) else {
            return Ok(None);
        };
        if self.is_paused(&candidate.provider_id) {
            return Ok(None);
        }
        let circuits = self
            .inner
            .store
            .circuits_over(&candidate.provider_id, &candidate.model)
            .await?;
        if !circuits.is_empty() {
            return Ok(None);
        }
        let provider = match self.inner.store.get_provider(&candidate.provider_id).await {
            Ok(provider) => provider,
            Err(StoreError::NotFound { .. }) => return Ok(None),
            Err(error) => return Err(error),
        };
        let progress = Progress {
            route: route.clone(),
            turns: vec![turn.clone()],
            calls: Vec::new(),
        };
        let sending = self.prepare(task, &progress, false);
        if self
            .inner
            .caller
            .carries(&provider, &sending.request)
            .is_err()
        {
            return Ok(None);
        }
        Ok(Some(FirstSend {
            sending,
            provider,
            permit,
        }))
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
        self.inner.parked.park(id);
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
        if !still_probed && self.inner.parked.unpark_one(id) {
            self.enqueue(id.clone(), Lane::Due);
        }
        Ok(())
    }

    /// The attempt and request for the route's current candidate.
    fn prepare(&self, task: &Task, progress: &Progress, probe: bool) -> Sending {
        let record = &progress.route;
        let candidate = &task.candidates[record.route.candidate];
        let max_tokens = record.route.max_tokens.unwrap_or(candidate.max_tokens);
        let mut messages = Vec::new();
        for turn in &progress.turns {
            messages.push(Message {
                role: Role::User,
                content: turn.prompt.clone(),
            });
            if turn.number == record.route.turn {
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
            turn: record.route.turn,
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
                client: task.gateway.as_ref().map(|call| call.request.clone()),
            },
        }
    }

    /// Send the call in its own task (so `stop` can cancel it), then write its outcome.
    async fn send(
        &self,
        task: Arc<Task>,
        started: RouteRecord,
        sending: Sending,
        provider: Option<crate::domain::Provider>,
        permit: OwnedSemaphorePermit,
        registration: AbortRegistration,
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
        // A gateway call's waiting client hears the answer as it streams.
        let tap = task.gateway.is_some().then(|| Tap {
            engine: self.clone(),
            id: task.id.clone(),
            generation: started.route.generation,
        });
        let kind = provider
            .as_ref()
            .map_or("missing", |provider| provider.kind.as_str());
        // Run in this task (a stop aborts it where it waits); a panic in an
        // adapter is caught here rather than end the task.
        let calling = Instant::now();
        let call = Abortable::new(
            std::panic::AssertUnwindSafe(
                async move {
                    let began = Instant::now();
                    let outcome = match (&provider, &tap) {
                        (Some(provider), Some(tap)) => {
                            let outcome = caller.call(provider, &request, tap).await;
                            tap.tell(CallNews::Called(began.elapsed()));
                            if let CallOutcome::Answered { stop, .. } = &outcome {
                                tap.tell(CallNews::Answered(tap.generation, stop.clone()));
                            }
                            outcome
                        }
                        (Some(provider), None) => caller.call(provider, &request, &()).await,
                        (None, _) => CallOutcome::Failed {
                            evidence: catalogue::Evidence::new("switchback")
                                .with_body("the provider of this candidate no longer exists"),
                            partial_output: String::new(),
                        },
                    };
                    (outcome, began.elapsed())
                }
                .instrument(span.clone()),
            )
            .catch_unwind(),
            registration,
        );
        let joined = call.await;
        // Still ours, unless a stop took it: then the route has moved on, and what the
        // call brought back is dropped unevaluated.
        let current = self
            .inner
            .in_flight
            .take(&task.id, started.route.generation);
        let (outcome, elapsed) = match joined {
            Ok(Ok(done)) => done,
            // Cut by `stop`: the stop's commit finished the attempt.
            Err(Aborted) => return,
            // A bug in an adapter: whether the call reached the provider is unknown,
            // so a person decides (the catalogue does not know this evidence).
            Ok(Err(_)) => {
                // The call's time is not Switchback's own, whatever became of it.
                if task.gateway.is_some() {
                    self.inner
                        .watchers
                        .tell(&task.id, &CallNews::Called(calling.elapsed()));
                }
                (
                    CallOutcome::Failed {
                        evidence: catalogue::Evidence::new("switchback")
                            .with_body("the call failed inside Switchback (see its log)"),
                        partial_output: String::new(),
                    },
                    calling.elapsed(),
                )
            }
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
                self.finish(&task, &started, &attempt, outcome.clone())
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

    /// Judge an attempt's outcome and commit what follows, fenced by the
    /// generation it started at. A running route moves on only by its attempt's
    /// outcome or a stop, and a stop takes the call from `in_flight` first, so
    /// evidence of an older generation never gets here; should the route have moved
    /// on all the same (another process), the fenced commit writes nothing and the
    /// attempt is marked superseded.
    async fn finish(
        &self,
        task: &Arc<Task>,
        started: &RouteRecord,
        attempt: &Attempt,
        outcome: CallOutcome,
    ) -> Result<(), StoreError> {
        let now = self.now();
        let judged = judge(task, started, attempt, outcome, now);
        let [outcome, class, code] = judged.counted;
        metrics::counter!(
            "switchback_attempts_total",
            "outcome" => outcome,
            "class" => class,
            "code" => code
        )
        .increment(1);
        if let Some(decision) = judged.event.decision() {
            tracing::info!(code, class, decision = decision.name(), "attempt failed");
        }
        // A gateway client has its answer already (`CallNews::Answered`):
        // nobody waits on the route's completion.
        let unhurried = task.gateway.is_some() && matches!(judged.event, RouteEvent::Succeeded);
        match self
            .apply(
                task,
                started,
                judged.event,
                Changes {
                    unhurried,
                    ..judged.changes
                },
            )
            .await
        {
            Ok(_) => {}
            Err(EngineError::Stale { .. }) => self.supersede(attempt, now).await?,
            Err(error) => return Err(error.into_store_error()),
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
}

/// What a gateway call's waiting client hears of its attempt as the provider
/// streams it.
struct Tap {
    engine: Engine,
    id: TaskId,
    /// The generation the attempt started at: which attempt the news is of.
    generation: i64,
}

impl Tap {
    fn tell(&self, news: CallNews) {
        self.engine.inner.watchers.tell(&self.id, &news);
    }
}

impl providers::Observer for Tap {
    fn text(&self, piece: &str) {
        self.tell(CallNews::Text(self.generation, piece.to_owned()));
    }

    fn usage(&self, usage: providers::Usage) {
        self.tell(CallNews::Usage(self.generation, usage));
    }

    fn tool(&self, piece: &providers::ToolPiece) {
        self.tell(CallNews::Tool(self.generation, piece.clone()));
    }
}
