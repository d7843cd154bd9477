//! What the tests of the real binary share: plain HTTP/1.1 over a TCP stream, and
//! a `switchback serve` child process.

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
    let mut stream = TcpStream::connect(address).unwrap();
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
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let status = response[9..12].parse().unwrap();
    let (_, rest) = response.split_once("\r\n\r\n").unwrap();
    // The body may come chunked: take the JSON between the first '{' and the last '}'.
    let json = match (rest.find('{'), rest.rfind('}')) {
        (Some(start), Some(end)) => serde_json::from_str(&rest[start..=end]).unwrap(),
        _ => serde_json::Value::Null,
    };
    (status, json)
}

/// Start `switchback serve` on a free port with these extra arguments and
/// environment, in `dir`: its address, the child, and the lines it logs.
pub fn start(
    dir: &std::path::Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (String, Child, mpsc::Receiver<String>) {
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
    let address = loop {
        let line = lines_rx
            .recv_timeout(Duration::from_secs(30))
            .expect("a listening line");
        if let Some(url) = line.split("listening on http://").nth(1) {
            break url.trim().to_string();
        }
    };
    (address, child, lines_rx)
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
