//! The real binary: it starts on an empty directory, answers `/healthz`, and
//! stops cleanly on SIGTERM.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

fn get(address: &str, path: &str) -> String {
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

#[test]
fn serves_health_from_an_empty_directory_and_stops_on_sigterm() {
    let work_dir = tempfile::tempdir().unwrap();
    let database = work_dir.path().join("data").join("switchback.db");
    std::fs::create_dir_all(database.parent().unwrap()).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_switchback"))
        .args(["serve", "--bind", "127.0.0.1:0"])
        .env(
            "SWITCHBACK_DATABASE_URL",
            format!("sqlite://{}", database.display()),
        )
        .env("NO_COLOR", "1")
        .current_dir(work_dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines_tx, lines_rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
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

    let health = get(&address, "/healthz");
    assert!(health.starts_with("HTTP/1.1 200"), "{health}");
    assert!(health.contains(r#""status":"ok""#), "{health}");
    assert!(database.exists(), "the database file was created");

    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let exit = child.wait().unwrap();
    assert!(exit.success(), "clean exit on SIGTERM: {exit:?}");
    let rest: Vec<String> = lines_rx.try_iter().collect();
    assert!(
        rest.iter().any(|line| line.contains("switchback stopped")),
        "{rest:?}"
    );
}
