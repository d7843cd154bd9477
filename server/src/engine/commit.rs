//! Every transition, the one way: the route machine decides the whole new route
//! (`policy::route::transition`), one [`TaskStore::commit`] writes it fenced by
//! the generation it was computed from (with the attempt, turn and circuit
//! changes and the event, in one transaction), and only then are its effects
//! carried out, in the commit's after-commit step.
//!
//! [`TaskStore::commit`]: crate::store::TaskStore::commit

use std::sync::Arc;

use api::{AttemptId, TaskId};
use policy::route::{RouteContext, RouteEffect, RouteEvent, RouteState, transition};

use super::wake::Lane;
use super::{Engine, EngineError, views};
use crate::domain::{
    AfterCommit, Attempt, AttemptEnd, CircuitChange, CompletedTurn, PassedOver, RouteCommit,
    RouteRecord, Task, TaskDetail, Turn,
};
use crate::store::StoreError;

/// What a transition writes besides the route.
#[derive(Debug, Default)]
pub(super) struct Changes {
    /// An attempt recorded as started (before its request is sent).
    pub(super) start_attempt: Option<Attempt>,
    /// An attempt finished.
    pub(super) finish_attempt: Option<(AttemptId, AttemptEnd)>,
    /// The turn's answer: its number, text, whether it was cut at its token
    /// budget, and who produced it.
    pub(super) complete_turn: Option<CompletedTurn>,
    /// A new turn's prompt (the turn's number is the one the transition gives).
    pub(super) new_turn: Option<String>,
    /// A change to the shared circuits.
    pub(super) circuit: Option<CircuitChange>,
    /// Answer the task as the transition left it (for a person's action, whose
    /// answer shows what they did, not what the dispatcher did a moment later).
    pub(super) read_back: bool,
    /// Nobody waits on it ([`RouteCommit::unhurried`]).
    pub(super) unhurried: bool,
}

/// A committed transition.
#[derive(Debug)]
pub(super) enum Applied {
    /// The route now.
    Committed(Box<RouteRecord>),
    /// The task as the transition left it (read before anything acted on it), as
    /// [`Changes::read_back`] asked.
    Answered(Box<TaskDetail>),
}

/// What a committed transition does next, and what it counts.
#[derive(Debug, Clone)]
struct AfterEffects {
    task_id: TaskId,
    /// The generation it was computed from.
    from: i64,
    state: RouteState,
    deadline_ms: Option<i64>,
    effects: Vec<RouteEffect>,
    decision: Option<&'static str>,
    /// The deadline it fired (a `DeadlineReached`), for its lateness.
    fired_deadline_ms: Option<i64>,
    /// The route after it, for a gateway call's waiting client.
    view: Option<Arc<api::RouteView>>,
}

/// A transition decided and ready to commit.
struct Prepared {
    /// The generation it was computed from.
    from: i64,
    /// The route after it.
    next: RouteRecord,
    commit: RouteCommit,
    after_effects: AfterEffects,
}

impl Engine {
    /// Decide a transition and make its commit: the machine decides the new route,
    /// and the commit carries it with what changes beside it, its event, and (unless
    /// it is read back, which carries them out itself) its effects as the
    /// after-commit step.
    fn decide(
        &self,
        task: &Task,
        record: &RouteRecord,
        event: &RouteEvent,
        changes: Changes,
    ) -> Result<Prepared, EngineError> {
        let context = RouteContext {
            next_candidate: task.next_enabled_after(record.route.candidate),
        };
        let decided =
            transition(&record.route, event, &context).map_err(|refused| EngineError::Refused {
                state: refused.state,
                event: refused.event,
            })?;
        let now = self.now();
        let next = RouteRecord {
            task_id: record.task_id.clone(),
            route: decided.route,
            updated_at: now,
        };
        let view = views::route_view(task, &next);
        let event_json: Arc<str> = serde_json::to_string(&view)
            .unwrap_or_else(|_| unreachable!("views serialize"))
            .into();
        let from = record.route.generation;
        let after_effects = AfterEffects {
            task_id: task.id.clone(),
            from,
            state: next.route.state,
            deadline_ms: next.route.deadline_ms,
            effects: decided.effects,
            decision: event.decision().map(|decision| decision.name()),
            fired_deadline_ms: matches!(event, RouteEvent::DeadlineReached)
                .then_some(record.route.deadline_ms)
                .flatten(),
            view: task.gateway.is_some().then(|| Arc::new(view)),
        };
        // The effects run right after the commit, in the store's after-commit step
        // (the store publishes the event itself): nothing waits for the committing
        // task to be scheduled again, and a caller that goes away (a client hanging
        // up) cannot leave a committed route without its effects. A person's action
        // is the exception: its answer is the task as the action left it, read
        // before the effects can move the route on.
        let after = {
            let engine = self.clone();
            let now = (!changes.read_back).then(|| after_effects.clone());
            AfterCommit::new(move |_| {
                if let Some(effects) = &now {
                    engine.carry_out(effects);
                }
            })
        };
        // A candidate left without a call is kept in the task's history.
        let passed_over = match event {
            RouteEvent::NotSent {
                decision, failure, ..
            } => task
                .candidates
                .get(record.route.candidate)
                .map(|candidate| PassedOver {
                    turn: record.route.turn,
                    candidate_index: record.route.candidate,
                    candidate_id: candidate.id.clone(),
                    provider_id: candidate.provider_id.clone(),
                    model: candidate.model.clone(),
                    at: now,
                    code: failure.code,
                    safe_cause: failure.safe_cause.clone(),
                    decision: *decision,
                }),
            _ => None,
        };
        let commit = RouteCommit {
            new_turn: changes
                .new_turn
                .map(|prompt| Turn::asked(next.route.turn, prompt, now)),
            route: next.clone(),
            start_attempt: changes.start_attempt,
            finish_attempt: changes.finish_attempt,
            complete_turn: changes.complete_turn,
            circuit: changes.circuit,
            passed_over,
            fires_deadline: matches!(event, RouteEvent::DeadlineReached),
            after,
            event_json,
            unhurried: changes.unhurried,
        };
        Ok(Prepared {
            from,
            next,
            commit,
            after_effects,
        })
    }

    /// A transition decided and made into its commit, not written: the route
    /// after it and the commit (for a store write that carries it, such as a
    /// new task's first start).
    pub(super) fn decide_commit(
        &self,
        task: &Task,
        record: &RouteRecord,
        event: &RouteEvent,
        changes: Changes,
    ) -> Result<(RouteRecord, RouteCommit), EngineError> {
        let prepared = self.decide(task, record, event, changes)?;
        Ok((prepared.next, prepared.commit))
    }

    /// Make one transition: the machine decides, the store commits it fenced by the
    /// route's generation, and only then are its effects carried out. Stale: the
    /// route moved on, and nothing was written.
    pub(super) async fn apply(
        &self,
        task: &Arc<Task>,
        record: &RouteRecord,
        event: RouteEvent,
        changes: Changes,
    ) -> Result<Applied, EngineError> {
        let read_back = changes.read_back;
        let Prepared {
            from,
            next,
            commit,
            after_effects,
        } = self.decide(task, record, &event, changes)?;
        let engine = self.clone();
        let task_id = task.id.clone();
        let committed = tokio::spawn(async move {
            let committed = engine.inner.store.commit(from, commit).await;
            let mut answer = None;
            if committed.is_ok() && read_back {
                answer = Some(engine.inner.store.get_task(&task_id).await);
                engine.carry_out(&after_effects);
            }
            committed.map(|_| answer)
        })
        .await
        .unwrap_or_else(|_| Err(StoreError::Write("a commit panicked".to_owned())));
        match committed {
            Ok(None) => Ok(Applied::Committed(Box::new(next))),
            Ok(Some(answer)) => Ok(Applied::Answered(Box::new(answer?))),
            Err(StoreError::StaleGeneration { current, .. }) => {
                tracing::debug!(task_id = %task.id, event = event.name(), "stale transition dropped");
                Err(EngineError::Stale {
                    sent: from,
                    task: task.clone(),
                    current,
                })
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Make many transitions at once (a pass over routes no process is moving),
    /// each decided and fenced as [`Engine::apply`] makes one, in as few commits as
    /// the store can. Answers how many were written: a route that moved on since it
    /// was read is left alone. A refusal refuses the whole batch, before anything is
    /// written.
    pub(super) async fn apply_all(
        &self,
        batch: Vec<(&Task, &RouteRecord, RouteEvent, Changes)>,
    ) -> Result<usize, EngineError> {
        let commits = batch
            .into_iter()
            .map(|(task, record, event, changes)| {
                self.decide(task, record, &event, changes)
                    .map(|prepared| (prepared.from, prepared.commit))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if commits.is_empty() {
            return Ok(0);
        }
        let store = self.inner.store.clone();
        // On its own, like every commit: effects never depend on the caller staying.
        let written = tokio::spawn(async move { store.commit_all(commits).await })
            .await
            .unwrap_or_else(|_| Err(StoreError::Write("a commit panicked".to_owned())))?;
        Ok(written.iter().filter(|event_id| event_id.is_some()).count())
    }

    /// A committed transition's effects, in the machine's order (publication is
    /// the commit's own), and its counts.
    fn carry_out(&self, done: &AfterEffects) {
        let AfterEffects {
            task_id: id,
            from,
            state,
            deadline_ms,
            effects,
            decision,
            fired_deadline_ms,
            view,
        } = done;
        metrics::counter!("switchback_transitions_total", "to" => state.as_str()).increment(1);
        if let Some(decision) = decision {
            metrics::counter!("switchback_decisions_total", "decision" => *decision).increment(1);
        }
        if let Some(deadline_ms) = fired_deadline_ms {
            // Deadline lateness: from the deadline to its firing being durable.
            #[allow(clippy::cast_precision_loss)]
            let lateness_s = (self.now().as_millis() - deadline_ms).max(0) as f64 / 1_000.0;
            metrics::histogram!("switchback_deadline_lateness_seconds").record(lateness_s);
        }
        for effect in effects {
            match effect {
                RouteEffect::ArmDeadline => self.inner.alarm.arm(deadline_ms.unwrap_or(i64::MIN)),
                RouteEffect::Enqueue => self.enqueue(id.clone(), Lane::of(*state)),
                RouteEffect::CancelInFlight => {
                    self.inner.in_flight.cancel(id, *from);
                    // The call may be in flight on another replica.
                    if self.inner.store.is_shared() {
                        let (store, id, from) = (self.inner.store.clone(), id.clone(), *from);
                        tokio::spawn(async move {
                            if let Err(error) = store.announce_cancel(&id, from).await {
                                tracing::warn!(task_id = %id, error = %crate::error::chain(&error), "telling the replicas to cut a call failed");
                            }
                        });
                    }
                }
            }
        }
        if let Some(view) = view {
            self.inner
                .watchers
                .tell(id, &super::CallNews::Route(view.clone()));
        }
        if matches!(state, RouteState::Completed | RouteState::Stopped) {
            self.inner.snapshots.forget(id);
        }
    }
}
