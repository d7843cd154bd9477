//! Two `switchback serve` replicas on one PostgreSQL database (a schema of the
//! test's own), through a loopback provider that counts the requests of each
//! task: tasks created on either replica run to the end their script implies
//! while one replica is killed with SIGKILL and started again, no attempt is
//! sent twice, and a page watching one replica sees what the other commits.

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::request;
use providers::mock::{MockProvider, MockResponse};
use serde_json::{Value, json};

/// Tasks in the run (`SWITCHBACK_REPLICA_TASKS` to change it).
const TASKS: usize = 1_000;

/// The counting provider, on a runtime of its own: every fourth task's first
/// call is throttled (`retry-after: 0`, a reset wait of nothing); every call is
/// answered after 20 ms, so calls are in flight when a replica is killed. Each
/// task's prompt is its own (`task N`).
fn start_provider() -> MockProvider {
    MockProvider::scripted_apart(|call| {
        let index: usize = call
            .prompt
            .strip_prefix("task ")
            .and_then(|index| index.parse().ok())
            .unwrap_or(1);
        let answer = if index.is_multiple_of(4) && call.nth == 1 {
            MockResponse::openai_throttled()
        } else {
            MockResponse::reply("Hello")
        };
        answer.after(Duration::from_millis(20))
    })
}

/// The ids of the tasks whose route events arrive on `address`'s event stream.
fn watch_events(address: &str) -> Arc<Mutex<HashSet<String>>> {
    let seen: Arc<Mutex<HashSet<String>>> = Arc::default();
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let into = seen.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if let Some(data) = line.strip_prefix("data:")
                && let Ok(event) = serde_json::from_str::<Value>(data.trim())
                && let Some(id) = event["task_id"].as_str()
            {
                into.lock().unwrap().insert(id.to_owned());
            }
        }
    });
    seen
}

/// How many of the run's routes are in each state, read through `address`.
fn states(address: &str) -> HashMap<String, usize> {
    let mut counts = HashMap::new();
    for task in crate::common::list_tasks(address) {
        *counts
            .entry(task["route"]["state"].as_str().unwrap().to_owned())
            .or_insert(0) += 1;
    }
    counts
}

#[test]
fn two_replicas_share_one_database_and_survive_the_loss_of_one() {
    let tasks: usize = std::env::var("SWITCHBACK_REPLICA_TASKS")
        .ok()
        .and_then(|tasks| tasks.parse().ok())
        .unwrap_or(TASKS);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_schema, url) = runtime
        .block_on(testkit::postgres::schema("switchback_replicas"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let replica = |name: &str| {
        crate::common::serve(
            dir.path(),
            &["--replica", name],
            &[("SWITCHBACK_DATABASE_URL", &url)],
        )
    };
    let mut a_server = replica("a");
    let mut b_server = replica("b");
    let a = a_server.address().to_owned();
    let mut b = b_server.address().to_owned();
    let mock = start_provider();
    let base_url = mock.base_url();
    for (address, name) in [(&a, "a"), (&b, "b")] {
        let (status, health) = crate::common::get_text(address, "/healthz");
        assert_eq!(status, 200, "{health}");
        let health = health.split_once("\r\n\r\n").unwrap().1;
        assert!(health.contains(r#""database":"postgres""#), "{health}");
        assert!(
            health.contains(&format!(r#""replica":"{name}""#)),
            "{health}"
        );
        assert!(health.contains(r#""scheduler":"running""#), "{health}");
    }

    let (status, provider) = request(
        &a,
        "POST",
        "/api/providers",
        Some(&json!({"name": "counting", "kind": "openai_compatible", "base_url": base_url})),
    );
    assert_eq!(status, 201, "{provider}");
    let policy = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 100},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "stop"},
        "hard": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 100},
                 "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "stop"}});
    let (status, profile) = request(
        &b,
        "POST",
        "/api/profiles",
        Some(
            &json!({"name": "replicated", "candidates": [{"provider_id": provider["id"],
            "model": "m", "enabled": true, "max_tokens": 64, "policy": policy}]}),
        ),
    );
    assert_eq!(status, 201, "{profile}");

    // One Idempotency-Key sent to both replicas at once: one task.
    let key_body = json!({"profile_id": profile["id"], "prompt": "task 0"});
    let (on_a, on_b) = std::thread::scope(|scope| {
        let on_a = scope.spawn(|| {
            crate::common::request_with(
                &a,
                "POST",
                "/api/tasks",
                &[("Idempotency-Key", "once")],
                Some(&key_body),
            )
        });
        let on_b = scope.spawn(|| {
            crate::common::request_with(
                &b,
                "POST",
                "/api/tasks",
                &[("Idempotency-Key", "once")],
                Some(&key_body),
            )
        });
        (on_a.join().unwrap(), on_b.join().unwrap())
    });
    let mut statuses = [on_a.0, on_b.0];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 201], "{on_a:?} {on_b:?}");
    assert_eq!(on_a.1["id"], on_b.1["id"]);

    // A page on replica A; half the tasks are created on B, which dies halfway
    // (its calls in flight) and comes back under its name.
    let seen_on_a = watch_events(&a);
    let mut created_on_b = Vec::new();
    let mut ids = Vec::new();
    for index in 1..=tasks {
        let on_b = index % 2 == 0;
        let (status, task) = request(
            if on_b { &b } else { &a },
            "POST",
            "/api/tasks",
            Some(&json!({"profile_id": profile["id"], "prompt": format!("task {index}")})),
        );
        assert_eq!(status, 201, "{task}");
        let id = task["id"].as_str().unwrap().to_owned();
        if on_b {
            created_on_b.push(id.clone());
        }
        ids.push(id);
        if index == tasks / 2 {
            b_server.signal("-KILL");
            b_server = replica("b");
            b = b_server.address().to_owned();
        }
    }

    // Every route comes to rest: completed, or held as interrupted (its call was
    // in flight on the replica that died: SPEC 5 leaves it to a person).
    let counts =
        testkit::eventually_every(Duration::from_secs(120), Duration::from_millis(100), || {
            let counts = states(&a);
            let resting = counts.get("completed").copied().unwrap_or(0)
                + counts.get("held").copied().unwrap_or(0);
            if resting == tasks + 1 {
                Ok(counts)
            } else {
                Err(format!("not at rest: {counts:?}"))
            }
        });
    eprintln!("at rest: {counts:?}");
    assert!(
        counts.get("completed").copied().unwrap_or(0) > tasks / 2,
        "{counts:?}"
    );

    // No attempt was sent twice: a task's requests are at most its attempts (an
    // attempt committed as started and cut before it was sent is not a request),
    // and a completed task's every attempt was answered.
    for (index, id) in ids.iter().enumerate() {
        let (status, task) = request(&a, "GET", &format!("/api/tasks/{id}"), None);
        assert_eq!(status, 200, "{task}");
        let attempts = task["attempts"].as_array().unwrap();
        let requests = mock.calls_for(&format!("task {}", index + 1)) as usize;
        assert!(requests <= attempts.len(), "{requests} requests for {task}");
        match task["route"]["state"].as_str().unwrap() {
            "completed" => {
                assert_eq!(requests, attempts.len(), "{task}");
                let expected = if (index + 1) % 4 == 0 { 2 } else { 1 };
                assert_eq!(attempts.len(), expected, "{task}");
            }
            "held" => {
                assert_eq!(task["route"]["cause"], "interrupted", "{task}");
                assert_eq!(attempts.last().unwrap()["outcome"], "interrupted", "{task}");
            }
            other => panic!("{other}: {task}"),
        }
    }

    // The page on A saw the routes B moved.
    testkit::eventually(Duration::from_secs(10), || {
        let seen = seen_on_a.lock().unwrap();
        match created_on_b.iter().filter(|id| !seen.contains(*id)).count() {
            0 => Ok(()),
            missing => Err(format!("{missing} of B's tasks never reached A's page")),
        }
    });
    a_server.signal("-TERM");
    b_server.signal("-TERM");
}

/// A server started again without `--replica` after it was killed takes the
/// same name (stable for the machine and the database), so the route whose
/// call it had in flight is held `interrupted` by the time it listens again,
/// not once its old heartbeat lapses; and a second server without a name of
/// its own is refused while the first runs.
#[test]
fn a_server_restarted_without_a_name_takes_its_routes_back_at_once() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (_schema, url) = runtime
        .block_on(testkit::postgres::schema("switchback_restart_name"))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let serve = || crate::common::serve(dir.path(), &[], &[("SWITCHBACK_DATABASE_URL", &url)]);
    let mut first = serve();
    let address = first.address().to_owned();
    let replica = |address: &str| {
        let (status, health) = crate::common::get_text(address, "/healthz");
        assert_eq!(status, 200, "{health}");
        let health: Value = serde_json::from_str(health.split_once("\r\n\r\n").unwrap().1).unwrap();
        health["replica"].as_str().unwrap().to_owned()
    };
    let name = replica(&address);

    let (status, hanging) = request(
        &address,
        "POST",
        "/api/providers",
        Some(&json!({"name": "hangs", "kind": "simulated", "script": [{"hang": true}]})),
    );
    assert_eq!(status, 201, "{hanging}");
    let (status, profile) = request(
        &address,
        "POST",
        "/api/profiles",
        Some(
            &json!({"name": "hangs", "candidates": [{"provider_id": hanging["id"],
            "model": "m", "enabled": true, "max_tokens": 64}]}),
        ),
    );
    assert_eq!(status, 201, "{profile}");
    let (status, task) = request(
        &address,
        "POST",
        "/api/tasks",
        Some(&json!({"profile_id": profile["id"], "prompt": "hi"})),
    );
    assert_eq!(status, 201, "{task}");
    let path = format!("/api/tasks/{}", task["id"].as_str().unwrap());
    testkit::eventually(Duration::from_secs(10), || {
        let (_, task) = request(&address, "GET", &path, None);
        (task["route"]["state"] == "running").then_some(())
    });

    // A second server without a name of its own would take the first's: refused.
    let second = crate::common::serve_command(dir.path())
        .env("SWITCHBACK_DATABASE_URL", &url)
        .start();
    let said = second.expect_err("a second server under one name started");
    assert!(
        said.contains(&name) && said.contains("--replica"),
        "the refusal names the name and the way out: {said}"
    );

    first.signal("-KILL");
    let restarted = serve();
    let address = restarted.address().to_owned();
    assert_eq!(replica(&address), name, "the same name at each start");
    let (status, held) = request(&address, "GET", &path, None);
    assert_eq!(status, 200, "{held}");
    assert_eq!(held["route"]["state"], "held", "{held}");
    assert_eq!(held["route"]["cause"], "interrupted", "{held}");
    assert_eq!(held["attempts"][0]["outcome"], "interrupted", "{held}");
}
