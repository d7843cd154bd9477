use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;

use anyhow::{anyhow, bail};
use serde_json::Value;
use tempfile::TempDir;
use testkit::ServeProcess;

/// A `switchback serve` process of its own: a free loopback port, a database
/// file of its own, and an empty working directory (the binary must need
/// nothing beside it). Killed when dropped.
pub struct TestServer {
    child: ServeProcess,
    base_url: String,
    work_dir: TempDir,
    admin_token: Option<String>,
}

impl TestServer {
    /// Start the binary and wait until it says where it listens.
    pub fn start() -> anyhow::Result<Self> {
        Self::start_with(None)
    }

    /// Start the binary with an admin token (SWITCHBACK_ADMIN_TOKEN), so
    /// its pages need a sign-in.
    pub fn start_with_token(token: &str) -> anyhow::Result<Self> {
        Self::start_with(Some(token.to_owned()))
    }

    fn start_with(admin_token: Option<String>) -> anyhow::Result<Self> {
        let work_dir = tempfile::tempdir()?;
        let (child, base_url) = spawn(work_dir.path(), "127.0.0.1:0", admin_token.as_deref())?;
        Ok(Self {
            child,
            base_url,
            work_dir,
            admin_token,
        })
    }

    /// Kill the process (SIGKILL: nothing is shut down gracefully) and start it
    /// again on the same address and database, as a crash and a supervisor's
    /// restart would.
    pub fn restart(&mut self) -> anyhow::Result<()> {
        self.child.signal("-KILL");
        let address = self.base_url.trim_start_matches("http://").to_owned();
        let (child, base_url) = spawn(self.work_dir.path(), &address, self.admin_token.as_deref())?;
        self.child = child;
        self.base_url = base_url;
        Ok(())
    }

    /// `http://127.0.0.1:PORT` followed by `path`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// `GET path` with `Authorization: Bearer {bearer}` (not the admin token):
    /// the status and the body, as a gateway client would see them.
    pub fn get_as(&self, path: &str, bearer: &str) -> anyhow::Result<(u16, String)> {
        self.exchange(
            "GET",
            path,
            &format!("Authorization: Bearer {bearer}\r\n"),
            "",
        )
    }

    /// Send JSON to the API and read the answer: for setting up what a test
    /// needs without going through pages it does not test.
    pub fn send_json(
        &self,
        method: &str,
        path: &str,
        body: &Value,
    ) -> anyhow::Result<(u16, Value)> {
        let mut headers = self
            .admin_token
            .as_ref()
            .map(|token| format!("Authorization: Bearer {token}\r\n"))
            .unwrap_or_default();
        headers.push_str("Content-Type: application/json\r\n");
        let (status, body) = self.exchange(method, path, &headers, &body.to_string())?;
        let body = if body.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&body)?
        };
        Ok((status, body))
    }

    /// One request on a connection of its own (`headers` each ending in CRLF):
    /// the status and the body.
    fn exchange(
        &self,
        method: &str,
        path: &str,
        headers: &str,
        body: &str,
    ) -> anyhow::Result<(u16, String)> {
        let address = self.base_url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address)?;
        write!(
            stream,
            "{method} {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )?;
        let mut response = String::new();
        stream.read_to_string(&mut response)?;
        let status = response.get(9..12).unwrap_or("0").parse()?;
        let body = response
            .split_once("\r\n\r\n")
            .map_or("", |(_, body)| body)
            .to_owned();
        Ok((status, body))
    }
}

/// Start `switchback serve` in `work_dir` (its database there) on `bind`, and
/// wait until it says where it listens: the process and its base URL.
fn spawn(
    work_dir: &std::path::Path,
    bind: &str,
    admin_token: Option<&str>,
) -> anyhow::Result<(ServeProcess, String)> {
    let database = format!("sqlite://{}", work_dir.join("switchback.db").display());
    let mut command = ServeProcess::command(binary_path()?, work_dir)
        .bind(bind)
        .args(&["--database", &database])
        .env("RUST_LOG", "info")
        .echo();
    if let Some(token) = admin_token {
        command = command.env("SWITCHBACK_ADMIN_TOKEN", token);
    }
    let server = command.start().map_err(|error| anyhow!(error))?;
    let base_url = server.base_url();
    Ok((server, base_url))
}

/// The `switchback` binary of the same build as this test: tests run from
/// `target/<profile>/deps/`, the binary is in `target/<profile>/`.
/// `SWITCHBACK_BIN` overrides.
fn binary_path() -> anyhow::Result<PathBuf> {
    if let Some(path) = std::env::var_os("SWITCHBACK_BIN") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe()?;
    let profile_dir = exe
        .parent()
        .and_then(|deps| deps.parent())
        .ok_or_else(|| anyhow!("unexpected test binary path {}", exe.display()))?;
    let binary = profile_dir.join("switchback");
    if !binary.exists() {
        bail!(
            "{} is missing: build it with the same profile as the tests (scripts/test does)",
            binary.display()
        );
    }
    Ok(binary)
}
