//! The route engine on PostgreSQL, with one replica and with two (a bench
//! binary, not a timed test): N tasks (default 2,000) through a loopback
//! OpenAI-style provider that answers every call after a latency (default 200
//! ms, so the run is bound by I/O, not CPU): each task's first call with a 500
//! `server_error` (a transient failure that opens no circuit: a retry after a
//! 100 ms backoff) and its second with a streamed reply. Each replica is an
//! engine of its own over a store of its own (its own pool and replica name) on
//! one database schema, in this process; tasks are created on the replicas in
//! turn. Reported per run: committed transitions per second, deadline lateness
//! p50/p99 (`switchback_deadline_lateness_seconds`), and the ratio of two
//! replicas to one.
//!
//! `cargo bench --workspace --bench replicas --profile release -- [TASKS]
//! [LATENCY_MS]`, against `SWITCHBACK_TEST_POSTGRES_URL` or the local
//! PostgreSQL's `test` database. CI runs it small.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use api::read::Read;
use api::{KeyEnvRules, ProfileRequest, ProviderRequest, TaskRequest};
use common::{Lateness, percentile};
use futures_util::StreamExt;
use policy::route::RouteState;
use providers::mock::{MockProvider, MockResponse};
use serde_json::json;
use server::clock::{Clock, SystemClock};
use server::engine::{Engine, EngineSettings, ProviderCaller};
use server::secrets::FixedSecrets;
use server::services::Services;
use server::store::{PostgresStore, Store};

/// One run with `replicas` engines: transitions per second.
async fn run(replicas: usize, tasks: usize, latency: Duration, recorded: &Lateness) -> f64 {
    recorded.0.lock().unwrap().clear();
    let (_schema, url) = testkit::postgres::schema("switchback_bench").await.unwrap();
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let mut services = Vec::new();
    for index in 0..replicas {
        let store: Arc<dyn Store> = Arc::new(
            PostgresStore::open(&url, &format!("bench-{index}"))
                .await
                .unwrap(),
        );
        let engine = Engine::new(
            store.clone(),
            clock.clone(),
            Arc::new(ProviderCaller::new()),
            EngineSettings::default(),
        );
        engine.start().await.unwrap();
        services.push(Services {
            store,
            clock: clock.clone(),
            secrets: Arc::new(FixedSecrets::new([("BENCH_API_KEY", "x")])),
            key_envs: KeyEnvRules::default(),
            engine,
            open_tasks: server::services::OpenTasks::unlimited(),
            inbox_count: Default::default(),
        });
    }
    // Every call answered after `latency`: a task's first with a 500, its
    // second with a reply.
    let mock = MockProvider::scripted(move |call| {
        let answer = if call.nth == 1 {
            MockResponse::openai_server_error()
        } else {
            MockResponse::reply("Hello")
        };
        answer.after(latency)
    })
    .await;
    let base_url = mock.base_url();
    let provider = services[0]
        .create_provider(Read::<ProviderRequest>::from_json(&json!({
            "name": "loopback", "kind": "openai_compatible", "base_url": base_url})))
        .await
        .unwrap();
    let policy = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "skip"}});
    let profile = services[0]
        .create_profile(Read::<ProfileRequest>::from_json(&json!({"name": "bench",
            "candidates": [{"provider_id": provider.id, "model": "m", "enabled": true, "max_tokens": 64, "policy": policy}]})))
        .await
        .unwrap();
    let store = services[0].store.clone();
    let first_event = store.last_event_id().await.unwrap();
    let started = Instant::now();
    futures_util::stream::iter(0..tasks)
        .map(|index| {
            let services = &services[index % replicas];
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
    testkit::eventually_async(Duration::from_secs(600), || async {
        let counts = store.count_routes().await.unwrap();
        let done = counts
            .iter()
            .filter(|(state, _)| *state == RouteState::Completed)
            .map(|(_, count)| *count as usize)
            .sum::<usize>();
        if done == tasks {
            Ok(())
        } else {
            Err(format!("stalled: {counts:?}"))
        }
    })
    .await;
    let elapsed = started.elapsed();
    let transitions = store.last_event_id().await.unwrap() - first_event;
    let rate = transitions as f64 / elapsed.as_secs_f64();
    let lateness = recorded.sorted_ms();
    println!(
        "postgres, {replicas} replica(s): {tasks} tasks, {transitions} transitions in {:.2} s: {rate:.0} transitions/s; deadline lateness p50 {} ms, p99 {} ms over {} firings",
        elapsed.as_secs_f64(),
        percentile(&lateness, 0.50),
        percentile(&lateness, 0.99),
        lateness.len()
    );
    for service in &services {
        service.engine.shut_down();
        service.store.close().await;
    }
    rate
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let tasks = args.first().copied().unwrap_or(2_000) as usize;
    let latency = Duration::from_millis(args.get(1).copied().unwrap_or(200));
    let recorded = Lateness::default();
    metrics::set_global_recorder(recorded.clone()).unwrap();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let one = run(1, tasks, latency, &recorded).await;
        let two = run(2, tasks, latency, &recorded).await;
        println!("postgres: two replicas / one = {:.2}x", two / one);
    });
}
