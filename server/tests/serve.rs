//! The real binary: it starts on an empty directory, answers `/healthz`, and
//! stops cleanly on SIGTERM.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::common::{get, get_text, request};

/// Start `switchback serve` on the SQLite file `database`, in its (otherwise
/// empty) directory.
fn start_server(database: &std::path::Path) -> crate::common::ServeProcess {
    let url = format!("sqlite://{}", database.display());
    crate::common::serve(
        database.parent().unwrap(),
        &[],
        &[("SWITCHBACK_DATABASE_URL", &url)],
    )
}

#[test]
fn serves_health_from_an_empty_directory_and_stops_on_sigterm() {
    let work_dir = tempfile::tempdir().unwrap();
    let database = work_dir.path().join("data").join("switchback.db");
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    let mut child = start_server(&database);
    let address = child.address().to_owned();

    let health = get(&address, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains(r#""status":"ok""#), "{health}");
    assert!(health.contains(r#""database":"sqlite""#), "{health}");
    assert!(health.contains(r#""scheduler":"running""#), "{health}");
    assert!(!health.contains("replica"), "{health}");
    assert!(database.exists(), "the database file was created");

    let exit = child.signal("-TERM");
    assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
    // Every line it printed: the reader ends at the end of its output, which may
    // come a moment after the exit is seen.
    let rest: Vec<String> = child.lines().iter().collect();
    assert!(
        rest.iter().any(|line| line.contains("switchback stopped")),
        "{rest:?}"
    );
}

/// The moment it says where it listens, it stops cleanly on SIGTERM: the
/// handler is in place before that line (a supervisor or script that stops it
/// as soon as it is up must not kill it mid-start). Each round sends the
/// signal as soon as the line is read.
#[test]
fn sigterm_right_after_the_listening_line_is_a_clean_stop() {
    for _ in 0..5 {
        let work_dir = tempfile::tempdir().unwrap();
        let mut child = start_server(&work_dir.path().join("switchback.db"));
        let exit = child.signal("-TERM");
        assert!(exit.success(), "clean exit on an early SIGTERM: {exit:?}");
        let rest: Vec<String> = child.lines().iter().collect();
        assert!(
            rest.iter().any(|line| line.contains("switchback stopped")),
            "{rest:?}"
        );
    }
}

#[test]
fn policy_check_prints_version_2_or_field_errors() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.json");
    std::fs::write(&good, r#"{"rate_limited": "retry_same", "overloaded": "retry_same", "server_error": "retry_same", "network": "retry_same", "timeout": "retry_same"}"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["policy", "check"])
        .arg(&good)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(document["version"], 2);
    assert_eq!(document["transient"]["retry"]["enabled"], true);
    assert_eq!(document["transient"]["on_exhausted"], "stop");

    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"{"version": 2, "transient": {}, "hard": {}}"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["policy", "check"])
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let errors: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let fields: Vec<&str> = errors["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&"transient.retry") && fields.contains(&"hard.on_exhausted"),
        "{fields:?}"
    );

    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["policy", "check"])
        .arg(dir.path().join("missing.json"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("cannot read"),
        "{output:?}"
    );
}

/// One HTTP/1.1 exchange over a plain socket: (status, body).
fn send(address: &str, method: &str, path: &str, body: Option<&str>) -> (u16, String) {
    let mut stream = TcpStream::connect(address).unwrap();
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[test]
fn providers_and_profiles_through_a_running_server() {
    let work_dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", work_dir.path().join("api.db").display());
    let server = crate::common::serve(work_dir.path(), &["--database", &database], &[]);
    let address = server.address().to_owned();

    let (status, provider) = send(
        &address,
        "POST",
        "/api/providers",
        Some(r#"{"name": "Sim", "kind": "simulated"}"#),
    );
    assert_eq!(status, 201, "{provider}");
    let provider: serde_json::Value = serde_json::from_str(&provider).unwrap();
    let profile = serde_json::json!({"name": "Demo", "candidates": [
        {"provider_id": provider["id"], "model": "sim-1", "enabled": true, "max_tokens": 100,
         "policy": {"overloaded": "retry_same", "rate_limited": "retry_same", "server_error": "retry_same",
                    "network": "retry_same", "timeout": "retry_same", "default": "try_next"}}]});
    let (status, created) = send(
        &address,
        "POST",
        "/api/profiles",
        Some(&profile.to_string()),
    );
    assert_eq!(status, 201, "{created}");
    let created: serde_json::Value = serde_json::from_str(&created).unwrap();
    assert_eq!(created["candidates"][0]["policy"]["version"], 2);
    assert_eq!(
        created["candidates"][0]["policy"]["transient"]["on_exhausted"],
        "stop"
    );
    assert_eq!(
        created["candidates"][0]["policy"]["hard"]["on_exhausted"],
        "skip"
    );

    let (status, body) = send(&address, "POST", "/api/profiles", Some("{oops"));
    assert_eq!(status, 400, "{body}");
    let (status, listed) = send(&address, "GET", "/api/profiles", None);
    assert_eq!(status, 200);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&listed)
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let (status, openapi) = send(&address, "GET", "/api/openapi.json", None);
    assert_eq!(status, 200);
    assert!(openapi.contains("\"/api/profiles/{id}\""));
}

#[test]
fn classify_reads_lines_and_answers_each_in_order() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .arg("classify")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input = concat!(
        r#"{"provider": "claude_code", "output": "Claude AI usage limit reached|1796022000", "observed_at": "2026-11-30T02:00:00Z"}"#,
        "\n",
        "not json\n",
        r#"{"provider": "openai", "transport": "connection_reset"}"#,
        "\n",
    );
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    let lines: Vec<serde_json::Value> = String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["code"], "usage_limited");
    assert_eq!(lines[0]["reset_at"], "2026-11-30T07:00:00Z");
    assert!(lines[1]["error"].is_string());
    assert_eq!(lines[2]["code"], "network");
}

/// Poll a task until its route is in `state` (the engine acts at once; this only
/// waits for it to be seen).
fn until_state(address: &str, id: &str, state: &str) -> serde_json::Value {
    testkit::eventually(Duration::from_secs(10), || {
        let (status, task) = request(address, "GET", &format!("/api/tasks/{id}"), None);
        assert_eq!(status, 200, "{task}");
        if task["route"]["state"] == state {
            Ok(task)
        } else {
            Err(format!("task {id} is not {state}: {task}"))
        }
    })
}

/// SPEC 5, restart, on the real binary killed with SIGKILL (not shut down): a
/// route in flight is held as interrupted, a waiting route keeps its deadline, and
/// nothing is sent twice.
#[test]
fn a_killed_server_restarts_with_its_routes_reconciled() {
    use serde_json::json;
    let work_dir = tempfile::tempdir().unwrap();
    let database = work_dir.path().join("switchback.db");
    let mut child = start_server(&database);
    let address = child.address().to_owned();

    let (status, hanging) = request(
        &address,
        "POST",
        "/api/providers",
        Some(&json!({
        "name": "hangs", "kind": "simulated", "script": [{"hang": true}]})),
    );
    assert_eq!(status, 201, "{hanging}");
    let (_, limited) = request(
        &address,
        "POST",
        "/api/providers",
        Some(&json!({
        "name": "limited", "kind": "simulated", "family": "openai",
        "script": [{"error": {"provider": "openai", "status": 429, "headers": {"retry-after": "3000"},
            "body": "{\"error\":{\"message\":\"Rate limit reached\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}"}}]})),
    );
    let mut tasks = Vec::new();
    for provider in [&hanging, &limited] {
        let wait = json!({"version": 2,
            "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 500},
                          "reset_wait": {"enabled": true, "max_wait_s": 3600}, "on_exhausted": "skip"},
            "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                     "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "skip"}});
        let (status, profile) = request(
            &address,
            "POST",
            "/api/profiles",
            Some(&json!({
            "name": format!("profile {}", provider["name"]),
            "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 100, "policy": wait}]})),
        );
        assert_eq!(status, 201, "{profile}");
        let (status, task) = request(
            &address,
            "POST",
            "/api/tasks",
            Some(&json!({"profile_id": profile["id"], "prompt": "hi"})),
        );
        assert_eq!(status, 201, "{task}");
        tasks.push(task["id"].as_str().unwrap().to_owned());
    }
    until_state(&address, &tasks[0], "running");
    let waiting = until_state(&address, &tasks[1], "waiting_for_reset");

    child.signal("-KILL");

    let mut child = start_server(&database);
    let address = child.address().to_owned();
    let (_, held) = request(&address, "GET", &format!("/api/tasks/{}", tasks[0]), None);
    assert_eq!(held["route"]["state"], "held", "{held}");
    assert_eq!(held["route"]["cause"], "interrupted");
    assert_eq!(held["attempts"].as_array().unwrap().len(), 1);
    assert_eq!(held["attempts"][0]["outcome"], "interrupted");
    let (_, still) = request(&address, "GET", &format!("/api/tasks/{}", tasks[1]), None);
    assert_eq!(still["route"]["state"], "waiting_for_reset");
    assert_eq!(still["route"]["deadline"], waiting["route"]["deadline"]);
    assert_eq!(still["attempts"].as_array().unwrap().len(), 1);

    // A person can take it from there: retry now from held.
    let generation = held["route"]["generation"].clone();
    let (status, retried) = request(
        &address,
        "POST",
        &format!("/api/tasks/{}/actions", tasks[0]),
        Some(&json!({"action": "retry_now", "generation": generation})),
    );
    assert_eq!(status, 200, "{retried}");
    let (status, stale) = request(
        &address,
        "POST",
        &format!("/api/tasks/{}/actions", tasks[0]),
        Some(&json!({"action": "stop", "generation": generation})),
    );
    assert_eq!(status, 409, "{stale}");
    assert_eq!(stale["error"], "stale_generation");

    let (status, metrics) = get_text(&address, "/metrics");
    assert_eq!(status, 200);
    assert!(
        metrics.contains("switchback_routes{state=\"waiting_for_reset\"} 1"),
        "{metrics}"
    );
    child.signal("-TERM");
}

/// A page watching live events does not keep the server from stopping.
#[test]
fn sigterm_stops_the_server_with_an_event_stream_open() {
    let work_dir = tempfile::tempdir().unwrap();
    let mut child = start_server(&work_dir.path().join("switchback.db"));
    let address = child.address().to_owned();
    let mut stream = TcpStream::connect(&address).unwrap();
    write!(
        stream,
        "GET /api/events HTTP/1.1\r\nHost: {address}\r\nAccept: text/event-stream\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 12];
    stream.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = done_tx.send(child.signal("-TERM"));
    });
    let exit = done_rx
        .recv_timeout(Duration::from_secs(20))
        .expect("the server stops with a stream open");
    assert!(exit.success(), "{exit:?}");
}

/// Bound beyond loopback, the server refuses to start without an admin
/// token and says how to give one; with one, the API needs it over a real
/// socket, and the health check stays open.
#[test]
fn beyond_loopback_the_server_needs_its_admin_token() {
    let dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", dir.path().join("open.db").display());
    let refused = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["serve", "--bind", "0.0.0.0:0", "--database", &database])
        .env_remove("SWITCHBACK_ADMIN_TOKEN")
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    for words in [
        "not a loopback address",
        "SWITCHBACK_ADMIN_TOKEN",
        "--admin-token-file",
    ] {
        assert!(stderr.contains(words), "{words}: {stderr}");
    }
    assert!(!dir.path().join("open.db").exists(), "nothing was created");

    let token = "serve-test-admin-token-0123";
    let mut child = crate::common::serve_command(dir.path())
        .bind("0.0.0.0:0")
        .args(&["--database", &database])
        .env("SWITCHBACK_ADMIN_TOKEN", token)
        .start()
        .unwrap();
    let port = child.address().rsplit(':').next().unwrap().to_owned();
    let address = format!("127.0.0.1:{port}");
    let (status, refused) = request(&address, "GET", "/api/tasks", None);
    assert_eq!(status, 401, "{refused}");
    let bearer = format!("Bearer {token}");
    let (status, page) = crate::common::request_with(
        &address,
        "GET",
        "/api/tasks",
        &[("Authorization", &bearer)],
        None,
    );
    assert_eq!(status, 200, "{page}");
    assert!(get(&address, "/healthz").starts_with("HTTP/1.1 200"));
    let logged: Vec<String> = child.lines().try_iter().collect();
    assert!(
        logged.iter().all(|line| !line.contains(token)),
        "the token is never logged: {logged:?}"
    );
    child.signal("-TERM");
}

/// `switchback backup` copies a database a server is using; a server
/// started on the copy shows the same routes, and a route that was waiting
/// for its reset goes on to the end.
#[test]
fn a_backup_taken_while_serving_restores_the_same_routes_and_resumes_waits() {
    use serde_json::json;
    let live_dir = tempfile::tempdir().unwrap();
    let database = live_dir.path().join("switchback.db");
    let mut child = start_server(&database);
    let address = child.address().to_owned();
    let (_, limited) = request(
        &address,
        "POST",
        "/api/providers",
        Some(
            &json!({"name": "limited", "kind": "simulated", "family": "openai",
            // A reset far enough ahead that taking the backup and starting the
            // restored server come before it, even on a loaded machine.
            "script": [{"error": {"provider": "openai", "status": 429, "headers": {"retry-after": "8"}}},
                       {"reply": "after the reset"}]}),
        ),
    );
    let (_, answers) = request(
        &address,
        "POST",
        "/api/providers",
        Some(&json!({"name": "answers", "kind": "simulated", "script": [{"reply": "at once"}]})),
    );
    let mut tasks = Vec::new();
    for provider in [&limited, &answers] {
        let (status, profile) = request(
            &address,
            "POST",
            "/api/profiles",
            Some(&json!({"name": format!("profile {}", provider["name"]),
                "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 100}]})),
        );
        assert_eq!(status, 201, "{profile}");
        let (status, task) = request(
            &address,
            "POST",
            "/api/tasks",
            Some(&json!({"profile_id": profile["id"], "prompt": "hi"})),
        );
        assert_eq!(status, 201, "{task}");
        tasks.push(task["id"].as_str().unwrap().to_owned());
    }
    let waiting = until_state(&address, &tasks[0], "waiting_for_reset");
    let completed = until_state(&address, &tasks[1], "completed");

    let backup_dir = tempfile::tempdir().unwrap();
    let copy = backup_dir.path().join("copy.db");
    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["backup", copy.to_str().unwrap()])
        .env(
            "SWITCHBACK_DATABASE_URL",
            format!("sqlite://{}", database.display()),
        )
        .output()
        .unwrap();
    let printed = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{printed} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        printed.starts_with("backed up 2 tasks (1 routes not ended)"),
        "{printed}"
    );
    // Never over an existing file.
    let again = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["backup", copy.to_str().unwrap()])
        .env(
            "SWITCHBACK_DATABASE_URL",
            format!("sqlite://{}", database.display()),
        )
        .output()
        .unwrap();
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("exists already"));
    child.signal("-KILL");

    let mut child = start_server(&copy);
    let address = child.address().to_owned();
    let (_, restored_wait) = request(&address, "GET", &format!("/api/tasks/{}", tasks[0]), None);
    let (_, restored_done) = request(&address, "GET", &format!("/api/tasks/{}", tasks[1]), None);
    assert_eq!(
        restored_wait["route"], waiting["route"],
        "the waiting route as it was"
    );
    assert_eq!(restored_wait["attempts"], waiting["attempts"]);
    assert_eq!(restored_done, completed, "the completed task as it was");
    let resumed = until_state(&address, &tasks[0], "completed");
    assert_eq!(
        resumed["turns"][0]["answer"], "after the reset",
        "{resumed}"
    );
    child.signal("-TERM");
}

#[test]
fn classify_reclassify_reads_a_databases_stored_evidence_and_creates_none() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.db");
    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["classify", "--reclassify", "--database"])
        .arg(format!("sqlite://{}", missing.display()))
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("no database at"),
        "{output:?}"
    );
    assert!(!missing.exists(), "nothing created");

    let database = dir.path().join("switchback.db");
    let server = start_server(&database);
    let address = server.address().to_owned();
    let (status, provider) = send(
        &address,
        "POST",
        "/api/providers",
        Some(
            r#"{"name": "Odd", "kind": "simulated", "script": [{"error": {"provider": "other", "status": 418, "body": "teapot"}}]}"#,
        ),
    );
    assert_eq!(status, 201, "{provider}");
    let provider: serde_json::Value = serde_json::from_str(&provider).unwrap();
    let (status, profile) = send(
        &address,
        "POST",
        "/api/profiles",
        Some(&serde_json::json!({"name": "Odd", "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]}).to_string()),
    );
    assert_eq!(status, 201, "{profile}");
    let profile: serde_json::Value = serde_json::from_str(&profile).unwrap();
    let (status, task) = send(
        &address,
        "POST",
        "/api/tasks",
        Some(&serde_json::json!({"profile_id": profile["id"], "prompt": "Hi"}).to_string()),
    );
    assert_eq!(status, 201, "{task}");
    let task: serde_json::Value = serde_json::from_str(&task).unwrap();
    until_state(&address, task["id"].as_str().unwrap(), "held");

    // Beside the running server: SQLite readers do not wait for its writer.
    let output = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["classify", "--reclassify", "--database"])
        .arg(format!("sqlite://{}", database.display()))
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "",
        "nothing reads differently"
    );
    assert!(
        String::from_utf8_lossy(&output.stderr)
            .contains(": 0 of the 1 latest stored attempts read differently"),
        "{output:?}"
    );
}
