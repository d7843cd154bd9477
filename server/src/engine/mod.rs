//! The durable route engine (SPEC 4, 5): tasks run through their candidates, and
//! every failure is recovered by the candidate's policy.
//!
//! The route machine (`policy::route`) decides every transition, the whole route
//! with it; the engine only carries them out, in its order: **commit, then act**.
//! Each transition is one [`TaskStore::commit`](crate::store::TaskStore::commit),
//! guarded by the generation it was computed from; only after it commits is a
//! deadline armed (the scheduler woken), a route handed to the dispatcher, a
//! request sent or cancelled, or an event published. A transition computed from an
//! older generation writes nothing and does nothing.
//!
//! - [`commit`]: the one way a transition is made, and its effects carried out.
//! - [`judge`]: what a call's outcome does to its route, and what a route due to
//!   send does about an open circuit: pure.
//! - [`dispatch`]: a `queued` or `retrying` route through its candidate's shared
//!   circuits, an attempt recorded as started, the call, its outcome judged.
//! - [`in_flight`]: the calls in flight, which a stop cuts.
//! - [`scheduler`]: deadlines live in the database; one loop sleeps until the
//!   earliest (through the [`Clock`]) and fires the due ones.
//! - [`restart`]: the restart pass of SPEC 5; [`upkeep`]: the event log's bound,
//!   and what other replicas did or left.
//! - [`wake`]: the scheduler's alarm, the dispatcher's lanes, parked routes;
//!   [`snapshots`]: task snapshots kept in memory.
//! - [`views`]: the route as clients and live events see it.

mod caller;
mod calls;
mod commit;
mod dispatch;
mod error;
mod in_flight;
mod judge;
mod pauses;
mod restart;
mod scheduler;
mod snapshots;
mod upkeep;
pub mod views;
mod wake;

use std::sync::{Arc, Mutex};

use api::{TaskId, Timestamp};
use policy::route::{ManualAction, Route, RouteEvent, RouteState};
use tokio::sync::{Semaphore, broadcast};

pub use crate::domain::{Feed, Published};
pub use caller::{Caller, ProviderCaller};
pub use calls::{CallNews, Watch};
pub use error::EngineError;

use crate::clock::Clock;
use crate::domain::{AttemptOutcome, CircuitKey, RouteRecord, Task, TaskDetail, TaskWrite, Turn};
use crate::store::{Store, StoreError};
use commit::{Applied, Changes};
use wake::{Alarm, Lane, Lanes, Parked, Senders};

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

struct Inner {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    caller: Arc<dyn Caller>,
    settings: EngineSettings,
    events: broadcast::Sender<Feed>,
    /// What wakes the scheduler.
    alarm: Alarm,
    /// Routes handed to the dispatcher, by lane.
    senders: Senders,
    receivers: Mutex<Option<Lanes>>,
    in_flight: in_flight::InFlight,
    /// Routes that wait for a half-open circuit's probe.
    parked: Parked,
    /// What a person paused, and the routes held back by it.
    pauses: pauses::Pauses,
    permits: Arc<Semaphore>,
    snapshots: snapshots::Snapshots,
    /// The gateway's clients waiting on their calls.
    watchers: calls::Watchers,
    /// Set once the server is stopping: no new attempt starts, event streams end.
    stopping: tokio::sync::watch::Sender<bool>,
    /// Whether the scheduler's thread runs (false before the start, and if it
    /// ever ends).
    scheduling: Arc<std::sync::atomic::AtomicBool>,
    /// Firings that found their route held by another transaction and stepped
    /// aside (read again later), since the start.
    stepped_aside: std::sync::atomic::AtomicU64,
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
        let (senders, lanes) = wake::lanes();
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
                alarm: Alarm::new(),
                senders,
                receivers: Mutex::new(Some(lanes)),
                in_flight: in_flight::InFlight::default(),
                parked: Parked::default(),
                pauses: pauses::Pauses::default(),
                permits: Arc::new(Semaphore::new(settings.max_in_flight.max(1))),
                snapshots: snapshots::Snapshots::default(),
                watchers: calls::Watchers::default(),
                stopping: tokio::sync::watch::Sender::new(false),
                scheduling: Arc::default(),
                stepped_aside: std::sync::atomic::AtomicU64::new(0),
            }),
        }
    }

    /// Reconcile what a previous run left (SPEC 5, restart), then run the
    /// dispatcher and the scheduler until the runtime shuts down. Answers once
    /// reconciliation is done, with how many routes it touched.
    pub async fn start(&self) -> Result<usize, StoreError> {
        // What was paused before the restart holds from the first dispatch.
        self.reload_pauses().await?;
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
                tokio::spawn(self.clone().run_feed_to_watchers());
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

    /// How many firings found their route held by another transaction (another
    /// replica's commit, a person's action in flight) and stepped aside rather
    /// than wait on it, since this engine was made; also counted in
    /// `switchback_firings_stepped_aside_total`.
    pub fn firings_stepped_aside(&self) -> u64 {
        self.inner
            .stepped_aside
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
    pub async fn create_task(&self, write: TaskWrite) -> Result<(TaskDetail, bool), EngineError> {
        // On its own, like every commit: a caller that goes away leaves no task
        // undispatched.
        let engine = self.clone();
        let created = tokio::spawn(async move {
            let (detail, event_id) = engine.inner.store.create_task(write).await?;
            engine.inner.snapshots.keep(detail.task.clone());
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
    pub async fn new_turn(&self, id: &TaskId, prompt: String) -> Result<TaskDetail, EngineError> {
        let detail = self.inner.store.get_task(id).await?;
        let task = Arc::new(detail.task);
        let applied = self
            .apply(
                &task,
                &detail.route,
                RouteEvent::NewTurn,
                Changes {
                    new_turn: Some(prompt),
                    read_back: true,
                    ..Changes::default()
                },
            )
            .await?;
        self.answer(id, applied).await
    }

    /// A person's action on a route, checked in SPEC 5's order once the body is
    /// read: the generation (stale, with the route now), then the state (refused).
    pub async fn act(
        &self,
        id: &TaskId,
        action: ManualAction,
        generation: i64,
    ) -> Result<TaskDetail, EngineError> {
        let detail = self.inner.store.get_task(id).await?;
        let task = Arc::new(detail.task.clone());
        if detail.route.route.generation != generation {
            return Err(EngineError::Stale {
                sent: generation,
                task,
                current: Box::new(detail.route),
            });
        }
        let now = self.now();
        // Stopping a route in flight ends its attempt as cancelled, in the same commit.
        let finish_attempt = (action == ManualAction::Stop
            && detail.route.route.state == RouteState::Running)
            .then(|| detail.end_unfinished(AttemptOutcome::Cancelled, now))
            .flatten();
        let applied = self
            .apply(
                &task,
                &detail.route,
                RouteEvent::Action(action),
                Changes {
                    finish_attempt,
                    read_back: true,
                    ..Changes::default()
                },
            )
            .await?;
        // The route may have been a probe that others wait for.
        self.unpark();
        self.answer(id, applied).await
    }

    /// A person's "Close now" on the circuit `key` as they saw it, half-opening at
    /// `until_ms`: it goes, the closing is recorded, and the routes waiting on it
    /// (and those parked behind its probe) are dispatched now. `None` when the
    /// circuit is not there with that reset any more: nothing changed.
    pub async fn close_circuit(
        &self,
        key: &CircuitKey,
        until_ms: i64,
    ) -> Result<Option<Vec<TaskId>>, StoreError> {
        let now_ms = self.now().as_millis();
        let woken = self
            .inner
            .store
            .close_circuit(key, until_ms, now_ms)
            .await?;
        if let Some(woken) = &woken {
            tracing::info!(
                provider_id = %key.provider_id,
                model = key.model.as_deref().unwrap_or(""),
                routes = woken.len(),
                "a person closed a circuit"
            );
            if !woken.is_empty() {
                self.inner.alarm.arm(now_ms);
            }
            self.unpark();
        }
        Ok(woken)
    }

    /// The client waiting for a gateway call's answer went away (or its deadline
    /// passed): stop the route (cause `cancelled_by_client`), cutting a call in
    /// flight, its attempt finished as cancelled in the same commit. A route that
    /// already ended, or is held for a person, is left as it is.
    pub async fn cancel_for_client(&self, id: &TaskId) -> Result<(), EngineError> {
        // A transition may commit between the read and the stop: read again.
        for _ in 0..8 {
            let detail = self.inner.store.get_task(id).await?;
            if !matches!(
                detail.route.route.state,
                RouteState::Queued
                    | RouteState::RetryWait
                    | RouteState::WaitingForReset
                    | RouteState::Retrying
                    | RouteState::Running
            ) {
                return Ok(());
            }
            let task = Arc::new(detail.task.clone());
            let finish_attempt = (detail.route.route.state == RouteState::Running)
                .then(|| detail.end_unfinished(AttemptOutcome::Cancelled, self.now()))
                .flatten();
            match self
                .apply(
                    &task,
                    &detail.route,
                    RouteEvent::ClientCancelled,
                    Changes {
                        finish_attempt,
                        ..Changes::default()
                    },
                )
                .await
            {
                Ok(_) => {
                    self.unpark();
                    return Ok(());
                }
                Err(EngineError::Stale { .. }) => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }

    /// The task as a person's transition left it.
    async fn answer(&self, id: &TaskId, applied: Applied) -> Result<TaskDetail, EngineError> {
        match applied {
            Applied::Answered(detail) => Ok(*detail),
            Applied::Committed(_) => Ok(self.inner.store.get_task(id).await?),
        }
    }
}

/// A new task's write: its route `queued` on its first enabled candidate
/// (generation 0), its first turn asking `prompt`, and its creation event, all
/// at the task's creation time; `None` when no candidate is enabled.
pub fn task_write(
    task: Task,
    prompt: String,
    idempotency_key: Option<String>,
) -> Option<TaskWrite> {
    let now = task.created_at;
    let route = RouteRecord {
        task_id: task.id.clone(),
        route: Route::new(task.first_enabled()?),
        updated_at: now,
    };
    let event_json = serde_json::to_string(&views::route_view(&task, &route))
        .unwrap_or_else(|_| unreachable!("views serialize"));
    Some(TaskWrite {
        turn: Turn::asked(1, prompt, now),
        task,
        route,
        idempotency_key,
        event_json: event_json.into(),
        start: None,
    })
}
