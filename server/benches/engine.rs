//! The route engine under load, on SQLite, with the system clock (a bench
//! binary, not a timed test):
//!
//! 1. N tasks (default 10,000) through a loopback OpenAI-style provider that
//!    answers each task's first two calls with 429 + `retry-after: 0` and its
//!    third with a streamed reply: committed transitions per second, deadline
//!    lateness p50/p99 (the engine's `switchback_deadline_lateness_seconds`, read
//!    through a recorder of the bench's own: each deadline to its firing being
//!    durable), each retry's deadline to its attempt's start, and the process's
//!    peak RSS.
//! 2. Restart reconciliation with M routes (default 100,000) left in the
//!    database by a server that stopped: waiting on SQLite, and interrupted
//!    mid-call (running, their attempt unfinished) on SQLite and on PostgreSQL
//!    (`SWITCHBACK_TEST_POSTGRES_URL`, else the local `test` database): the time
//!    from opening the store to the engine's first scheduler pass.
//!
//! `cargo bench --workspace --bench engine --profile release -- [TASKS] [WAITING]
//! [RATE]`: RATE tasks a second (0, the default: all at once, to saturation). CI
//! runs it small.

mod common;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::read::Read;
use api::{KeyEnvRules, ProfileRequest, ProviderRequest, TaskRequest};
use common::process::status_mb;
use common::{Lateness, percentile};
use futures_util::StreamExt;
use policy::route::RouteState;
use providers::mock::{MockProvider, MockResponse};
use serde_json::json;
use server::clock::{Clock, SystemClock};
use server::engine::{Engine, EngineSettings, ProviderCaller};
use server::secrets::FixedSecrets;
use server::services::Services;
use server::store::{PostgresStore, SqliteStore, Store, default_replica};

async fn open(path: &std::path::Path) -> (Arc<dyn Store>, String) {
    let url = format!("sqlite://{}", path.display());
    (Arc::new(SqliteStore::open(&url).await.unwrap()), url)
}

async fn load(tasks: usize, rate: usize, recorded: &Lateness) {
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let (store, _) = open(&dir.path().join("bench.db")).await;
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let engine = Engine::new(
        store.clone(),
        clock.clone(),
        Arc::new(ProviderCaller::new()),
        EngineSettings {
            max_in_flight: std::env::var("BENCH_MAX_IN_FLIGHT")
                .ok()
                .and_then(|value| value.parse().ok())
                .unwrap_or(EngineSettings::default().max_in_flight),
            ..EngineSettings::default()
        },
    );
    engine.start().await.unwrap();
    let services = Services {
        store: store.clone(),
        clock,
        secrets: Arc::new(FixedSecrets::new([("BENCH_API_KEY", "x")])),
        key_envs: KeyEnvRules::default(),
        engine: engine.clone(),
        open_tasks: server::services::OpenTasks::unlimited(),
        inbox_count: Default::default(),
    };
    // Each task's first two calls are throttled (`retry-after: 0`), its third
    // answered; each task's prompt is its own.
    let mock = MockProvider::scripted(|call| {
        if call.nth <= 2 {
            MockResponse::openai_throttled()
        } else {
            MockResponse::reply("Hello")
        }
    })
    .await;
    let base_url = mock.base_url();
    let provider = services
        .create_provider(Read::<ProviderRequest>::from_json(&json!({
            "name": "loopback", "kind": "openai_compatible", "base_url": base_url})))
        .await
        .unwrap();
    let policy = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "skip"}});
    let profile = services
        .create_profile(Read::<ProfileRequest>::from_json(&json!({"name": "bench",
            "candidates": [{"provider_id": provider.id, "model": "m", "enabled": true, "max_tokens": 64, "policy": policy}]})))
        .await
        .unwrap();
    let mut events = engine.subscribe();
    let started = Instant::now();
    let first_event = store.last_event_id().await.unwrap();
    // Created by 64 clients at once, as through the API; at `rate` tasks a second
    // if given, else as fast as they are taken.
    let period = (rate > 0).then(|| Duration::from_secs_f64(1.0 / rate as f64));
    let begun = tokio::time::Instant::now();
    futures_util::stream::iter(0..tasks)
        .then(|index| async move {
            if let Some(period) = period {
                tokio::time::sleep_until(begun + period * u32::try_from(index).unwrap()).await;
            }
            index
        })
        .map(|index| {
            let services = &services;
            let profile_id = &profile.id;
            async move {
                services
                    .create_task(
                        Read::<TaskRequest>::from_json(
                            &json!({"profile_id": profile_id, "prompt": format!("task {index}")}),
                        ),
                        None,
                    )
                    .await
                    .unwrap();
            }
        })
        .buffer_unordered(64)
        .collect::<()>()
        .await;
    let created = started.elapsed();
    let mut completed = 0;
    while completed < tasks {
        match tokio::time::timeout(Duration::from_secs(60), events.recv()).await {
            Ok(Ok(server::engine::Feed::Cancel { .. })) => {}
            Ok(Ok(server::engine::Feed::Event(published))) => {
                if published.data.contains("\"state\":\"completed\"") {
                    completed += 1;
                }
            }
            Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {
                completed = store
                    .count_routes()
                    .await
                    .unwrap()
                    .iter()
                    .find(|(state, _)| *state == RouteState::Completed)
                    .map_or(0, |(_, count)| *count as usize);
            }
            other => panic!("stalled: {other:?}"),
        }
    }
    let elapsed = started.elapsed();
    let transitions = store.last_event_id().await.unwrap() - first_event;
    // Lateness: each retry's deadline (its decision's `at_ms`) to its attempt's start.
    let mut lateness = Vec::new();
    let page = services
        .list_tasks(api::TaskQuery {
            state: None,
            limit: Some(200),
            cursor: None,
        })
        .await
        .unwrap();
    let mut cursor = None;
    let mut pages = vec![page];
    while let Some(next) = pages.last().and_then(|page| page.next_cursor.clone()) {
        if cursor.as_ref() == Some(&next) {
            break;
        }
        cursor = Some(next.clone());
        pages.push(
            services
                .list_tasks(api::TaskQuery {
                    state: None,
                    limit: Some(200),
                    cursor: Some(next),
                })
                .await
                .unwrap(),
        );
    }
    for summary in pages.iter().flat_map(|page| page.tasks.iter()) {
        let detail = store.get_task(&summary.id).await.unwrap();
        for pair in detail.attempts.windows(2) {
            if let Some(policy::Decision::Retry { at_ms, .. }) =
                pair[0].end.as_ref().and_then(|end| end.decision)
            {
                lateness.push(pair[1].started_at.as_millis() - at_ms);
            }
        }
    }
    lateness.sort_unstable();
    let durable = recorded.sorted_ms();
    println!(
        "load: {tasks} tasks ({}) created in {:.2} s, all completed in {:.2} s",
        if rate > 0 {
            format!("{rate} a second")
        } else {
            "all at once".to_owned()
        },
        created.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    println!(
        "load: {transitions} committed transitions, {:.0} transitions/s",
        transitions as f64 / elapsed.as_secs_f64()
    );
    println!(
        "load: deadline to the retry's attempt start p50 {} ms, p99 {} ms, max {} ms over {} retries",
        percentile(&lateness, 0.50),
        percentile(&lateness, 0.99),
        lateness.last().copied().unwrap_or(0),
        lateness.len()
    );
    println!(
        "load: deadline lateness (switchback_deadline_lateness_seconds: deadline to the firing durable) p50 {} ms, p99 {} ms, max {} ms over {} firings",
        percentile(&durable, 0.50),
        percentile(&durable, 0.99),
        durable.last().copied().unwrap_or(0),
        durable.len()
    );
    println!("load: peak RSS {:.0} MB", status_mb("self", "VmHWM:"));
}

/// What the routes left in the database were doing when their server stopped.
#[derive(Clone, Copy, Debug)]
enum Left {
    /// In `retry_wait`, their deadline an hour out: the restart pass reads them
    /// and leaves them armed.
    Waiting,
    /// `running`, their attempt started and never finished (a call in flight
    /// when the process died): each is held `interrupted` and its attempt
    /// finished as interrupted.
    MidCall,
}

/// The rows of `count` routes left as `left` says, written by the database
/// itself (one statement a table): task, candidate snapshot, turn, route and,
/// mid-call, the unfinished attempt. `series` is the driver's row source of
/// `i` from 0, `id` its expression for the task id.
fn seed_statements(left: Left, series: &str, id: &str, now_ms: i64) -> Vec<String> {
    let policy = serde_json::to_string(&policy::PolicyDocument::default()).unwrap();
    let (state, deadline, generation) = match left {
        Left::Waiting => ("retry_wait", format!("{}", now_ms + 3_600_000), 3),
        Left::MidCall => ("running", "NULL".to_owned(), 2),
    };
    let mut statements = vec![
        format!(
            "INSERT INTO tasks (id, profile_id, profile_name, created_at_ms) \
             SELECT {id}, 'p', 'bench', {now_ms} FROM {series}"
        ),
        format!(
            "INSERT INTO task_candidates (task_id, position, candidate_id, provider_id, model, enabled, max_tokens, escalation_json, policy_json) \
             SELECT {id}, 0, 'c', 'p', 'm', TRUE, 64, '{{\"max_escalations\":1,\"ceiling_tokens\":32768}}', '{policy}' FROM {series}"
        ),
        format!(
            "INSERT INTO turns (task_id, number, prompt, created_at_ms) \
             SELECT {id}, 1, 'hello', {now_ms} FROM {series}"
        ),
        format!(
            "INSERT INTO routes (task_id, state, generation, candidate_index, deadline_ms, retry_ordinal, new_episode, episode_json, turn, updated_at_ms) \
             SELECT {id}, '{state}', {generation}, 0, {deadline}, 1, FALSE, '{{\"retries\":{{\"transient\":1,\"hard\":0}},\"waited_for_reset\":false}}', 1, {now_ms} FROM {series}"
        ),
    ];
    if let Left::MidCall = left {
        statements.push(format!(
            "INSERT INTO attempts (id, task_id, seq, turn, generation, candidate_index, candidate_id, provider_id, model, max_tokens, started_at_ms) \
             SELECT 'a' || {id}, {id}, 1, 1, {generation}, 0, 'c', 'p', 'm', 64, {now_ms} FROM {series}"
        ));
    }
    statements
}

/// The time from opening the store to the engine's first scheduler pass done,
/// with `count` routes left as `left` says: what a restarted server takes
/// before every route is where it should be. Checks that each route ended
/// where the restart pass puts it.
async fn reconciliation(driver: Driver, left: Left, count: usize) {
    let dir = tempfile::tempdir_in(std::env::current_dir().unwrap()).unwrap();
    let now_ms = SystemClock.now().as_millis();
    let opened = driver.open(dir.path()).await;
    opened.store.close().await;
    let (series, id) = match driver {
        Driver::Sqlite => (
            format!(
                "(WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < {count}) SELECT i FROM n)"
            ),
            "printf('t%07d', i)",
        ),
        Driver::Postgres => (
            format!("generate_series(0, {count} - 1) AS n(i)"),
            "'t' || lpad(i::text, 7, '0')",
        ),
    };
    let seeding = Instant::now();
    let statements = seed_statements(left, &series, id, now_ms);
    match driver {
        Driver::Sqlite => {
            common::execute_all(
                sqlx::SqlitePool::connect(&opened.url).await.unwrap(),
                statements,
            )
            .await
        }
        Driver::Postgres => {
            common::execute_all(
                sqlx::PgPool::connect(&opened.url).await.unwrap(),
                statements,
            )
            .await
        }
    }
    let seeded = seeding.elapsed();

    let started = Instant::now();
    let opened = driver.reopen(&opened).await;
    let engine = Engine::new(
        opened.store.clone(),
        Arc::new(SystemClock),
        Arc::new(ProviderCaller::new()),
        EngineSettings::default(),
    );
    engine.start().await.unwrap();
    let fired = engine.fire_due().await.unwrap();
    let elapsed = started.elapsed();
    let counts: HashMap<RouteState, i64> = opened
        .store
        .count_routes()
        .await
        .unwrap()
        .into_iter()
        .collect();
    let expected = match left {
        Left::Waiting => RouteState::RetryWait,
        Left::MidCall => RouteState::Held,
    };
    assert_eq!(
        counts.get(&expected).copied(),
        Some(count as i64),
        "every route {expected:?} after the restart pass: {counts:?}"
    );
    println!(
        "restart on {driver:?}: {count} routes left {left:?} reconciled (store opened, restart pass, first scheduler pass: {fired} due) in {:.0} ms (seeded in {:.0} ms); routes by state {counts:?}",
        elapsed.as_secs_f64() * 1_000.0,
        seeded.as_secs_f64() * 1_000.0,
    );
    engine.shut_down();
    engine.stopped().await;
    opened.store.close().await;
}

#[derive(Clone, Copy, Debug)]
enum Driver {
    Sqlite,
    Postgres,
}

/// A store as the server opens it, and the URL it was opened on.
struct Opened {
    store: Arc<dyn Store>,
    url: String,
}

impl Driver {
    /// A new, empty database of this driver's (a file in `dir`, or a schema of
    /// its own in the test PostgreSQL), migrated.
    async fn open(self, dir: &std::path::Path) -> Opened {
        match self {
            Driver::Sqlite => {
                let (store, url) = open(&dir.join("restart.db")).await;
                Opened { store, url }
            }
            Driver::Postgres => {
                let (_schema, url) = testkit::postgres::schema("switchback_bench_restart")
                    .await
                    .unwrap();
                let store = PostgresStore::open(&url, &default_replica(&url))
                    .await
                    .unwrap();
                Opened {
                    store: Arc::new(store),
                    url,
                }
            }
        }
    }

    /// The same database opened again, as a restarted server opens it (on
    /// PostgreSQL, under the name a server without `--replica` takes).
    async fn reopen(self, opened: &Opened) -> Opened {
        let store: Arc<dyn Store> = match self {
            Driver::Sqlite => Arc::new(SqliteStore::open(&opened.url).await.unwrap()),
            Driver::Postgres => Arc::new(
                PostgresStore::open(&opened.url, &default_replica(&opened.url))
                    .await
                    .unwrap(),
            ),
        };
        Opened {
            store,
            url: opened.url.clone(),
        }
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let tasks = args.first().copied().unwrap_or(10_000);
    let waiting = args.get(1).copied().unwrap_or(100_000);
    let rate = args.get(2).copied().unwrap_or(0);
    let recorded = Lateness::default();
    metrics::set_global_recorder(recorded.clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        load(tasks, rate, &recorded).await;
        reconciliation(Driver::Sqlite, Left::Waiting, waiting).await;
        reconciliation(Driver::Sqlite, Left::MidCall, waiting).await;
        reconciliation(Driver::Postgres, Left::MidCall, waiting).await;
    });
}
