//! What the tests of the real binary share: plain HTTP/1.1 over a TCP stream,
//! and `switchback serve` as a child process (the test kit's [`ServeProcess`]).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
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

pub use testkit::{ServeCommand, ServeProcess};

/// How to start `switchback serve` in `dir`, on a free loopback port.
pub fn serve_command(dir: &std::path::Path) -> ServeCommand {
    ServeProcess::command(env!("CARGO_BIN_EXE_switchback"), dir)
}

/// `switchback serve` in `dir` with these extra arguments and environment, once
/// it listens.
pub fn serve(dir: &std::path::Path, args: &[&str], env: &[(&str, &str)]) -> ServeProcess {
    serve_command(dir).args(args).envs(env).start().unwrap()
}
