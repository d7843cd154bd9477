//! The durable route engine (SPEC 4, 5): tasks run through their candidates, and
//! every failure is recovered by the candidate's policy.
//!
//! The route machine (`policy::route`) decides every transition; the engine
//! only carries them out, in its order: **commit, then act**. Each transition is
//! one [`TaskStore::commit`](crate::store::TaskStore::commit), guarded by the
//! generation it was computed from; only after it commits is a deadline armed
//! (the scheduler woken), a route handed to the dispatcher, a request sent or
//! cancelled, or an event published. A transition computed from an older
//! generation writes nothing and does nothing.
//!
//! - [`dispatch`]: a `queued` or `retrying` route through its candidate's shared
//!   circuits, an attempt recorded as started, the call, and its outcome
//!   evaluated (the catalogue classifies, `policy::evaluate` decides).
//! - [`scheduler`]: deadlines live in the database; one loop sleeps until the
//!   earliest (through the [`Clock`]) and fires the due ones. On start, the
//!   restart pass of SPEC 5.
//! - [`views`]: the route as clients and live events see it.

mod caller;
mod dispatch;
mod scheduler;
pub mod views;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use api::{ApiError, TaskId, Timestamp};
use policy::route::{
    ManualAction, Route, RouteContext, RouteEffect, RouteEvent, RouteState, transition,
};
use policy::{Episode, OnExhausted};
use tokio::sync::{Notify, Semaphore, broadcast, mpsc};

pub use crate::domain::{Feed, Published};
pub use caller::{Caller, ProviderCaller};

use crate::clock::Clock;
use crate::domain::{
    AfterCommit, AttemptEnd, AttemptOutcome, RouteCommit, RouteRecord, Task, TaskDetail, TaskWrite,
    Turn,
};
use crate::error::AppError;
use crate::store::{Store, StoreError};

/// How many task snapshots are kept in memory.
const SNAPSHOTS_KEPT: usize = 65_536;

/// How the engine runs.
#[derive(Debug, Clone, Copy)]
pub struct EngineSettings {
    /// The most provider calls in flight at once.
    pub max_in_flight: usize,
    /// How many route events are kept for reconnecting clients.
    pub events_kept: i64,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            max_in_flight: 64,
            events_kept: 10_000,
        }
    }
}

/// What the engine did with a transition it was asked to make.
#[derive(Debug)]
pub enum Applied {
    /// Committed: the route now.
    Committed(Box<RouteRecord>),
    /// Committed, and the task as the transition left it (read before anything
    /// acted on it), as `Changes::read_back` asked.
    Answered(Box<TaskDetail>),
    /// The route had moved on: nothing was written.
    Stale(Box<RouteRecord>),
}

/// A route's call, registered before its start is committed: what cuts it.
struct InFlight {
    /// The generation its attempt started at.
    generation: i64,
    abort: futures_util::future::AbortHandle,
}

struct Inner {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    caller: Arc<dyn Caller>,
    settings: EngineSettings,
    events: broadcast::Sender<Feed>,
    /// Wakes the scheduler: a deadline earlier than the one it sleeps toward was
    /// armed (or a firing left its route due).
    wake: Arc<Notify>,
    /// The deadline the scheduler sleeps toward (`i64::MIN` while it is awake):
    /// a deadline armed later than this one needs no wake, and no read.
    sleeping_until_ms: std::sync::atomic::AtomicI64,
    /// The earliest deadline armed since the scheduler last woke: what its read
    /// may have missed.
    earliest_armed_ms: std::sync::atomic::AtomicI64,
    /// Routes handed to the dispatcher, by lane.
    due: mpsc::UnboundedSender<TaskId>,
    fresh: mpsc::UnboundedSender<TaskId>,
    receivers: Mutex<Option<Lanes>>,
    in_flight: Mutex<HashMap<TaskId, InFlight>>,
    /// Routes that wait for a half-open circuit's probe, by nothing more than id:
    /// they are handed to the dispatcher again when a probe finishes.
    parked: Mutex<HashSet<TaskId>>,
    permits: Arc<Semaphore>,
    /// Task snapshots, which never change: read once, kept up to a bound.
    snapshots: Mutex<HashMap<TaskId, Arc<Task>>>,
    /// Set once the server is stopping: no new attempt starts, event streams end.
    stopping: tokio::sync::watch::Sender<bool>,
    /// Whether the scheduler's thread runs (false before the start, and if it
    /// ever ends).
    scheduling: Arc<std::sync::atomic::AtomicBool>,
}

/// The route engine: cheap to clone.
#[derive(Clone)]
pub struct Engine {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Engine").finish_non_exhaustive()
    }
}

impl Engine {
    /// An engine over `store`; nothing runs until [`Engine::start`].
    pub fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        caller: Arc<dyn Caller>,
        settings: EngineSettings,
    ) -> Self {
        let (due, due_receiver) = mpsc::unbounded_channel();
        let (fresh, fresh_receiver) = mpsc::unbounded_channel();
        let (events, _) = broadcast::channel(4_096);
        // The store publishes every committed transition here, in commit order.
        store.attach_feed(events.clone());
        Self {
            inner: Arc::new(Inner {
                store,
                clock,
                caller,
                settings,
                events,
                wake: Arc::new(Notify::new()),
                sleeping_until_ms: std::sync::atomic::AtomicI64::new(i64::MIN),
                earliest_armed_ms: std::sync::atomic::AtomicI64::new(i64::MAX),
                due,
                fresh,
                receivers: Mutex::new(Some(Lanes {
                    due: due_receiver,
                    fresh: fresh_receiver,
                })),
                in_flight: Mutex::new(HashMap::new()),
                parked: Mutex::new(HashSet::new()),
                permits: Arc::new(Semaphore::new(settings.max_in_flight.max(1))),
                snapshots: Mutex::new(HashMap::new()),
                stopping: tokio::sync::watch::Sender::new(false),
                scheduling: Arc::default(),
            }),
        }
    }

    /// Reconcile what a previous run left (SPEC 5, restart), then run the
    /// dispatcher and the scheduler until the runtime shuts down. Answers once
    /// reconciliation is done, with how many routes it touched.
    pub async fn start(&self) -> Result<usize, StoreError> {
        let touched = self.reconcile().await?;
        let receivers = self
            .inner
            .receivers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .take();
        if let Some(receivers) = receivers {
            tokio::spawn(self.clone().run_dispatcher(receivers));
            self.spawn_scheduler()?;
            tokio::spawn(self.clone().run_pruner());
            if self.inner.store.is_shared() {
                tokio::spawn(self.clone().run_upkeep());
                tokio::spawn(self.clone().run_cancels());
            }
        }
        Ok(touched)
    }

    /// Run the scheduler on a thread of its own, with its own runtime: a deadline
    /// is fired when it comes, not after whatever provider I/O and HTTP work the
    /// shared runtime has queued (a thread that mostly sleeps is given a core
    /// as soon as it wakes). It ends with the runtime that started the engine.
    fn spawn_scheduler(&self) -> Result<(), StoreError> {
        let (keep, dropped) = tokio::sync::oneshot::channel::<()>();
        let engine = self.clone();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| StoreError::Write(format!("cannot start the scheduler: {error}")))?;
        /// Says the scheduler stopped, however its thread ends.
        struct Running(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Running {
            fn drop(&mut self) {
                self.0.store(false, std::sync::atomic::Ordering::SeqCst);
            }
        }
        self.inner
            .scheduling
            .store(true, std::sync::atomic::Ordering::SeqCst);
        let running = Running(self.inner.scheduling.clone());
        std::thread::Builder::new()
            .name("switchback-scheduler".to_owned())
            .spawn(move || {
                let _running = running;
                runtime.block_on(async move {
                    tokio::select! {
                        () = engine.run_scheduler() => {}
                        _ = dropped => {}
                    }
                });
            })
            .map_err(|error| StoreError::Write(format!("cannot start the scheduler: {error}")))?;
        // Dropped with the starting runtime's tasks, which ends the scheduler.
        tokio::spawn(async move {
            let _keep = keep;
            std::future::pending::<()>().await;
        });
        Ok(())
    }

    /// Whether the scheduler runs (it was started and has not ended).
    pub fn is_scheduling(&self) -> bool {
        self.inner
            .scheduling
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The live events of committed transitions.
    pub fn subscribe(&self) -> broadcast::Receiver<Feed> {
        self.inner.events.subscribe()
    }

    /// The server is stopping: start no new attempt, and end the event streams (a
    /// call in flight is cut when the process exits, and its route is held as
    /// interrupted on the next start).
    pub fn shut_down(&self) {
        self.inner.stopping.send_replace(true);
    }

    /// Resolves once [`Engine::shut_down`] was called.
    pub fn stopped(&self) -> impl std::future::Future<Output = ()> + Send + use<> {
        let mut receiver = self.inner.stopping.subscribe();
        async move {
            let _ = receiver.wait_for(|stopping| *stopping).await;
        }
    }

    pub(super) fn is_stopping(&self) -> bool {
        *self.inner.stopping.borrow()
    }

    /// The store the engine writes.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.inner.store
    }

    /// Now, by the engine's clock.
    fn now(&self) -> Timestamp {
        self.inner.clock.now()
    }

    /// Start a task (its snapshot, route and first turn are in `write`), or answer
    /// the first task of a repeated idempotency key (`false`).
    pub async fn create_task(&self, write: TaskWrite) -> Result<(TaskDetail, bool), AppError> {
        // On its own, like every commit: a caller that goes away leaves no task
        // undispatched.
        let engine = self.clone();
        let created = tokio::spawn(async move {
            let (detail, event_id) = engine.inner.store.create_task(write).await?;
            engine.keep_snapshot(detail.task.clone());
            // A repeat hands a still-queued first task over again: dispatching is
            // fenced.
            if detail.route.route.state == RouteState::Queued {
                engine.enqueue(detail.task.id.clone(), Lane::Fresh);
            }
            Ok::<_, StoreError>((detail, event_id.is_some()))
        })
        .await
        .unwrap_or_else(|_| Err(StoreError::Write("creating a task panicked".to_owned())))?;
        Ok(created)
    }

    /// A follow-up turn on a completed task: queued on the candidate that served the
    /// last turn.
    pub async fn new_turn(&self, id: &TaskId, prompt: String) -> Result<TaskDetail, AppError> {
        let detail = self.inner.store.get_task(id).await?;
        let now = self.now();
        let number = detail.route.turn + 1;
        let turn = Turn {
            number,
            prompt,
            answer: None,
            truncated: false,
            producer: None,
            created_at: now,
            completed_at: None,
        };
        let applied = self
            .apply(
                &detail.task,
                &detail.route,
                RouteEvent::NewTurn,
                Changes {
                    new_turn: Some(turn),
                    read_back: true,
                    ..Changes::default()
                },
                |record| {
                    record.turn = number;
                    record.escalations = 0;
                    record.max_tokens = None;
                    record.failure = None;
                    record.pending_outcome = None;
                    record.episode = Episode::default();
                },
            )
            .await;
        match applied {
            Ok(Applied::Answered(detail)) => Ok(*detail),
            Ok(Applied::Committed(_)) => Ok(self.inner.store.get_task(id).await?),
            Ok(Applied::Stale(current)) => {
                Err(ApiError::not_allowed_now("A new turn", current.route.state).into())
            }
            Err(Rejection::Refused(state)) => {
                Err(ApiError::not_allowed_now("A new turn", state).into())
            }
            Err(Rejection::Store(error)) => Err(error.into()),
        }
    }

    /// A person's action on a route, checked in SPEC 5's order once the body is
    /// read: the generation (409 with the route now), then the state (422).
    pub async fn act(
        &self,
        id: &TaskId,
        action: ManualAction,
        generation: i64,
    ) -> Result<TaskDetail, AppError> {
        let detail = self.inner.store.get_task(id).await?;
        if detail.route.route.generation != generation {
            return Err(ApiError::stale_generation(
                generation,
                views::route_view(&detail.task, &detail.route),
            )
            .into());
        }
        let now = self.now();
        // Stopping a route in flight ends its attempt as cancelled, in the same commit.
        let finish_attempt = (action == ManualAction::Stop
            && detail.route.route.state == RouteState::Running)
            .then(|| detail.end_unfinished(AttemptOutcome::Cancelled, now))
            .flatten();
        let applied = self
            .apply(
                &detail.task,
                &detail.route,
                RouteEvent::Action(action),
                Changes {
                    finish_attempt,
                    read_back: true,
                    ..Changes::default()
                },
                |record| {
                    if action == ManualAction::SkipNow {
                        record.failure = None;
                        record.pending_outcome = None;
                    }
                },
            )
            .await;
        match applied {
            Ok(Applied::Answered(detail)) => {
                // The route may have been a probe that others wait for.
                self.unpark();
                Ok(*detail)
            }
            Ok(Applied::Committed(_)) => {
                self.unpark();
                Ok(self.inner.store.get_task(id).await?)
            }
            Ok(Applied::Stale(current)) => Err(ApiError::stale_generation(
                generation,
                views::route_view(&detail.task, &current),
            )
            .into()),
            Err(Rejection::Refused(state)) => {
                Err(ApiError::not_allowed_now(action.as_str(), state).into())
            }
            Err(Rejection::Store(error)) => Err(error.into()),
        }
    }

    /// Make one transition: the machine decides, the store commits it fenced by the
    /// route's generation, and only then are its effects carried out. `update` sets
    /// what the engine keeps beside the machine's route.
    async fn apply(
        &self,
        task: &Task,
        record: &RouteRecord,
        event: RouteEvent,
        changes: Changes,
        update: impl FnOnce(&mut RouteRecord),
    ) -> Result<Applied, Rejection> {
        let context = RouteContext {
            next_candidate: task.next_enabled_after(record.route.candidate),
        };
        let decided = transition(&record.route, &event, &context)
            .map_err(|refused| Rejection::Refused(refused.state))?;
        let mut next = record.clone();
        next.route = decided.route;
        next.updated_at = self.now();
        if next.route.candidate != record.route.candidate {
            // Another candidate: a new episode, with its own token budget.
            next.escalations = 0;
            next.max_tokens = None;
        }
        update(&mut next);
        if !matches!(next.route.state, RouteState::Held | RouteState::Stopped)
            && next.route.decision.is_none()
        {
            next.pending_outcome = None;
        }
        let event_json: Arc<str> = serde_json::to_string(&views::route_view(task, &next))
            .unwrap_or_else(|_| unreachable!("views serialize"))
            .into();
        let (task_id, from) = (task.id.clone(), record.route.generation);
        let read_back = changes.read_back;
        let effects = Effects {
            task_id: task_id.clone(),
            from,
            state: next.route.state,
            deadline_ms: next.route.deadline_ms,
            effects: decided.effects,
            decision: match event {
                RouteEvent::Failed(decision) | RouteEvent::NotSent(decision) => {
                    Some(decision.name())
                }
                _ => None,
            },
            fired_deadline_ms: matches!(event, RouteEvent::DeadlineReached)
                .then_some(record.route.deadline_ms)
                .flatten(),
        };
        // The effects run right after the commit, in the store's after-commit step
        // (the store publishes the event itself): nothing waits for the committing
        // task to be scheduled again, and a caller that goes away (a client hanging
        // up) cannot leave a committed route without its effects. A person's action
        // is the exception: its answer is the task as the action left it, read
        // before the effects can move the route on.
        let after = {
            let engine = self.clone();
            let now = (!read_back).then(|| effects.clone());
            AfterCommit::new(move |_| {
                if let Some(effects) = &now {
                    engine.carry_out(effects);
                }
            })
        };
        let commit = RouteCommit {
            route: next.clone(),
            start_attempt: changes.start_attempt,
            finish_attempt: changes.finish_attempt,
            complete_turn: changes.complete_turn,
            new_turn: changes.new_turn,
            circuit: changes.circuit,
            fires_deadline: matches!(event, RouteEvent::DeadlineReached),
            after,
            event_json,
        };
        let engine = self.clone();
        let committed = tokio::spawn(async move {
            let committed = engine.inner.store.commit(from, commit).await;
            let mut answer = None;
            if committed.is_ok() && read_back {
                answer = Some(engine.inner.store.get_task(&task_id).await);
                engine.carry_out(&effects);
            }
            committed.map(|_| answer)
        })
        .await
        .unwrap_or_else(|_| Err(StoreError::Write("a commit panicked".to_owned())));
        match committed {
            Ok(None) => Ok(Applied::Committed(Box::new(next))),
            Ok(Some(answer)) => Ok(Applied::Answered(Box::new(
                answer.map_err(Rejection::Store)?,
            ))),
            Err(StoreError::StaleGeneration { current, .. }) => {
                tracing::debug!(task_id = %task.id, event = event.name(), "stale transition dropped");
                Ok(Applied::Stale(current))
            }
            Err(error) => Err(Rejection::Store(error)),
        }
    }

    /// A committed transition's effects, in the machine's order (publication is
    /// the after-commit step's own), and its counts.
    fn carry_out(&self, done: &Effects) {
        let Effects {
            task_id: id,
            from,
            state,
            deadline_ms,
            effects,
            decision,
            fired_deadline_ms,
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
                // Written, and published by the store once written.
                RouteEffect::Persist | RouteEffect::Send | RouteEffect::Publish => {}
                RouteEffect::ArmDeadline => self.arm(deadline_ms.unwrap_or(i64::MIN)),
                RouteEffect::Enqueue => self.enqueue(id.clone(), Lane::of(*state)),
                RouteEffect::CancelInFlight => {
                    self.cancel_in_flight(id, *from);
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
        let state = *state;
        // A finished task's snapshot is read again if a new turn ever needs it.
        if matches!(state, RouteState::Completed | RouteState::Stopped) {
            self.snapshots().remove(id);
        }
    }

    /// A deadline at `deadline_ms` is in the database: the scheduler is told
    /// without a wake while it is awake (it looks at `earliest_armed_ms` before it
    /// sleeps), woken if it sleeps toward a later one, and left alone otherwise.
    /// Both sides write, then read the other's atomic (sequentially consistent),
    /// so at least one of them sees the other: no deadline is missed.
    fn arm(&self, deadline_ms: i64) {
        use std::sync::atomic::Ordering::SeqCst;
        self.inner.earliest_armed_ms.fetch_min(deadline_ms, SeqCst);
        if deadline_ms < self.inner.sleeping_until_ms.load(SeqCst) {
            self.inner.wake.notify_one();
        }
    }

    /// A task's snapshot, from memory when it was read (or written) before.
    async fn snapshot(&self, id: &TaskId) -> Result<Arc<Task>, StoreError> {
        let kept = self.snapshots().get(id).cloned();
        match kept {
            Some(task) => Ok(task),
            None => Ok(self.keep_snapshot(self.inner.store.get_snapshot(id).await?)),
        }
    }

    fn keep_snapshot(&self, task: Task) -> Arc<Task> {
        let task = Arc::new(task);
        let mut snapshots = self.snapshots();
        // Bounded: forgetting them all now and then costs a read each, never a result.
        if snapshots.len() >= SNAPSHOTS_KEPT {
            snapshots.clear();
        }
        snapshots.insert(task.id.clone(), task.clone());
        task
    }

    fn snapshots(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, Arc<Task>>> {
        self.inner
            .snapshots
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Hand a route to the dispatcher.
    fn enqueue(&self, id: TaskId, lane: Lane) {
        let _ = match lane {
            Lane::Due => self.inner.due.send(id),
            Lane::Fresh => self.inner.fresh.send(id),
        };
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, HashMap<TaskId, InFlight>> {
        self.inner
            .in_flight
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Register the call of the attempt about to start at `generation`, so a stop
    /// can cut it from then on (before it is sent, too). Answers `false`, leaving
    /// the registered one alone, if the route already has a call on its way: a
    /// route handed to the dispatcher twice is dispatched once.
    fn register_call(
        &self,
        id: &TaskId,
        generation: i64,
        abort: futures_util::future::AbortHandle,
    ) -> bool {
        match self.in_flight().entry(id.clone()) {
            std::collections::hash_map::Entry::Occupied(_) => false,
            std::collections::hash_map::Entry::Vacant(vacant) => {
                vacant.insert(InFlight { generation, abort });
                true
            }
        }
    }

    /// Take back the call of the attempt started at `generation` (it returned, or
    /// never started). Answers `false` if a stop took it first (the route has moved
    /// on).
    fn take_call(&self, id: &TaskId, generation: i64) -> bool {
        let mut in_flight = self.in_flight();
        let ours = in_flight
            .get(id)
            .is_some_and(|call| call.generation == generation);
        if ours {
            in_flight.remove(id);
        }
        ours
    }

    /// Cut the calls other replicas stopped (a shared database's `Feed::Cancel`).
    async fn run_cancels(self) {
        let mut feed = self.subscribe();
        loop {
            match feed.recv().await {
                Ok(Feed::Cancel {
                    task_id,
                    generation,
                }) => self.cancel_in_flight(&task_id, generation),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }

    /// Cut the call of a route stopped while running at `generation`.
    fn cancel_in_flight(&self, id: &TaskId, generation: i64) {
        let mut in_flight = self.in_flight();
        if in_flight
            .get(id)
            .is_some_and(|call| call.generation <= generation)
            && let Some(call) = in_flight.remove(id)
        {
            tracing::info!(task_id = %id, generation = call.generation, "in-flight call cancelled");
            call.abort.abort();
        }
    }

    /// Hand every parked route to the dispatcher again (a probe finished).
    fn unpark(&self) {
        let parked: Vec<TaskId> = self
            .inner
            .parked
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .drain()
            .collect();
        for id in parked {
            self.enqueue(id, Lane::Due);
        }
    }
}

/// Which of the dispatcher's queues a route waits in. A route whose deadline came
/// (or that was already on its way) goes before new work, so a backlog of new
/// tasks does not make promised deadlines late.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Lane {
    /// Retrying, parked, or dispatched before: first.
    Due,
    /// New tasks, new turns, the next candidate: after.
    Fresh,
}

impl Lane {
    fn of(state: RouteState) -> Self {
        if state == RouteState::Retrying {
            Self::Due
        } else {
            Self::Fresh
        }
    }
}

/// The dispatcher's receiving ends.
struct Lanes {
    due: mpsc::UnboundedReceiver<TaskId>,
    fresh: mpsc::UnboundedReceiver<TaskId>,
}

/// What a committed transition does next, and what it counts.
#[derive(Debug, Clone)]
struct Effects {
    task_id: TaskId,
    /// The generation it was computed from.
    from: i64,
    state: RouteState,
    deadline_ms: Option<i64>,
    effects: Vec<RouteEffect>,
    decision: Option<&'static str>,
    /// The deadline it fired (a `DeadlineReached`), for its lateness.
    fired_deadline_ms: Option<i64>,
}

/// What a transition writes besides the route.
#[derive(Debug, Default)]
struct Changes {
    start_attempt: Option<crate::domain::Attempt>,
    finish_attempt: Option<(api::AttemptId, AttemptEnd)>,
    complete_turn: Option<(u32, String, bool, crate::domain::Producer)>,
    new_turn: Option<Turn>,
    circuit: Option<crate::domain::CircuitChange>,
    /// Answer the task as the transition left it (for a person's action, whose
    /// answer shows what they did, not what the dispatcher did a moment later).
    read_back: bool,
}

/// Why a transition was not made.
#[derive(Debug)]
enum Rejection {
    /// The machine refused it in this state.
    Refused(RouteState),
    /// The store failed.
    Store(StoreError),
}

/// A new task's route: `queued` on `candidate`, generation 0.
pub fn new_route(task_id: TaskId, candidate: usize, now: Timestamp) -> RouteRecord {
    RouteRecord {
        task_id,
        route: Route::new(candidate),
        failure: None,
        pending_outcome: None::<OnExhausted>,
        episode: Episode::default(),
        turn: 1,
        escalations: 0,
        max_tokens: None,
        updated_at: now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::ManualClock;

    async fn engine() -> (tempfile::TempDir, Engine) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("engine.db").display());
        let store = crate::store::SqliteStore::open(&url).await.unwrap();
        let engine = Engine::new(
            Arc::new(store),
            Arc::new(ManualClock::at_millis(0)),
            Arc::new(ProviderCaller::new()),
            EngineSettings::default(),
        );
        (dir, engine)
    }

    /// A call as the dispatcher spawns it: abortable, and saying whether it ran.
    fn call(
        registration: futures_util::future::AbortRegistration,
        ran: Arc<std::sync::atomic::AtomicBool>,
        forever: bool,
    ) -> tokio::task::JoinHandle<Result<(), futures_util::future::Aborted>> {
        tokio::spawn(futures_util::future::Abortable::new(
            async move {
                ran.store(true, std::sync::atomic::Ordering::SeqCst);
                if forever {
                    std::future::pending::<()>().await;
                }
            },
            registration,
        ))
    }

    #[tokio::test]
    async fn a_stop_cuts_the_call_in_flight() {
        let (_dir, engine) = engine().await;
        let id = TaskId::new("t");
        let (abort, registration) = futures_util::future::AbortHandle::new_pair();
        assert!(engine.register_call(&id, 3, abort));
        let ran = Arc::default();
        let call = call(registration, Arc::clone(&ran), true);
        tokio::task::yield_now().await;
        engine.cancel_in_flight(&id, 3);
        assert!(call.await.unwrap().is_err(), "the call was cut");
        assert!(!engine.take_call(&id, 3), "and is no longer the route's");
        assert!(engine.in_flight().is_empty());
    }

    #[tokio::test]
    async fn a_stop_between_the_start_and_the_send_keeps_the_call_from_running() {
        let (_dir, engine) = engine().await;
        let id = TaskId::new("t");
        let (abort, registration) = futures_util::future::AbortHandle::new_pair();
        assert!(engine.register_call(&id, 3, abort));
        engine.cancel_in_flight(&id, 3);
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let call = call(registration, Arc::clone(&ran), false);
        assert!(call.await.unwrap().is_err(), "cut before it started");
        assert!(
            !ran.load(std::sync::atomic::Ordering::SeqCst),
            "it never ran"
        );
        assert!(!engine.take_call(&id, 3));
    }

    #[tokio::test]
    async fn a_second_dispatch_of_a_route_leaves_the_first_call_alone() {
        let (_dir, engine) = engine().await;
        let id = TaskId::new("t");
        let (first, _) = futures_util::future::AbortHandle::new_pair();
        let (second, _) = futures_util::future::AbortHandle::new_pair();
        assert!(engine.register_call(&id, 3, first));
        assert!(
            !engine.register_call(&id, 3, second),
            "the route already has a call on its way"
        );
        assert!(
            engine.take_call(&id, 3),
            "the first call is still the route's"
        );
    }

    #[tokio::test]
    async fn a_call_is_its_routes_unless_a_stop_of_its_generation_took_it() {
        let (_dir, engine) = engine().await;
        let id = TaskId::new("t");
        let (abort, registration) = futures_util::future::AbortHandle::new_pair();
        assert!(engine.register_call(&id, 3, abort));
        // A stop from before this attempt's start (it lost to the start) cuts nothing.
        engine.cancel_in_flight(&id, 2);
        let ran = Arc::new(std::sync::atomic::AtomicBool::new(false));
        assert!(
            call(registration, Arc::clone(&ran), false)
                .await
                .unwrap()
                .is_ok()
        );
        assert!(ran.load(std::sync::atomic::Ordering::SeqCst));
        assert!(engine.take_call(&id, 3), "it came back to its route");
        assert!(engine.in_flight().is_empty(), "and nothing is left behind");
    }
}
