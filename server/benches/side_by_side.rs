//! Switchback beside the gateway people use instead, LiteLLM's Router, on the
//! same loopback mock provider with the same scripts (a bench binary, not a
//! timed test; `scripts/bench` runs every scenario several times and writes
//! the table). Each run prints what it saw in words, then its figures as
//! `figure NAME VALUE` lines for `scripts/bench` to gather.
//!
//! `cargo bench --workspace --bench side_by_side --profile release -- SCENARIO ...`
//!
//! - `retry switchback sqlite|postgres TASKS` and `retry litellm TASKS`: TASKS
//!   requests through two candidates (`bench-a`, then `bench-b`), two retries
//!   and a fallback; the mock answers each candidate's first two calls for a
//!   prompt with `429` + `retry-after: 0` and its third with a streamed reply.
//!   Both retry 0.5 s and then 1 s after a failure (LiteLLM adds up to 0.75 s
//!   of jitter to each). Switchback is `switchback serve` (tasks created
//!   through the API, 64 requests at a time, each answered at once, so every
//!   route waits at once; at most 64 provider calls in flight, its default);
//!   LiteLLM is `bench/peer/router.py` (every request at once; no limit on
//!   calls, its default). Wall time, CPU seconds and peak RSS of the process
//!   doing the work (start-up not counted; on PostgreSQL the database's own
//!   processes not counted), the share completed, and the upstream requests
//!   per request.
//! - `reset switchback` and `reset litellm`: one request to an Anthropic-style
//!   provider that answers `429` with `anthropic-ratelimit-requests-reset` on
//!   the whole second 2 to 3 s after the first request (and no `retry-after`)
//!   until then: how many requests each sends
//!   before the reset (the first one, which learns of the limit, counts), and
//!   whether and when the request completes.
//! - `classify switchback` and `classify litellm`: the cost of classifying one
//!   error, over the fixtures in `fixtures/providers/` that carry an HTTP status
//!   (LiteLLM's exception mapping needs one); Switchback also over all of them.
//! - `waiting sqlite|postgres ROUTES`: serve started on a database holding
//!   ROUTES routes in a retry wait an hour out (its engine start, by its own
//!   `route engine started ... elapsed_ms`, and its resident set then and at
//!   its peak), and on one holding ROUTES routes that were running a call
//!   when the process died (the restart reconciliation that holds each as
//!   interrupted: its time, checked to have reconciled and held every one).
//! - `pages REQUESTS`: server-side rendering of the profile editor and of a
//!   task's route page, REQUESTS of each one after the other: p50 and p99.
//!
//! PostgreSQL is the test database (`SWITCHBACK_TEST_POSTGRES_URL`, else
//! `127.0.0.1:5432/test`), each run in a schema of its own. LiteLLM runs in
//! the virtual environment `scripts/bench` makes (`bench/peer/.venv`; another
//! interpreter by `SWITCHBACK_BENCH_PYTHON`).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::http::StatusCode;
use common::percentile;
use common::process::{Serve, cpu_seconds, status_mb, ticks_per_second};
use futures_util::StreamExt;
use providers::mock::{MockCall, MockProvider, MockResponse};
use providers::reqwest;
use serde_json::{Value, json};

/// Switchback's task creations in flight at once.
const CONCURRENCY: usize = 64;
/// How far ahead the reset scenario's limit resets.
const RESET_AHEAD_MS: i64 = 2_000;
/// The reset scenario's first candidate (its second is `claude-bench-b`).
const RESET_FIRST_MODEL: &str = "claude-bench";
/// The key the providers are given (by environment variable, as always).
const KEY: &str = "sk-bench-not-a-real-key";

fn figure(name: &str, value: f64) {
    println!("figure {name} {value}");
}

fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_owned()
}

// ---------------------------------------------------------------------------
// The mock provider: both wire formats, counting every request.

/// The reset scenario's record, kept by the mock's script.
#[derive(Default)]
struct Reset {
    /// The reset, in Unix milliseconds (0 until the first request to
    /// `/v1/messages` sets it).
    reset_at_ms: AtomicI64,
    before_reset: AtomicU64,
    after_reset: AtomicU64,
    /// When the first request after the reset arrived.
    first_after_reset_ms: AtomicI64,
    /// Replies for the first candidate's model (`claude-bench`).
    first_candidate_replies: AtomicU64,
}

/// The loopback provider and the reset scenario's record.
struct Mock {
    provider: MockProvider,
    reset: Arc<Reset>,
}

/// The answer to one request. OpenAI's format: each model's first two calls
/// for a prompt are throttled. Anthropic's: throttled until the reset, with the
/// reset in the `anthropic-ratelimit-requests-reset` header.
fn answer(reset: &Reset, call: &MockCall<'_>) -> MockResponse {
    if call.path == "/v1/chat/completions" {
        return if call.nth <= 2 {
            MockResponse::openai_throttled()
        } else {
            MockResponse::reply("Hello")
        };
    }
    let now = now_ms();
    // The limit is met by the first request: it resets on the whole second (as
    // Anthropic writes it) at least 2 s after that request (a client's own
    // start-up, such as Python importing LiteLLM, then costs it nothing).
    let proposed = (now + RESET_AHEAD_MS).div_euclid(1_000) * 1_000 + 1_000;
    let reset_at_ms =
        match reset
            .reset_at_ms
            .compare_exchange(0, proposed, Ordering::Relaxed, Ordering::Relaxed)
        {
            Ok(_) => proposed,
            Err(current) => current,
        };
    if now < reset_at_ms {
        reset.before_reset.fetch_add(1, Ordering::Relaxed);
        let at = jiff::Timestamp::from_millisecond(reset_at_ms)
            .unwrap()
            .to_string();
        return MockResponse::status(
            429,
            &[
                ("anthropic-ratelimit-requests-limit", "50"),
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", &at),
            ],
            r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}"#,
        );
    }
    if reset.after_reset.fetch_add(1, Ordering::Relaxed) == 0 {
        reset.first_after_reset_ms.store(now, Ordering::Relaxed);
    }
    if call.model == RESET_FIRST_MODEL {
        reset
            .first_candidate_replies
            .fetch_add(1, Ordering::Relaxed);
    }
    MockResponse::reply("Hello")
}

/// The mock on a thread and runtime of its own, so its work never waits on
/// the bench's.
fn start_mock() -> (String, Mock) {
    let reset = Arc::new(Reset::default());
    let kept = reset.clone();
    let provider = MockProvider::scripted_apart(move |call| answer(&kept, call));
    (provider.base_url(), Mock { provider, reset })
}

// ---------------------------------------------------------------------------
// Switchback: `switchback serve` and its API.

/// A database for one run: its URL, and the directory serve runs in.
async fn database(driver: &str, dir: &Path) -> String {
    match driver {
        "sqlite" => format!("sqlite://{}", dir.join("bench.db").display()),
        "postgres" => {
            testkit::postgres::schema("switchback_bench")
                .await
                .unwrap()
                .1
        }
        other => panic!("no driver {other:?}: sqlite or postgres"),
    }
}

fn start_serve(dir: &Path, database: &str) -> Serve {
    Serve::start(
        dir,
        database,
        &[
            ("SWITCHBACK_MUTATIONS_PER_MINUTE", "100000000"),
            ("SWITCHBACK_MAX_OPEN_TASKS", "10000000"),
            ("OPENAI_API_KEY", KEY),
            ("ANTHROPIC_API_KEY", KEY),
        ],
        "route engine started",
    )
}

async fn post(client: &reqwest::Client, base: &str, path: &str, body: &Value) -> Value {
    let response = client
        .post(format!("{base}{path}"))
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "POST {path}: {status} {text}");
    serde_json::from_str(&text).unwrap()
}

/// A policy of two retries 0.5 s and 1 s after the failure (LiteLLM's own
/// backoff, without its jitter), waits for a reset of up to a minute, and the
/// next candidate when exhausted.
fn policy() -> Value {
    json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 500},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "skip"}})
}

/// A provider of `kind` at `base_url` and a profile of two candidates on it.
async fn profile(
    client: &reqwest::Client,
    base: &str,
    kind: &str,
    key_env: &str,
    base_url: &str,
    models: [&str; 2],
) -> String {
    let provider = post(
        client,
        base,
        "/api/providers",
        &json!({"name": format!("loopback {kind}"), "kind": kind, "base_url": base_url,
                "api_key_env": key_env}),
    )
    .await;
    let candidates: Vec<Value> = models
        .iter()
        .map(|model| {
            json!({"provider_id": provider["id"], "model": model, "enabled": true,
                   "max_tokens": 64, "policy": policy()})
        })
        .collect();
    let profile = post(
        client,
        base,
        "/api/profiles",
        &json!({"name": format!("bench {kind}"), "candidates": candidates}),
    )
    .await;
    profile["id"].as_str().unwrap().to_owned()
}

/// Serve's metrics: each line's name (with its labels) and value.
async fn scrape(client: &reqwest::Client, base: &str) -> Vec<(String, f64)> {
    let text = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| {
            let (name, value) = line.rsplit_once(' ')?;
            Some((name.to_owned(), value.parse().ok()?))
        })
        .collect()
}

fn metric_sum(metrics: &[(String, f64)], prefix: &str) -> f64 {
    metrics
        .iter()
        .filter(|(name, _)| name.starts_with(prefix))
        .map(|(_, value)| value)
        .sum()
}

/// The upper bound of the histogram bucket the `p` quantile falls in, in ms.
fn bucket_quantile_ms(metrics: &[(String, f64)], histogram: &str, p: f64) -> f64 {
    let count = metric_sum(metrics, &format!("{histogram}_count"));
    if count == 0.0 {
        return f64::NAN;
    }
    let mut buckets: Vec<(f64, f64)> = metrics
        .iter()
        .filter_map(|(name, value)| {
            let bound = name
                .strip_prefix(&format!("{histogram}_bucket{{le=\""))?
                .strip_suffix("\"}")?;
            Some((bound.parse().unwrap_or(f64::INFINITY), *value))
        })
        .collect();
    buckets.sort_by(|a, b| a.0.total_cmp(&b.0));
    buckets
        .iter()
        .find(|(_, cumulative)| *cumulative >= count * p)
        .map_or(f64::NAN, |(bound, _)| bound * 1_000.0)
}

/// Wait until `tasks` routes have completed and none is left anywhere else.
async fn all_completed(client: &reqwest::Client, base: &str, tasks: usize) {
    let (completed, all, metrics) = testkit::eventually_async(Duration::from_secs(600), || async {
        let metrics = scrape(client, base).await;
        let completed = metric_sum(&metrics, "switchback_routes{state=\"completed\"}");
        let all = metric_sum(&metrics, "switchback_routes{");
        if completed as usize >= tasks {
            Ok((completed, all, metrics))
        } else {
            Err(format!("{completed} of {tasks} completed"))
        }
    })
    .await;
    assert_eq!(all, completed, "every route ends completed: {metrics:?}");
}

/// One Switchback run: serve on a fresh database of `driver`, the mock, and a
/// profile of two candidates of `kind` on the mock (`models`).
struct Run {
    serve: Serve,
    base: String,
    client: reqwest::Client,
    mock: Mock,
    profile: String,
    _dir: tempfile::TempDir,
}

impl Run {
    async fn start(driver: &str, kind: &str, key_env: &str, models: [&str; 2]) -> Run {
        let dir = tempfile::tempdir().unwrap();
        let database = database(driver, dir.path()).await;
        let (mock_url, mock) = start_mock();
        let serve = start_serve(dir.path(), &database);
        let base = serve.base.clone();
        let client = providers::http_client();
        let profile = profile(&client, &base, kind, key_env, &mock_url, models).await;
        Run {
            serve,
            base,
            client,
            mock,
            profile,
            _dir: dir,
        }
    }

    /// A task of the run's profile, once it has completed: its id.
    async fn completed_task(&self, prompt: &str) -> String {
        let task = post(
            &self.client,
            &self.base,
            "/api/tasks",
            &json!({"profile_id": self.profile, "prompt": prompt}),
        )
        .await;
        all_completed(&self.client, &self.base, 1).await;
        task["id"].as_str().unwrap().to_owned()
    }
}

async fn retry_switchback(driver: &str, tasks: usize) {
    let Run {
        mut serve,
        base,
        client,
        mock,
        profile,
        _dir,
    } = Run::start(
        driver,
        "openai_compatible",
        "OPENAI_API_KEY",
        ["bench-a", "bench-b"],
    )
    .await;
    let pid = serve.pid();
    let ticks = ticks_per_second();
    let cpu_before = cpu_seconds(&pid, ticks);
    let started = Instant::now();
    let client_ref = &client;
    let (base_ref, profile_ref) = (&base, &profile);
    futures_util::stream::iter(0..tasks)
        .map(|index| async move {
            let response = client_ref
                .post(format!("{base_ref}/api/tasks"))
                .header("content-type", "application/json")
                .header("idempotency-key", format!("bench-{index}"))
                .body(
                    json!({"profile_id": profile_ref, "prompt": format!("task-{index}")})
                        .to_string(),
                )
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), StatusCode::CREATED);
            response.bytes().await.unwrap();
        })
        .buffer_unordered(CONCURRENCY)
        .collect::<()>()
        .await;
    all_completed(&client, &base, tasks).await;
    let wall = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds(&pid, ticks) - cpu_before;
    let rss = status_mb(&pid, "VmHWM:");
    let metrics = scrape(&client, &base).await;
    let transitions = metric_sum(&metrics, "switchback_transitions_total");
    let lateness_p99 = bucket_quantile_ms(&metrics, "switchback_deadline_lateness_seconds", 0.99);
    let upstream = mock.provider.hits() as f64;
    serve.stop().unwrap();
    assert_eq!(
        serve.complaints.count(),
        0,
        "serve logged warnings: {:?}",
        serve.complaints.samples.lock().unwrap()
    );
    println!(
        "retry, switchback on {driver}: {tasks} tasks completed in {wall:.2} s, {cpu:.2} CPU s, peak RSS {rss:.0} MB, \
         {upstream} upstream requests ({:.2} a task), {transitions} transitions ({:.0}/s), deadline lateness p99 <= {lateness_p99} ms",
        upstream / tasks as f64,
        transitions / wall
    );
    let prefix = format!("retry.switchback.{driver}");
    // Every route completed, or `all_completed` would have failed the run.
    figure(&format!("{prefix}.completed"), 1.0);
    figure(&format!("{prefix}.wall_s"), wall);
    figure(&format!("{prefix}.cpu_s"), cpu);
    figure(&format!("{prefix}.peak_rss_mb"), rss);
    figure(
        &format!("{prefix}.upstream_per_request"),
        upstream / tasks as f64,
    );
    figure(&format!("{prefix}.transitions_per_s"), transitions / wall);
    figure(&format!("{prefix}.lateness_p99_ms"), lateness_p99);
}

// ---------------------------------------------------------------------------
// LiteLLM: `bench/peer/router.py` in its virtual environment.

fn python() -> String {
    std::env::var("SWITCHBACK_BENCH_PYTHON").unwrap_or_else(|_| {
        workspace()
            .join("bench/peer/.venv/bin/python")
            .display()
            .to_string()
    })
}

/// Run a peer script; its one JSON answer.
fn peer(script: &str, args: &[&str]) -> Value {
    let output = Command::new(python())
        .arg(workspace().join("bench/peer").join(script))
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("{} (scripts/bench makes it): {error}", python()));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{script} {args:?}: {}\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_str(stdout.trim().lines().last().unwrap_or_default())
        .unwrap_or_else(|error| panic!("{script}: {error}: {stdout}"))
}

fn number(value: &Value, field: &str) -> f64 {
    value[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {value}"))
}

fn retry_litellm(tasks: usize) {
    let (mock_url, mock) = start_mock();
    let answer = peer(
        "router.py",
        &[
            "retry",
            "--base-url",
            &mock_url,
            "--requests",
            &tasks.to_string(),
            // All at once, as Switchback's routes all wait at once (its
            // creation requests are 64 at a time, each answered at once).
            "--concurrency",
            &tasks.to_string(),
        ],
    );
    let upstream = mock.provider.hits() as f64;
    let (ok, wall, cpu, rss) = (
        number(&answer, "ok"),
        number(&answer, "wall_s"),
        number(&answer, "cpu_s"),
        number(&answer, "peak_rss_mb"),
    );
    println!(
        "retry, litellm {}: {ok} of {tasks} completed in {wall:.2} s, {cpu:.2} CPU s, peak RSS {rss:.0} MB, \
         {upstream} upstream requests ({:.2} a request)",
        answer["litellm"],
        upstream / tasks as f64
    );
    figure("retry.litellm.completed", ok / tasks as f64);
    figure("retry.litellm.wall_s", wall);
    figure("retry.litellm.cpu_s", cpu);
    figure("retry.litellm.peak_rss_mb", rss);
    figure(
        "retry.litellm.upstream_per_request",
        upstream / tasks as f64,
    );
}

// ---------------------------------------------------------------------------
// A usage limit that resets 2 s ahead.

/// What the mock saw of a reset run: requests before the reset, and how long
/// after the reset the first request came.
fn reset_report(side: &str, mock: &Mock, completed: bool, wall: f64) {
    let before = mock.reset.before_reset.load(Ordering::Relaxed) as f64;
    let on_first = mock.reset.first_candidate_replies.load(Ordering::Relaxed) > 0;
    let after_ms = match mock.reset.first_after_reset_ms.load(Ordering::Relaxed) {
        0 => f64::NAN,
        at => (at - mock.reset.reset_at_ms.load(Ordering::Relaxed)) as f64,
    };
    println!(
        "reset, {side}: {before} requests before the reset, the first after it {after_ms} ms after; \
         completed: {completed}, in {wall:.2} s, on the first candidate: {on_first}"
    );
    figure(&format!("reset.{side}.requests_before_reset"), before);
    figure(
        &format!("reset.{side}.completed"),
        f64::from(u8::from(completed)),
    );
    figure(&format!("reset.{side}.first_after_reset_ms"), after_ms);
    figure(
        &format!("reset.{side}.completed_on_first_candidate"),
        f64::from(u8::from(completed && on_first)),
    );
}

async fn reset_switchback() {
    let mut run = Run::start(
        "sqlite",
        "anthropic",
        "ANTHROPIC_API_KEY",
        [RESET_FIRST_MODEL, "claude-bench-b"],
    )
    .await;
    let started = Instant::now();
    run.completed_task("reset").await;
    reset_report(
        "switchback",
        &run.mock,
        true,
        started.elapsed().as_secs_f64(),
    );
    run.serve.stop().unwrap();
}

fn reset_litellm() {
    let (mock_url, mock) = start_mock();
    let answer = peer("router.py", &["reset", "--base-url", &mock_url]);
    if let Some(error) = answer["error"].as_str() {
        println!("reset, litellm: the request failed: {error}");
    }
    reset_report(
        "litellm",
        &mock,
        answer["ok"].as_bool() == Some(true),
        number(&answer, "wall_s"),
    );
}

// ---------------------------------------------------------------------------
// The cost of classifying one error.

fn classify_switchback() {
    let root = workspace().join("fixtures/providers");
    let mut with_status = Vec::new();
    let mut all = Vec::new();
    for family in std::fs::read_dir(&root).unwrap() {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let fixture: Value = serde_json::from_str(&text).unwrap();
            let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
            if fixture["evidence"]["status"].is_u64() {
                with_status.push(evidence.clone());
            }
            all.push(evidence);
        }
    }
    let catalogue = catalogue::Catalogue::shared();
    let now = now_ms();
    // The median of 7 runs, each whole passes over the set for at least 0.5 s.
    let per_error_ns = |set: &[catalogue::Evidence]| {
        let mut runs = Vec::new();
        for _ in 0..7 {
            let (started, mut classified) = (Instant::now(), 0_u64);
            while started.elapsed() < Duration::from_millis(500) {
                for evidence in set {
                    std::hint::black_box(catalogue.classify(std::hint::black_box(evidence), now));
                }
                classified += set.len() as u64;
            }
            runs.push(started.elapsed().as_nanos() as f64 / classified as f64);
        }
        runs.sort_by(f64::total_cmp);
        runs[runs.len() / 2]
    };
    let (status_ns, all_ns) = (per_error_ns(&with_status), per_error_ns(&all));
    println!(
        "classify, switchback: {status_ns:.0} ns an error over the {} fixtures with an HTTP status, \
         {all_ns:.0} ns over all {} (stream errors and CLI output too)",
        with_status.len(),
        all.len()
    );
    figure("classify.switchback.ns_per_error", status_ns);
    figure("classify.switchback.ns_per_error_all", all_ns);
    figure("classify.switchback.errors", with_status.len() as f64);
}

fn classify_litellm() {
    let answer = peer("classify.py", &[]);
    let ns = number(&answer, "ns_per_error_median");
    println!(
        "classify, litellm {}: {ns:.0} ns an error over {} fixtures ({})",
        answer["litellm"], answer["errors"], answer["classes"]
    );
    figure("classify.litellm.ns_per_error", ns);
    figure("classify.litellm.errors", number(&answer, "errors"));
}

// ---------------------------------------------------------------------------
// Restart with many waiting routes.

/// What a restart finds in the database.
#[derive(Clone, Copy, PartialEq)]
enum Seed {
    /// Routes in a retry wait an hour out: nothing to do until then.
    Waiting,
    /// Routes `running` with an attempt started and never finished (the
    /// process died mid-call): each must be held as interrupted.
    Interrupted,
}

/// The statements that write `routes` routes as `seed` says, 1,000 a statement.
fn seed_statements(routes: usize, now_ms: i64, seed: Seed) -> Vec<String> {
    let policy = serde_json::to_string(&policy::PolicyDocument::default())
        .unwrap()
        .replace('\'', "''");
    let mut statements = Vec::new();
    for start in (0..routes).step_by(1_000) {
        let ids: Vec<String> = (start..routes.min(start + 1_000))
            .map(|index| format!("t{index:07}"))
            .collect();
        let rows = |row: &dyn Fn(&str) -> String| {
            ids.iter().map(|id| row(id)).collect::<Vec<_>>().join(", ")
        };
        statements.push(format!(
            "INSERT INTO tasks (id, profile_id, profile_name, created_at_ms) VALUES {}",
            rows(&|id| format!("('{id}', 'p', 'bench', {now_ms})"))
        ));
        statements.push(format!(
            "INSERT INTO task_candidates (task_id, position, candidate_id, provider_id, model, enabled, max_tokens, escalation_json, policy_json) VALUES {}",
            rows(&|id| format!(
                "('{id}', 0, 'c', 'p', 'm', TRUE, 64, '{{\"max_escalations\":1,\"ceiling_tokens\":32768}}', '{policy}')"
            ))
        ));
        let (state, deadline) = match seed {
            Seed::Waiting => ("retry_wait", (now_ms + 3_600_000).to_string()),
            Seed::Interrupted => ("running", "NULL".to_owned()),
        };
        statements.push(format!(
            "INSERT INTO routes (task_id, state, generation, candidate_index, deadline_ms, retry_ordinal, new_episode, episode_json, turn, updated_at_ms) VALUES {}",
            rows(&|id| format!(
                "('{id}', '{state}', 3, 0, {deadline}, 1, FALSE, '{{\"retries\":{{\"transient\":1,\"hard\":0}},\"waited_for_reset\":false}}', 1, {now_ms})"
            ))
        ));
        if seed == Seed::Interrupted {
            statements.push(format!(
                "INSERT INTO attempts (id, task_id, seq, turn, generation, candidate_index, candidate_id, provider_id, model, ordinal, max_tokens, started_at_ms) VALUES {}",
                rows(&|id| format!("('a{id}', '{id}', 1, 1, 3, 0, 'c', 'p', 'm', 1, 64, {now_ms})"))
            ));
        }
    }
    statements
}

async fn seed(database: &str, routes: usize, seed: Seed) {
    let statements = seed_statements(routes, now_ms(), seed);
    if database.starts_with("sqlite:") {
        common::execute_all(
            sqlx::SqlitePool::connect(database).await.unwrap(),
            statements,
        )
        .await;
    } else {
        common::execute_all(sqlx::PgPool::connect(database).await.unwrap(), statements).await;
    }
}

/// Serve started on a database holding `routes` routes as `seed` says: how
/// long its restart took by its own account (`route engine started ...
/// elapsed_ms`), how many routes it reconciled, its metrics, and its resident
/// set then and at its peak.
async fn restart(
    driver: &str,
    routes: usize,
    seed_as: Seed,
) -> (f64, usize, Vec<(String, f64)>, f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let database = database(driver, dir.path()).await;
    // Serve makes the schema; then the routes go in while it is down.
    start_serve(dir.path(), &database).stop().unwrap();
    seed(&database, routes, seed_as).await;
    let mut serve = start_serve(dir.path(), &database);
    let pid = serve.pid();
    let line = serve
        .watched
        .lock()
        .unwrap()
        .last()
        .cloned()
        .expect("serve logs that its engine started");
    let field = |name: &str| -> f64 {
        line.split(&format!("{name}="))
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse().ok())
            .unwrap_or_else(|| panic!("{name} in {line:?}"))
    };
    let (elapsed_ms, reconciled) = (field("elapsed_ms"), field("routes") as usize);
    let metrics = scrape(&providers::http_client(), &serve.base).await;
    let (rss, peak) = (status_mb(&pid, "VmRSS:"), status_mb(&pid, "VmHWM:"));
    serve.stop().unwrap();
    (elapsed_ms, reconciled, metrics, rss, peak)
}

async fn waiting(driver: &str, routes: usize) {
    let (start_ms, _, metrics, rss, peak) = restart(driver, routes, Seed::Waiting).await;
    let waiting_now = metric_sum(&metrics, "switchback_routes{state=\"retry_wait\"}");
    assert_eq!(waiting_now as usize, routes, "every route still waits");
    println!(
        "waiting, {driver}: serve started with {routes} waiting routes in {start_ms} ms (its engine start); \
         RSS {rss:.0} MB once started, peak {peak:.0} MB"
    );
    figure(&format!("waiting.{driver}.start_ms"), start_ms);
    figure(&format!("waiting.{driver}.rss_mb"), rss);
    figure(&format!("waiting.{driver}.peak_rss_mb"), peak);

    let (reconcile_ms, reconciled, metrics, _, peak) =
        restart(driver, routes, Seed::Interrupted).await;
    assert_eq!(reconciled, routes, "every interrupted route reconciled");
    let held = metric_sum(&metrics, "switchback_routes{state=\"held\"}");
    assert_eq!(held as usize, routes, "every interrupted route held");
    println!(
        "restart, {driver}: {routes} routes interrupted mid-call reconciled (each held as interrupted) in {reconcile_ms} ms; \
         peak RSS {peak:.0} MB"
    );
    figure(&format!("restart.{driver}.reconcile_ms"), reconcile_ms);
    figure(&format!("restart.{driver}.peak_rss_mb"), peak);
}

// ---------------------------------------------------------------------------
// Server-side rendering of the pages.

async fn pages(requests: usize) {
    let mut run = Run::start(
        "sqlite",
        "openai_compatible",
        "OPENAI_API_KEY",
        ["bench-a", "bench-b"],
    )
    .await;
    let task = run.completed_task("page").await;
    let (client, base, profile) = (&run.client, &run.base, &run.profile);
    for (name, path) in [
        ("editor", format!("/profiles/{profile}")),
        ("route", format!("/tasks/{task}")),
    ] {
        let mut times = Vec::new();
        for _ in 0..requests {
            let started = Instant::now();
            let response = client.get(format!("{base}{path}")).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "GET {path}");
            let body = response.text().await.unwrap();
            assert!(body.contains("</html>"), "GET {path} renders a page");
            times.push(started.elapsed().as_micros() as i64);
        }
        times.sort_unstable();
        let (p50, p99) = (
            percentile(&times, 0.50) as f64 / 1_000.0,
            percentile(&times, 0.99) as f64 / 1_000.0,
        );
        println!("pages, {name} ({path}): p50 {p50:.2} ms, p99 {p99:.2} ms over {requests}");
        figure(&format!("pages.{name}.p50_ms"), p50);
        figure(&format!("pages.{name}.p99_ms"), p99);
    }
    run.serve.stop().unwrap();
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|arg| !arg.starts_with("--"))
        .collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let count = |index: usize, default: usize| {
        args.get(index)
            .and_then(|arg| arg.parse().ok())
            .unwrap_or(default)
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    match args.as_slice() {
        ["retry", "switchback", driver, ..] => {
            runtime.block_on(retry_switchback(driver, count(3, 10_000)));
        }
        ["retry", "litellm", ..] => retry_litellm(count(2, 10_000)),
        ["reset", "switchback", ..] => runtime.block_on(reset_switchback()),
        ["reset", "litellm", ..] => reset_litellm(),
        ["classify", "switchback", ..] => classify_switchback(),
        ["classify", "litellm", ..] => classify_litellm(),
        ["waiting", driver, ..] => runtime.block_on(waiting(driver, count(2, 100_000))),
        ["pages", ..] => runtime.block_on(pages(count(1, 200))),
        _ => {
            eprintln!(
                "usage: side_by_side retry switchback sqlite|postgres [TASKS] | retry litellm [TASKS] \
                 | reset switchback|litellm | classify switchback|litellm | waiting sqlite|postgres [ROUTES] \
                 | pages [REQUESTS]"
            );
            std::process::exit(2);
        }
    }
}
