//! The gateway's added latency (a bench binary, not a timed test): what a
//! client waits for beyond the provider's own time, at a steady request rate,
//! every call durable (a task of kind `gateway` on SQLite).
//!
//! One loopback OpenAI-style mock, on a thread and runtime of its own, answers
//! every call at once with a short streamed reply. The same open-loop load (a
//! request every 1/RATE s, whatever the answers, for SECONDS) goes to the mock
//! directly, then through the real `switchback serve` (a profile of one
//! candidate, the mock), and, with `--litellm PROXY`, through LiteLLM's proxy
//! (`bench/peer-proxy/`) on the same mock: first whole answers
//! (`stream: false`), then streamed ones (time to the first piece of text).
//! Each is reported as p50/p99 (with p99.9 and the slowest, for the tail) and
//! the added latency as its percentile less the direct one's, with errors (a non-200, a transport error, no answer within
//! 30 s). The load generator, serve, the mock and the peer share the machine's
//! cores, as they would on one host.
//!
//! `cargo bench --workspace --bench gateway --profile release -- [RATE]
//! [SECONDS] [--litellm PATH_TO_LITELLM]`; `scripts/bench` runs it in full,
//! `.ci/run` short (`-- 100 2`). Prints what it saw, then `figure NAME VALUE`
//! lines for `scripts/bench-table`. Exits nonzero on any error of Switchback's.

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::percentile;
use common::process::Serve;
use providers::mock::{MockProvider, MockResponse};
use providers::reqwest;
use serde_json::{Value, json};

/// The longest a request may take before it counts as an error.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

fn figure(name: &str, value: f64) {
    println!("figure {name} {value}");
}

/// One request's outcome: how long to the whole answer (or its first piece
/// of text, streamed), or what went wrong.
type Outcome = Result<Duration, String>;

/// Whether `bytes` hold a piece of answer text: an OpenAI chunk whose delta has
/// non-empty `content`.
fn has_text(bytes: &[u8]) -> bool {
    let text = String::from_utf8_lossy(bytes);
    text.match_indices("\"content\":\"")
        .any(|(at, found)| !text[at + found.len()..].starts_with('"'))
}

async fn one(client: &reqwest::Client, url: &str, body: &Value, stream: bool) -> Outcome {
    let began = Instant::now();
    let response = client
        .post(url)
        .header("authorization", "Bearer unused")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .map_err(|error| format!("send: {error}"))?;
    if response.status() != reqwest::StatusCode::OK {
        return Err(format!("status {}", response.status()));
    }
    let mut response = response;
    let mut seen = Vec::new();
    let mut first_text = None;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|error| format!("body: {error}"))?
    {
        if stream && first_text.is_none() {
            seen.extend_from_slice(&chunk);
            if has_text(&seen) {
                first_text = Some(began.elapsed());
            }
        }
    }
    match (stream, first_text) {
        (false, _) => Ok(began.elapsed()),
        (true, Some(first)) => Ok(first),
        (true, None) => Err("a stream without text".to_owned()),
    }
}

/// The open-loop load on `url`: a request every 1/`rate` s for `seconds`.
async fn load(
    client: &reqwest::Client,
    url: &str,
    model: &str,
    stream: bool,
    rate: u32,
    seconds: u32,
) -> Vec<Outcome> {
    let body = Arc::new(json!({"model": model, "max_tokens": 16, "stream": stream,
        "messages": [{"role": "user", "content": "Say hello"}]}));
    let mut ticks = tokio::time::interval(Duration::from_secs_f64(1.0 / f64::from(rate)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let mut calls = Vec::new();
    for _ in 0..rate * seconds {
        ticks.tick().await;
        let (client, url, body) = (client.clone(), url.to_owned(), body.clone());
        calls.push(tokio::spawn(async move {
            tokio::time::timeout(REQUEST_TIMEOUT, one(&client, &url, &body, stream))
                .await
                .unwrap_or_else(|_| Err("no answer within 30 s".to_owned()))
        }));
    }
    let mut outcomes = Vec::with_capacity(calls.len());
    for call in calls {
        outcomes.push(call.await.unwrap_or_else(|error| Err(error.to_string())));
    }
    outcomes
}

/// p50, p99, p99.9 and the slowest, in microseconds, of the outcomes that
/// answered, and the errors.
fn summary(outcomes: &[Outcome]) -> ([i64; 4], usize, Option<String>) {
    let mut micros: Vec<i64> = outcomes
        .iter()
        .filter_map(|outcome| outcome.as_ref().ok())
        .map(|took| i64::try_from(took.as_micros()).unwrap_or(i64::MAX))
        .collect();
    micros.sort_unstable();
    let errors: Vec<&String> = outcomes
        .iter()
        .filter_map(|outcome| outcome.as_ref().err())
        .collect();
    (
        [
            percentile(&micros, 0.50),
            percentile(&micros, 0.99),
            percentile(&micros, 0.999),
            micros.last().copied().unwrap_or(0),
        ],
        errors.len(),
        errors.first().map(|error| (*error).clone()),
    )
}

/// LiteLLM's proxy on `port`, one model `bench` on the mock, once it answers.
fn start_litellm(
    litellm: &str,
    mock_base: &str,
    dir: &std::path::Path,
) -> (std::process::Child, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port();
    let config = dir.join("litellm.yaml");
    std::fs::write(
        &config,
        format!(
            "model_list:\n  - model_name: bench\n    litellm_params:\n      model: openai/gpt-mock\n      \
             api_base: {mock_base}/v1\n      api_key: unused\nlitellm_settings:\n  num_retries: 2\n"
        ),
    )
    .unwrap();
    let child = std::process::Command::new(litellm)
        .args([
            "--config",
            &config.display().to_string(),
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ])
        .env("LITELLM_LOG", "ERROR")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("starting {litellm}: {error}"));
    let base = format!("http://127.0.0.1:{port}");
    let began = Instant::now();
    loop {
        let up = std::net::TcpStream::connect(("127.0.0.1", port)).is_ok();
        if up {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(120),
            "LiteLLM's proxy did not start"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    (child, base)
}

#[tokio::main]
async fn main() {
    let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
    let mut numbers = Vec::new();
    let mut litellm = None;
    while let Some(arg) = args.next() {
        if arg == "--litellm" {
            litellm = args.next();
        } else {
            numbers.push(arg.parse::<u32>().expect("RATE and SECONDS are numbers"));
        }
    }
    let rate = numbers.first().copied().unwrap_or(1_000);
    let seconds = numbers.get(1).copied().unwrap_or(20);
    let mock = MockProvider::scripted_apart(|_| MockResponse::reply("Hello from the mock"));
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("gateway.db").display());
    let serve = Serve::start(dir.path(), &database, &[], "");
    let client = providers::http_client_builder()
        .pool_max_idle_per_host(4_096)
        .build()
        .unwrap();
    let post = |path: &str, body: Value| {
        client
            .post(format!("{}{path}", serve.base))
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
    };
    let provider = post(
        "/api/providers",
        json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}),
    )
    .await
    .unwrap();
    let provider: Value = serde_json::from_slice(&provider.bytes().await.unwrap()).unwrap();
    let created = post(
        "/api/profiles",
        json!({"name": "bench", "candidates": [{"provider_id": provider["id"], "model": "gpt-mock",
            "enabled": true, "max_tokens": 16}]}),
    )
    .await
    .unwrap();
    assert!(created.status().is_success(), "{:?}", created.text().await);
    let mut targets = vec![
        ("direct", format!("{}/v1/chat/completions", mock.base_url())),
        ("switchback", format!("{}/v1/chat/completions", serve.base)),
    ];
    let mut peer = None;
    if let Some(litellm) = &litellm {
        let (child, base) = start_litellm(litellm, &mock.base_url(), dir.path());
        targets.push(("litellm", format!("{base}/v1/chat/completions")));
        peer = Some(child);
    }
    println!("{rate} requests/s for {seconds} s each; the mock answers at once");
    let mut switchback_errors = 0;
    // The direct figures, by shape: what the others' added latency is measured from.
    let mut direct = [(0, 0); 2];
    // One side at a time, whole answers then streamed: a side that falls behind
    // (and works on through its backlog) slows only its own figures.
    for (name, url) in &targets {
        for (index, (shape, stream)) in [("whole", false), ("stream", true)].into_iter().enumerate()
        {
            // A second's warm-up: connections open, caches filled.
            load(&client, url, "bench", stream, rate, 1).await;
            let outcomes = load(&client, url, "bench", stream, rate, seconds).await;
            let ([p50, p99, p999, slowest], errors, first_error) = summary(&outcomes);
            if *name == "direct" {
                direct[index] = (p50, p99);
            }
            if *name == "switchback" {
                switchback_errors += errors;
            }
            let added = (p50 - direct[index].0, p99 - direct[index].1);
            println!(
                "{shape:6} {name:10} p50 {:>8.3} ms  p99 {:>8.3} ms  added p50 {:>8.3} ms  p99 {:>8.3} ms  (p99.9 {:.1} ms, slowest {:.1} ms)  errors {errors}{}",
                p50 as f64 / 1e3,
                p99 as f64 / 1e3,
                added.0 as f64 / 1e3,
                added.1 as f64 / 1e3,
                p999 as f64 / 1e3,
                slowest as f64 / 1e3,
                first_error
                    .map(|error| format!(" (first: {error})"))
                    .unwrap_or_default()
            );
            figure(&format!("gateway.{name}.{shape}.p50_ms"), p50 as f64 / 1e3);
            figure(&format!("gateway.{name}.{shape}.p99_ms"), p99 as f64 / 1e3);
            figure(&format!("gateway.{name}.{shape}.errors"), errors as f64);
            if *name != "direct" {
                figure(
                    &format!("gateway.{name}.{shape}.added_p50_ms"),
                    added.0 as f64 / 1e3,
                );
                figure(
                    &format!("gateway.{name}.{shape}.added_p99_ms"),
                    added.1 as f64 / 1e3,
                );
            }
        }
    }
    if let Some(mut child) = peer {
        let _ = child.kill();
        let _ = child.wait();
    }
    let complaints = serve.complaints.count();
    drop(serve);
    assert_eq!(switchback_errors, 0, "Switchback's calls failed");
    assert_eq!(complaints, 0, "serve logged warnings or errors");
}
