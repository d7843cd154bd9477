//! The HTTP API under load (a bench binary, not a timed test): the real
//! `switchback serve`, one replica on a fresh SQLite database in a temporary
//! directory, bound to a free loopback port, and C clients (default 200) for S
//! seconds (default 60). The provider is a loopback OpenAI-style mock on a
//! runtime of its own that answers every call after a latency (default 20 ms;
//! with `--max-in-flight` at its default of 64 that is room for 3,200 calls a
//! second, far more than two cores create) and each even-numbered task's first
//! call with 429 + `retry-after: 0`, so half the routes go through a reset wait
//! and a retry.
//!
//! Each client is a tokio task with its own HTTP/1.1 keep-alive connection
//! (reqwest, built as the providers crate builds its own) that holds one
//! `GET /api/events` stream open for the whole run, counting its events, and
//! loops until the time is up: `POST /api/tasks` (an `Idempotency-Key` of its
//! own each time), `GET /api/tasks/{id}` of the task just made,
//! `GET /api/tasks?limit=20` and `GET /api/tasks?state=completed&limit=20`,
//! one after the other without pause (a closed loop: the server's saturation).
//! The streams are all open before the first task, and each client's API
//! connection is opened (`GET /healthz`) before the clock starts, so the
//! latencies are of requests on open connections; the streams are held until
//! every route has settled and every stream has caught up. Opening 200
//! connections at once meets serve's accept queue (tokio's listen backlog is
//! 128): the opening times and the kernel's `ListenOverflows` say what it cost.
//!
//! An error is a non-2xx answer (or a 200 where a 201 is due), a transport
//! error or timeout (30 s), an event stream that ends early, an event id out
//! of order, events missed without a `resync`, a route that does not settle
//! within two minutes of the load's end, or serve not stopping cleanly on
//! SIGTERM. Reported, as plain lines of figures: clients, seconds, requests and
//! p50/p99/max latency by kind, errors (with the first few), events per stream
//! (min/median/max), tasks created and how many had reached an end state when
//! the load ended and after it settled, the mock's calls and peak concurrency,
//! serve's peak RSS (`VmHWM`), and the cores serve, the bench and everything
//! else on the machine kept busy during the load (they all share the cores: a
//! build running beside the bench shows there). The bench exits nonzero on any
//! error.
//!
//! `cargo bench --workspace --bench load --profile release -- [CLIENTS]
//! [SECONDS] [LATENCY_MS]`; CI runs it short (`-- 50 10`). Serve reads its own
//! variables from the environment (`SWITCHBACK_MAX_IN_FLIGHT`, `RUST_LOG`);
//! `SWITCHBACK_MUTATIONS_PER_MINUTE` is set to 1,000,000 so the per-client
//! budget of changes (600 a minute by default; every client here is
//! 127.0.0.1) does not refuse the load.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::StatusCode;
use common::percentile;
use common::process::{Errors, Serve, cpu_seconds, status_mb, ticks_per_second};
use policy::route::RouteState;
use providers::mock::{MockProvider, MockResponse};
use providers::reqwest;
use serde::Deserialize;
use serde_json::json;
use tokio::sync::watch;

/// What serve is told about its per-client mutation limit.
const MUTATIONS_PER_MINUTE: &str = "1000000";
/// The longest an API request may take before it counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the routes may take to settle once the load ends.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The requests a client makes, in the order it makes them.
#[derive(Clone, Copy)]
enum Kind {
    Create,
    Get,
    List,
    ListByState,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Create, Kind::Get, Kind::List, Kind::ListByState];

    fn name(self) -> &'static str {
        match self {
            Kind::Create => "POST /api/tasks",
            Kind::Get => "GET /api/tasks/{id}",
            Kind::List => "GET /api/tasks?limit=20",
            Kind::ListByState => "GET /api/tasks?state=completed&limit=20",
        }
    }
}

/// The loopback provider, on a thread and runtime of its own so its latency
/// does not wait on the clients: every call answered after `latency`; a prompt
/// is `load CLIENT SEQUENCE`, and an even sequence's first call is throttled.
/// Answers it and how many calls it throttled.
fn start_mock(latency: Duration) -> (MockProvider, Arc<AtomicU64>) {
    let throttled = Arc::new(AtomicU64::new(0));
    let counted = throttled.clone();
    let mock = MockProvider::scripted_apart(move |call| {
        let throttled_first = call
            .prompt
            .rsplit(' ')
            .next()
            .and_then(|sequence| sequence.parse::<u64>().ok())
            .is_some_and(|sequence| sequence.is_multiple_of(2));
        let answer = if throttled_first && call.nth == 1 {
            counted.fetch_add(1, Ordering::Relaxed);
            MockResponse::openai_throttled()
        } else {
            MockResponse::reply("Hello")
        };
        answer.after(latency)
    });
    (mock, throttled)
}

/// How many connection attempts the kernel has dropped because a listener's
/// accept queue was full (`ListenOverflows`, for the whole machine): each costs
/// its client a SYN retransmit, a second or more.
fn listen_overflows() -> Option<u64> {
    let netstat = std::fs::read_to_string("/proc/net/netstat").ok()?;
    let mut lines = netstat.lines().filter(|line| line.starts_with("TcpExt:"));
    let (names, values) = (lines.next()?, lines.next()?);
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "ListenOverflows")
        .and_then(|(_, value)| value.parse().ok())
}

/// CPU time so far, in seconds: serve's, the bench's own, the whole
/// machine's busy time (every core, every process: `/proc/stat` less idle and
/// I/O wait) and its I/O wait, so a run can say what else took the cores and
/// how long they sat waiting on the disk (the task writer's fsyncs).
#[derive(Clone, Copy)]
struct CpuTimes {
    serve: f64,
    bench: f64,
    machine: f64,
    io_wait: f64,
}

impl CpuTimes {
    fn now(serve_pid: &str) -> CpuTimes {
        let ticks = ticks_per_second();
        let fields: Vec<f64> = std::fs::read_to_string("/proc/stat")
            .unwrap_or_default()
            .lines()
            .next()
            .and_then(|line| line.strip_prefix("cpu "))
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|value| value.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal (guest time is in user).
        let field = |index: usize| fields.get(index).copied().unwrap_or(0.0);
        let busy = fields.iter().take(8).sum::<f64>() - field(3) - field(4);
        CpuTimes {
            serve: cpu_seconds(serve_pid, ticks),
            bench: cpu_seconds("self", ticks),
            machine: busy / ticks,
            io_wait: field(4) / ticks,
        }
    }
}

/// One request, its body read to the end (so the connection is reused): how
/// long it took and the body, or the error in words.
async fn timed(
    request: reqwest::RequestBuilder,
    expected: StatusCode,
    what: &str,
) -> Result<(Duration, Bytes), String> {
    let started = Instant::now();
    let response = request
        .timeout(REQUEST_TIMEOUT)
        .send()
        .await
        .map_err(|error| format!("{what}: {error:?}"))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|error| format!("{what}: reading the body: {error:?}"))?;
    let elapsed = started.elapsed();
    if status != expected {
        let text = String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned();
        return Err(format!("{what}: {status} (expected {expected}): {text}"));
    }
    Ok((elapsed, body))
}

#[derive(Deserialize)]
struct Created {
    id: String,
}

#[derive(Deserialize)]
struct Page {
    tasks: Vec<Summary>,
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct Summary {
    route: RouteBrief,
}

#[derive(Deserialize)]
struct RouteBrief {
    state: RouteState,
}

fn is_end_state(state: RouteState) -> bool {
    matches!(
        state,
        RouteState::Completed | RouteState::Stopped | RouteState::Held
    )
}

/// Every task's route state, counted, paging through `GET /api/tasks`.
async fn count_states(
    client: &reqwest::Client,
    base: &str,
) -> Result<BTreeMap<&'static str, usize>, String> {
    let mut counts = BTreeMap::new();
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(cursor) => format!("{base}/api/tasks?limit=200&cursor={cursor}"),
            None => format!("{base}/api/tasks?limit=200"),
        };
        let (_, body) = timed(client.get(url), StatusCode::OK, "listing every task").await?;
        let page: Page = serde_json::from_slice(&body).map_err(|error| error.to_string())?;
        for task in &page.tasks {
            *counts.entry(task.route.state.as_str()).or_insert(0) += 1;
        }
        match page.next_cursor {
            Some(next) => cursor = Some(next),
            None => return Ok(counts),
        }
    }
}

/// Whether no route is left in a state that moves on by itself.
async fn settled(client: &reqwest::Client, base: &str) -> Result<bool, String> {
    for state in RouteState::ALL
        .into_iter()
        .filter(|state| !is_end_state(*state))
    {
        let url = format!("{base}/api/tasks?state={}&limit=1", state.as_str());
        let (_, body) = timed(client.get(url), StatusCode::OK, "listing by state").await?;
        let page: Page = serde_json::from_slice(&body).map_err(|error| error.to_string())?;
        if !page.tasks.is_empty() {
            return Ok(false);
        }
    }
    Ok(true)
}

/// What one event stream has received so far, readable while it runs.
#[derive(Default)]
struct Received {
    bytes: AtomicU64,
    route_events: AtomicU64,
    resyncs: AtomicU64,
    last_id: AtomicI64,
}

/// The few bytes of an SSE line that say what it is (`event: route`, `id: 17`);
/// the rest of a long `data:` line is never copied.
#[derive(Default)]
struct LineStart {
    bytes: [u8; 24],
    len: usize,
}

impl LineStart {
    fn push(&mut self, part: &[u8]) {
        let take = part.len().min(self.bytes.len() - self.len);
        self.bytes[self.len..self.len + take].copy_from_slice(&part[..take]);
        self.len += take;
    }

    fn as_bytes(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Count one chunk of the stream's events into `received`. An id out of order
/// is an error.
fn read_chunk(chunk: &[u8], line: &mut LineStart, received: &Received) -> Result<(), String> {
    received
        .bytes
        .fetch_add(chunk.len() as u64, Ordering::Relaxed);
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', chunk) {
        line.push(&chunk[start..end]);
        start = end + 1;
        match line.as_bytes() {
            b"event: route" => {
                received.route_events.fetch_add(1, Ordering::Relaxed);
            }
            b"event: resync" => {
                received.resyncs.fetch_add(1, Ordering::Relaxed);
            }
            bytes => {
                if let Some(id) = bytes.strip_prefix(b"id: ") {
                    let id: i64 = std::str::from_utf8(id)
                        .ok()
                        .and_then(|id| id.parse().ok())
                        .ok_or_else(|| {
                            format!("an unreadable event id {:?}", String::from_utf8_lossy(id))
                        })?;
                    let before = received.last_id.swap(id, Ordering::Relaxed);
                    // A resync repeats the id of the last event sent; a route event never does.
                    if id < before {
                        return Err(format!("event id {id} after {before}"));
                    }
                }
            }
        }
        line.len = 0;
    }
    line.push(&chunk[start..]);
    Ok(())
}

/// Hold `GET /api/events` open until `stop`, counting what arrives; tell
/// `ready` once it is open.
async fn hold_events(
    client: reqwest::Client,
    base: Arc<str>,
    received: Arc<Received>,
    ready: tokio::sync::mpsc::Sender<()>,
    mut stop: watch::Receiver<bool>,
) -> Result<(), String> {
    let mut response = client
        .get(format!("{base}/api/events"))
        .header("accept", "text/event-stream")
        .send()
        .await
        .map_err(|error| format!("opening the event stream: {error:?}"))?;
    if response.status() != StatusCode::OK {
        return Err(format!("opening the event stream: {}", response.status()));
    }
    let _ = ready.send(()).await;
    let mut line = LineStart::default();
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return Ok(()),
            chunk = response.chunk() => match chunk {
                Ok(Some(chunk)) => read_chunk(&chunk, &mut line, &received)?,
                Ok(None) => return Err("the event stream ended early".to_owned()),
                Err(error) => return Err(format!("the event stream failed: {error:?}")),
            },
        }
    }
}

/// One client's loop until `until`: each request's latency in microseconds, by
/// kind, and the tasks it created.
async fn work(
    client: reqwest::Client,
    index: usize,
    base: Arc<str>,
    profile_id: Arc<str>,
    until: Instant,
    errors: Arc<Errors>,
) -> ([Vec<i64>; 4], u64) {
    let mut latencies: [Vec<i64>; 4] = Default::default();
    let mut created = 0;
    let mut sequence: u64 = 0;
    let mut record = |kind: Kind, outcome: Result<(Duration, Bytes), String>| match outcome {
        Ok((elapsed, body)) => {
            latencies[kind as usize].push(i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX));
            Some(body)
        }
        Err(error) => {
            errors.record(error);
            None
        }
    };
    while Instant::now() < until {
        sequence += 1;
        let body = format!(r#"{{"profile_id":"{profile_id}","prompt":"load {index} {sequence}"}}"#);
        let create = client
            .post(format!("{base}/api/tasks"))
            .header("content-type", "application/json")
            .header("idempotency-key", format!("load-{index}-{sequence}"))
            .body(body);
        let outcome = timed(create, StatusCode::CREATED, Kind::Create.name()).await;
        let task = record(Kind::Create, outcome).and_then(|body| {
            serde_json::from_slice::<Created>(&body)
                .map_err(|error| errors.record(format!("an unreadable task: {error}")))
                .ok()
        });
        let Some(task) = task else {
            // Do not spin on a server that refuses.
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        created += 1;
        let get = client.get(format!("{base}/api/tasks/{}", task.id));
        record(
            Kind::Get,
            timed(get, StatusCode::OK, Kind::Get.name()).await,
        );
        let list = client.get(format!("{base}/api/tasks?limit=20"));
        record(
            Kind::List,
            timed(list, StatusCode::OK, Kind::List.name()).await,
        );
        let by_state = client.get(format!("{base}/api/tasks?state=completed&limit=20"));
        record(
            Kind::ListByState,
            timed(by_state, StatusCode::OK, Kind::ListByState.name()).await,
        );
    }
    (latencies, created)
}

fn ms(microseconds: i64) -> f64 {
    microseconds as f64 / 1_000.0
}

fn describe(counts: &BTreeMap<&'static str, usize>) -> String {
    counts
        .iter()
        .map(|(state, count)| format!("{state} {count}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The whole run: the number of errors.
async fn run(clients: usize, seconds: u64, latency: Duration) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let (mock, throttled) = start_mock(latency);
    let mock_url = mock.base_url();
    let database = format!("sqlite://{}", dir.path().join("load.db").display());
    let mut serve = Serve::start(
        dir.path(),
        &database,
        &[("SWITCHBACK_MUTATIONS_PER_MINUTE", MUTATIONS_PER_MINUTE)],
        "",
    );
    let serve_pid = serve.pid();
    let base: Arc<str> = serve.base.clone().into();
    let errors = Arc::new(Errors::default());
    let setup = providers::http_client();

    let (_, provider) = timed(
        setup
            .post(format!("{base}/api/providers"))
            .header("content-type", "application/json")
            .body(
                json!({"name": "loopback", "kind": "openai_compatible", "base_url": mock_url})
                    .to_string(),
            ),
        StatusCode::CREATED,
        "creating the provider",
    )
    .await
    .unwrap();
    let provider: Created = serde_json::from_slice(&provider).unwrap();
    let policy = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "stop"},
        "hard": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 100},
                 "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "stop"}});
    let (_, profile) = timed(
        setup
            .post(format!("{base}/api/profiles"))
            .header("content-type", "application/json")
            .body(
                json!({"name": "load", "candidates": [{"provider_id": provider.id,
                    "model": "m", "enabled": true, "max_tokens": 64, "policy": policy}]})
                .to_string(),
            ),
        StatusCode::CREATED,
        "creating the profile",
    )
    .await
    .unwrap();
    let profile: Created = serde_json::from_slice(&profile).unwrap();
    let profile_id: Arc<str> = profile.id.into();

    // Every stream open before the first task.
    let connections: Vec<reqwest::Client> = (0..clients)
        .map(|_| {
            providers::http_client_builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
                .unwrap()
        })
        .collect();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (ready_tx, mut ready_rx) = tokio::sync::mpsc::channel(clients);
    let streams: Vec<_> = connections
        .iter()
        .map(|client| {
            let received = Arc::new(Received::default());
            let handle = tokio::spawn(hold_events(
                client.clone(),
                base.clone(),
                received.clone(),
                ready_tx.clone(),
                stop_rx.clone(),
            ));
            (received, handle)
        })
        .collect();
    drop(ready_tx);
    let overflows_before = listen_overflows();
    let opening = Instant::now();
    let mut open = 0;
    while open < clients {
        match tokio::time::timeout(Duration::from_secs(30), ready_rx.recv()).await {
            Ok(Some(())) => open += 1,
            // A stream that could not open says why when it is joined.
            Ok(None) | Err(_) => break,
        }
    }
    let opened_in = opening.elapsed();
    // Each client's API connection too, so the load measures requests on open
    // keep-alive connections; opening them is reported on its own.
    let warming = Instant::now();
    let warm_ups: Vec<_> = connections
        .iter()
        .map(|client| {
            let request = client.get(format!("{base}/healthz"));
            tokio::spawn(async move { timed(request, StatusCode::OK, "GET /healthz").await })
        })
        .collect();
    for warm_up in warm_ups {
        if let Err(error) = warm_up.await.unwrap() {
            errors.record(error);
        }
    }
    let warmed_in = warming.elapsed();
    let overflows_opening = listen_overflows();

    let cpu_before = CpuTimes::now(&serve_pid);
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let workers: Vec<_> = connections
        .iter()
        .enumerate()
        .map(|(index, client)| {
            tokio::spawn(work(
                client.clone(),
                index,
                base.clone(),
                profile_id.clone(),
                until,
                errors.clone(),
            ))
        })
        .collect();
    let mut latencies: [Vec<i64>; 4] = Default::default();
    let mut created = 0;
    for worker in workers {
        let (own, own_created) = worker.await.unwrap();
        for (all, own) in latencies.iter_mut().zip(own) {
            all.extend(own);
        }
        created += own_created;
    }
    let load_elapsed = started.elapsed();
    let cpu_after = CpuTimes::now(&serve_pid);
    let overflows_load = listen_overflows();

    let at_end = count_states(&setup, &base).await.unwrap_or_else(|error| {
        errors.record(error);
        BTreeMap::new()
    });
    let settling = Instant::now();
    loop {
        match settled(&setup, &base).await {
            Ok(true) => break,
            Ok(false) => {}
            Err(error) => {
                errors.record(error);
                break;
            }
        }
        if settling.elapsed() > SETTLE_TIMEOUT {
            errors.record(format!(
                "routes still moving {} s after the load",
                SETTLE_TIMEOUT.as_secs()
            ));
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let settled_in = settling.elapsed();
    // Every stream caught up: the same last id everywhere, for half a second.
    let catching_up = Instant::now();
    let mut steady_since = Instant::now();
    let mut last_seen = (0, 0);
    while catching_up.elapsed() < Duration::from_secs(30) {
        let ids = streams
            .iter()
            .map(|(received, _)| received.last_id.load(Ordering::Relaxed));
        let (low, high) = ids.fold((i64::MAX, i64::MIN), |(low, high), id| {
            (low.min(id), high.max(id))
        });
        if (low, high) != last_seen {
            last_seen = (low, high);
            steady_since = Instant::now();
        } else if low == high && steady_since.elapsed() > Duration::from_millis(500) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let after = count_states(&setup, &base).await.unwrap_or_else(|error| {
        errors.record(error);
        BTreeMap::new()
    });

    let server_rss_mb = status_mb(&serve_pid, "VmHWM:");
    let _ = stop_tx.send(true);
    let last_id = streams
        .iter()
        .map(|(received, _)| received.last_id.load(Ordering::Relaxed))
        .max()
        .unwrap_or(0);
    let mut per_stream = Vec::new();
    let (mut resyncs, mut missed_streams, mut stream_bytes) = (0, 0, 0);
    for (received, handle) in streams {
        if let Err(error) = handle.await.unwrap() {
            errors.record(error);
        }
        let route_events = received.route_events.load(Ordering::Relaxed);
        let resynced = received.resyncs.load(Ordering::Relaxed);
        stream_bytes += received.bytes.load(Ordering::Relaxed);
        resyncs += resynced;
        // The database was empty when the streams opened: event ids start at 1.
        if route_events < last_id.max(0) as u64 {
            missed_streams += 1;
            if resynced == 0 {
                errors.record(format!(
                    "a stream missed {} of {last_id} events without a resync",
                    last_id.max(0) as u64 - route_events
                ));
            }
        }
        per_stream.push(route_events as i64);
    }
    per_stream.sort_unstable();
    if let Err(error) = serve.stop() {
        errors.record(error);
    }

    println!(
        "load: {clients} clients, {seconds} s ({:.1} s measured), mock provider latency {} ms",
        load_elapsed.as_secs_f64(),
        latency.as_millis(),
    );
    let dropped = |from: Option<u64>, to: Option<u64>| match (from, to) {
        (Some(from), Some(to)) => (to - from).to_string(),
        _ => "?".to_owned(),
    };
    println!(
        "load: {open} event streams open in {:.0} ms, then {clients} API connections in {:.0} ms; connection attempts dropped on a full accept queue (ListenOverflows, machine-wide): {} while they opened, {} during the load",
        opened_in.as_secs_f64() * 1_000.0,
        warmed_in.as_secs_f64() * 1_000.0,
        dropped(overflows_before, overflows_opening),
        dropped(overflows_opening, overflows_load),
    );
    let total: usize = latencies.iter().map(Vec::len).sum();
    println!(
        "load: {total} API requests, {:.0} a second",
        total as f64 / load_elapsed.as_secs_f64()
    );
    for kind in Kind::ALL {
        let recorded = &mut latencies[kind as usize];
        recorded.sort_unstable();
        println!(
            "load: {}: {} requests, {:.0}/s; latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
            kind.name(),
            recorded.len(),
            recorded.len() as f64 / load_elapsed.as_secs_f64(),
            ms(percentile(recorded, 0.50)),
            ms(percentile(recorded, 0.99)),
            ms(recorded.last().copied().unwrap_or(0)),
        );
    }
    let mut all: Vec<i64> = latencies.concat();
    all.sort_unstable();
    println!(
        "load: every API request: latency p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms",
        ms(percentile(&all, 0.50)),
        ms(percentile(&all, 0.99)),
        ms(all.last().copied().unwrap_or(0)),
    );
    println!(
        "load: events per stream min {} / median {} / max {} of {last_id} committed; {missed_streams} streams missed some, {resyncs} resyncs; {:.0} MB sent on the streams in all",
        per_stream.first().copied().unwrap_or(0),
        percentile(&per_stream, 0.50),
        per_stream.last().copied().unwrap_or(0),
        stream_bytes as f64 / 1e6,
    );
    let ended_at_end: usize = at_end
        .iter()
        .filter(|(state, _)| {
            RouteState::ALL
                .into_iter()
                .any(|end| end.as_str() == **state && is_end_state(end))
        })
        .map(|(_, count)| *count)
        .sum();
    println!(
        "load: {created} tasks created; when the load ended {ended_at_end} had reached an end state ({}); settled {:.1} s later: {}",
        describe(&at_end),
        settled_in.as_secs_f64(),
        describe(&after)
    );
    println!(
        "load: mock provider: {} calls ({} throttled with 429), at most {} in flight at once",
        mock.hits(),
        throttled.load(Ordering::Relaxed),
        mock.peak_in_flight(),
    );
    println!(
        "load: serve peak RSS {server_rss_mb:.0} MB; the bench's (clients and mock) {:.0} MB",
        status_mb("self", "VmHWM:"),
    );
    let cores = |seconds: f64| seconds / load_elapsed.as_secs_f64();
    let serve_cpu = cpu_after.serve - cpu_before.serve;
    let bench_cpu = cpu_after.bench - cpu_before.bench;
    let other_cpu = (cpu_after.machine - cpu_before.machine - serve_cpu - bench_cpu).max(0.0);
    println!(
        "load: CPU during the load, in cores busy of {}: serve {:.2}, the bench {:.2}, everything else on the machine {:.2}; cores idle waiting on I/O {:.2}",
        std::thread::available_parallelism().map_or(0, usize::from),
        cores(serve_cpu),
        cores(bench_cpu),
        cores(other_cpu),
        cores(cpu_after.io_wait - cpu_before.io_wait),
    );
    let complaints = serve.complaints.count();
    println!("load: serve logged {complaints} WARN/ERROR lines");
    for line in serve.complaints.samples.lock().unwrap().iter() {
        println!("load:   serve: {line}");
    }
    let count = errors.count();
    println!("load: {count} errors");
    for error in errors.samples.lock().unwrap().iter() {
        println!("load:   error: {error}");
    }
    count
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|arg| arg.parse().ok())
        .collect();
    let clients = args.first().copied().unwrap_or(200) as usize;
    let seconds = args.get(1).copied().unwrap_or(60);
    let latency = Duration::from_millis(args.get(2).copied().unwrap_or(20));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let errors = runtime.block_on(run(clients, seconds, latency));
    if errors > 0 {
        std::process::exit(1);
    }
}
