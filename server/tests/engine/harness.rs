//! One engine over a SQLite file, a manual clock and the real provider adapters,
//! driven through the services the API uses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use api::read::Read;
use api::{
    ActionRequest, ApiError, KeyEnvRules, ProfileId, ProfileRequest, ProviderId, ProviderRequest,
    RouteView, TaskId, TaskRequest, TaskView, TurnRequest,
};
use policy::route::{ManualAction, RouteState};
use serde_json::{Value, json};
use server::clock::{Clock, ManualClock};
use server::engine::{Engine, EngineSettings, Feed, ProviderCaller};
use server::error::AppError;
use server::secrets::FixedSecrets;
use server::services::Services;
use server::store::Store;
use tokio::sync::broadcast;

/// The manual clock's start: 2026-12-01T04:00:00Z.
pub const T0: i64 = 1_796_097_600_000;

/// How long a test waits, in real time, for something the engine does at once.
const PATIENCE: Duration = Duration::from_secs(20);

pub struct Harness {
    pub services: Services,
    pub clock: Arc<ManualClock>,
    pub engine: Engine,
    pub url: String,
    events: Mutex<broadcast::Receiver<Feed>>,
    /// Events read while waiting for another task, by task.
    seen: Mutex<Vec<RouteView>>,
    /// The last generation a wait returned, by task.
    last: Mutex<HashMap<TaskId, i64>>,
    _dir: Option<tempfile::TempDir>,
}

impl Harness {
    /// A started engine over a fresh database.
    pub async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("engine.db").display());
        let mut harness = Self::open(&url, T0).await;
        harness._dir = Some(dir);
        harness
    }

    /// A started engine over the database at `url` (a restart, when it exists).
    pub async fn open(url: &str, now_ms: i64) -> Self {
        Self::engine(url, now_ms, true).await
    }

    /// An engine over the database at `url` that is not started: what it is asked
    /// is committed, and nothing is dispatched (a process that died before it could).
    pub async fn unstarted(url: &str, now_ms: i64) -> Self {
        Self::engine(url, now_ms, false).await
    }

    /// A started engine, the replica `replica`, on the shared database at `url`
    /// (PostgreSQL), its clock at [`T0`].
    pub async fn replica(url: &str, replica: &str) -> Self {
        Self::engine_as(url, replica, T0, true).await
    }

    async fn engine(url: &str, now_ms: i64, start: bool) -> Self {
        Self::engine_as(url, "a", now_ms, start).await
    }

    async fn engine_as(url: &str, replica: &str, now_ms: i64, start: bool) -> Self {
        let store: Arc<dyn Store> = server::store::open(url, replica).await.unwrap();
        let clock = Arc::new(ManualClock::at_millis(now_ms));
        let engine = Engine::new(
            store.clone(),
            clock.clone(),
            Arc::new(ProviderCaller::new()),
            EngineSettings::default(),
        );
        let events = engine.subscribe();
        if start {
            engine.start().await.unwrap();
        }
        let services = Services {
            store,
            clock: clock.clone(),
            secrets: Arc::new(FixedSecrets::new([(
                "MOCK_API_KEY",
                "sk-mock-secret-value",
            )])),
            key_envs: KeyEnvRules::default(),
            engine: engine.clone(),
            open_tasks: server::services::OpenTasks::unlimited(),
            inbox_count: Default::default(),
        };
        Self {
            services,
            clock,
            engine,
            url: url.to_owned(),
            events: Mutex::new(events),
            seen: Mutex::new(Vec::new()),
            last: Mutex::new(HashMap::new()),
            _dir: None,
        }
    }

    pub fn now_ms(&self) -> i64 {
        self.clock.now().as_millis()
    }

    /// Move the clock; the scheduler fires what is due.
    pub fn advance_ms(&self, ms: i64) {
        self.clock.advance_ms(ms);
    }

    pub async fn provider(&self, body: Value) -> ProviderId {
        self.services
            .create_provider(Read::<ProviderRequest>::from_json(&body))
            .await
            .unwrap_or_else(|error| panic!("{error}"))
            .id
    }

    /// A simulated provider with this script.
    pub async fn simulated(&self, name: &str, script: Value) -> ProviderId {
        self.provider(
            json!({"name": name, "kind": "simulated", "family": "anthropic", "script": script}),
        )
        .await
    }

    /// A profile of `(provider, model, policy)` candidates, all enabled.
    pub async fn profile(&self, candidates: &[(&ProviderId, &str, Value)]) -> ProfileId {
        let candidates: Vec<Value> = candidates
            .iter()
            .map(|(provider, model, policy)| {
                json!({"provider_id": provider, "model": model, "enabled": true, "max_tokens": 1000, "policy": policy})
            })
            .collect();
        self.profile_json(json!({"name": format!("profile {}", uuid()), "candidates": candidates}))
            .await
    }

    pub async fn profile_json(&self, body: Value) -> ProfileId {
        self.services
            .create_profile(Read::<ProfileRequest>::from_json(&body))
            .await
            .unwrap_or_else(|error| panic!("{error}"))
            .id
    }

    pub async fn task(&self, profile: &ProfileId) -> TaskView {
        self.services
            .create_task(
                Read::<TaskRequest>::from_json(
                    &json!({"profile_id": profile, "prompt": "Say hello."}),
                ),
                None,
            )
            .await
            .unwrap_or_else(|error| panic!("{error}"))
            .0
    }

    pub async fn view(&self, id: &TaskId) -> TaskView {
        self.services.get_task(id).await.unwrap()
    }

    pub async fn act(
        &self,
        id: &TaskId,
        action: ManualAction,
        generation: i64,
    ) -> Result<TaskView, ApiError> {
        let body = serde_json::to_value(ActionRequest { action, generation }).unwrap();
        self.services
            .act(id, Read::<ActionRequest>::from_json(&body))
            .await
            .map_err(AppError::into_api_error)
    }

    pub async fn turn(&self, id: &TaskId, prompt: &str) -> Result<TaskView, ApiError> {
        self.services
            .new_turn(
                id,
                Read::<TurnRequest>::from_json(&json!({"prompt": prompt})),
            )
            .await
            .map_err(AppError::into_api_error)
    }

    /// The task's route once it is in `state`, past any generation a wait already
    /// returned for it; events come from the live stream, so each is committed.
    pub async fn wait(&self, id: &TaskId, state: RouteState) -> RouteView {
        self.wait_for(id, state.as_str(), |route| route.state == state)
            .await
    }

    /// The task's route once `accept` takes it (see [`Harness::wait`]).
    pub async fn wait_for(
        &self,
        id: &TaskId,
        what: &str,
        accept: impl Fn(&RouteView) -> bool,
    ) -> RouteView {
        let after = self.last.lock().unwrap().get(id).copied().unwrap_or(-1);
        let matches = |route: &RouteView| {
            route.task_id == *id && accept(route) && route.generation.get() > after
        };
        let found = tokio::time::timeout(PATIENCE, async {
            loop {
                {
                    let mut seen = self.seen.lock().unwrap();
                    if let Some(index) = seen.iter().position(matches) {
                        let route = seen.remove(index);
                        seen.retain(|other| {
                            other.task_id != *id || other.generation > route.generation
                        });
                        return route;
                    }
                }
                let published = {
                    let mut events = self.events.lock().unwrap();
                    events.try_recv()
                };
                match published {
                    Ok(Feed::Event(published)) => {
                        let route: RouteView = serde_json::from_str(&published.data).unwrap();
                        self.seen.lock().unwrap().push(route);
                    }
                    Ok(Feed::Resync) => panic!("the engine's own feed missed events"),
                    Ok(Feed::Cancel { .. }) => {}
                    Err(broadcast::error::TryRecvError::Empty) => {
                        tokio::time::sleep(Duration::from_millis(2)).await;
                    }
                    Err(error) => panic!("events: {error}"),
                }
            }
        })
        .await;
        let route = match found {
            Ok(route) => route,
            Err(_) => {
                let now = self.view(id).await;
                panic!(
                    "task {id} never reached {what} after generation {after}; it is {:#?}",
                    now.route
                )
            }
        };
        self.last
            .lock()
            .unwrap()
            .insert(id.clone(), route.generation.get());
        route
    }
}

impl Harness {
    /// The task once the store has it in `state`, read from the store (for a task
    /// another engine may be moving, whose events this one does not see).
    pub async fn stored(&self, id: &TaskId, state: RouteState) -> TaskView {
        testkit::eventually_async(PATIENCE, || async {
            let view = self.view(id).await;
            if view.route.state == state {
                Ok(view)
            } else {
                Err(format!(
                    "task {id} is not {}: {:?}",
                    state.as_str(),
                    view.route
                ))
            }
        })
        .await
    }
}

pub fn uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A version-2 policy with both sections as given.
pub fn policy(transient: Value, hard: Value) -> Value {
    json!({"version": 2, "transient": transient, "hard": hard})
}

/// A section: retry (enabled, max, initial ms), reset wait (enabled, max s), outcome.
pub fn section(retry: (bool, u32, u64), wait: (bool, u64), on_exhausted: &str) -> Value {
    json!({"retry": {"enabled": retry.0, "max_retries": retry.1, "initial_interval_ms": retry.2},
           "reset_wait": {"enabled": wait.0, "max_wait_s": wait.1},
           "on_exhausted": on_exhausted})
}

/// The defaults (SPEC 3).
pub fn defaults() -> Value {
    Value::Null
}
