//! What the tests of the real binary share: plain HTTP/1.1 over a TCP stream, a
//! `switchback serve` child process, and a loopback server for a test's own
//! provider.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A GET's whole answer, head and body.
pub fn get(address: &str, path: &str) -> String {
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

/// A GET's status and whole answer.
pub fn get_text(address: &str, path: &str) -> (u16, String) {
    let response = get(address, path);
    (response[9..12].parse().unwrap(), response)
}

/// A request with an optional JSON body; the answer's status and body.
pub fn request(
    address: &str,
    method: &str,
    path: &str,
    body: Option<&serde_json::Value>,
) -> (u16, serde_json::Value) {
    request_with(address, method, path, &[], body)
}

/// [`request`] with more headers.
pub fn request_with(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> (u16, serde_json::Value) {
    try_request_with(address, method, path, headers, body)
        .unwrap_or_else(|error| panic!("{method} {path} on {address}: {error}"))
}

/// [`request_with`] that answers an error instead of panicking when the server
/// is not there or goes away before its answer is complete (a test that kills
/// it tries again).
pub fn try_request_with(
    address: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&serde_json::Value>,
) -> Result<(u16, serde_json::Value), String> {
    let mut stream = TcpStream::connect(address).map_err(|error| error.to_string())?;
    // A server stopped by SIGSTOP or stuck would otherwise hold the test forever.
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|error| error.to_string())?;
    let body = body.map(|body| body.to_string()).unwrap_or_default();
    let extra: String = headers
        .iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .map_err(|error| error.to_string())?;
    let mut response = String::new();
    stream
        .read_to_string(&mut response)
        .map_err(|error| error.to_string())?;
    let status = response
        .get(9..12)
        .and_then(|status| status.parse().ok())
        .ok_or_else(|| format!("no status line in {response:?}"))?;
    let (_, rest) = response
        .split_once("\r\n\r\n")
        .ok_or_else(|| format!("no end of the head in {response:?}"))?;
    // The body may come chunked: take the JSON between the first '{' and the last '}'.
    let json = match (rest.find('{'), rest.rfind('}')) {
        (Some(start), Some(end)) => serde_json::from_str(&rest[start..=end])
            .map_err(|error| format!("{error} in {rest:?}"))?,
        _ => serde_json::Value::Null,
    };
    Ok((status, json))
}

/// Every task the server lists, newest first, read a page of 200 at a time.
pub fn list_tasks(address: &str) -> Vec<serde_json::Value> {
    let mut tasks = Vec::new();
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/tasks?limit=200&cursor={cursor}"),
            None => "/api/tasks?limit=200".to_owned(),
        };
        let (status, page) = request(address, "GET", &path, None);
        assert_eq!(status, 200, "{page}");
        tasks.extend(page["tasks"].as_array().unwrap().iter().cloned());
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => return tasks,
        }
    }
}

/// Serve `router` on a free loopback port, on a thread and runtime of its own
/// (so it outlives whatever the test does with its own threads): its base URL.
pub fn serve_on_loopback(router: axum::Router) -> String {
    let (address_tx, address_rx) = mpsc::channel();
    std::thread::spawn(move || {
        tokio::runtime::Runtime::new()
            .unwrap()
            .block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                address_tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, router).await.unwrap();
            });
    });
    format!("http://{}", address_rx.recv().unwrap())
}

/// Start `switchback serve` on a free port with these extra arguments and
/// environment, in `dir`: its address, the child, and the lines it logs.
pub fn start(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (String, Child, mpsc::Receiver<String>) {
    let (child, lines_rx) = spawn(dir, args, env);
    let address = listening_address(&lines_rx);
    (address, child, lines_rx)
}

/// [`start`] without waiting for the server to listen: the child, and the lines
/// it logs.
pub fn spawn(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (Child, mpsc::Receiver<String>) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_switchback"));
    command
        .args(["serve", "--bind", "127.0.0.1:0"])
        .args(args)
        .env("NO_COLOR", "1")
        .current_dir(dir)
        .stdout(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (lines_tx, lines_rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    (child, lines_rx)
}

/// The address a server just spawned listens on, read from its log.
pub fn listening_address(lines_rx: &mpsc::Receiver<String>) -> String {
    loop {
        let line = lines_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a listening line");
        if let Some(address) = listening_in(&line) {
            return address;
        }
    }
}

/// The address in a server's "listening on http://ADDRESS" line (whatever
/// follows it on the line).
pub fn listening_in(line: &str) -> Option<String> {
    let after = line.split("listening on http://").nth(1)?;
    after.split_whitespace().next().map(str::to_owned)
}

/// Send `signal` (`-KILL`, `-TERM`) to the child, and wait for it to end.
pub fn signal(child: &mut Child, signal: &str) {
    let status = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let _ = child.wait();
}

/// A child killed when dropped, so a failing test leaves no server behind.
pub struct Stopped(pub Child);

impl Drop for Stopped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
