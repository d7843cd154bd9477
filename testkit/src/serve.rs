//! `switchback serve` as a child process: the one launcher of the tests, the
//! browser tests and the benches. Its log and its standard error are read to
//! the end on threads of their own (so a chatty log never blocks the server on
//! a full pipe) and handed over line by line; the address comes from its "listening on" line, so it binds a
//! free port (`127.0.0.1:0`) unless told otherwise. Killed when dropped.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How to start one: build it with [`ServeProcess::command`].
#[derive(Debug, Clone)]
pub struct ServeCommand {
    binary: PathBuf,
    dir: PathBuf,
    bind: String,
    args: Vec<String>,
    env: Vec<(String, String)>,
    patience: Duration,
    echo: bool,
}

impl ServeCommand {
    /// Bind this address rather than a free loopback port (a restart on the
    /// address it had).
    #[must_use]
    pub fn bind(mut self, address: &str) -> Self {
        address.clone_into(&mut self.bind);
        self
    }

    /// More arguments after `serve --bind ADDRESS`.
    #[must_use]
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|arg| (*arg).to_owned()));
        self
    }

    /// An environment variable of its own.
    #[must_use]
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_owned(), value.to_owned()));
        self
    }

    /// These environment variables of its own.
    #[must_use]
    pub fn envs(mut self, env: &[(&str, &str)]) -> Self {
        for (name, value) in env {
            self = self.env(name, value);
        }
        self
    }

    /// How long it may take to say where it listens (default 30 s; a start on
    /// a large database reconciles first).
    #[must_use]
    pub fn patience(mut self, patience: Duration) -> Self {
        self.patience = patience;
        self
    }

    /// Print each line it logs to the test's stderr too, as `[switchback] LINE`
    /// (shown with a failing test).
    #[must_use]
    pub fn echo(mut self) -> Self {
        self.echo = true;
        self
    }

    /// Start it without waiting for it to listen: the child, and the lines it
    /// logs as they come.
    ///
    /// # Errors
    /// When the binary cannot be started.
    pub fn spawn(&self) -> std::io::Result<(ServeChild, mpsc::Receiver<String>)> {
        let mut command = Command::new(&self.binary);
        command
            .args(["serve", "--bind", &self.bind])
            .args(&self.args)
            .env("NO_COLOR", "1")
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (name, value) in &self.env {
            command.env(name, value);
        }
        let mut child = command.spawn()?;
        let piped = || std::io::Error::other("stdout and stderr are piped");
        let stdout = child.stdout.take().ok_or_else(piped)?;
        let stderr = child.stderr.take().ok_or_else(piped)?;
        let (lines_tx, lines_rx) = mpsc::channel();
        read_lines(stdout, lines_tx.clone(), self.echo);
        read_lines(stderr, lines_tx, self.echo);
        Ok((ServeChild(child), lines_rx))
    }

    /// Start it and wait until it says where it listens.
    ///
    /// # Errors
    /// When it cannot be started, or ends or stays silent past its patience
    /// before it listens (it is killed then).
    pub fn start(&self) -> Result<ServeProcess, String> {
        let (mut child, lines) = self
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", self.binary.display()))?;
        let mut said = Vec::new();
        let deadline = std::time::Instant::now() + self.patience;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(address) = listening_in(&line) {
                        return Ok(ServeProcess {
                            child,
                            address,
                            lines,
                        });
                    }
                    said.push(line);
                }
                Err(error) => {
                    let _ = child.0.kill();
                    let status = child.0.wait().ok();
                    let why = match error {
                        mpsc::RecvTimeoutError::Disconnected => {
                            "ended before it listened".to_owned()
                        }
                        mpsc::RecvTimeoutError::Timeout => {
                            format!("did not say where it listens within {:?}", self.patience)
                        }
                    };
                    return Err(format!(
                        "switchback serve {why} (exit: {status:?}); it said: {said:#?}"
                    ));
                }
            }
        }
    }
}

/// A `switchback serve` process, killed when dropped.
#[derive(Debug)]
pub struct ServeChild(Child);

impl ServeChild {
    /// Its process id.
    pub fn id(&self) -> u32 {
        self.0.id()
    }

    /// Send it `signal` (`-KILL`, `-TERM`) and wait for it to end: how it ended.
    ///
    /// # Panics
    /// When `kill` cannot be run or refuses (a broken test machine).
    pub fn signal(&mut self, signal: &str) -> ExitStatus {
        let sent = Command::new("kill")
            .args([signal, &self.0.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(sent.success(), "kill {signal}: {sent}");
        self.0.wait().expect("the child is ours to wait for")
    }
}

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A running `switchback serve`, killed when dropped.
#[derive(Debug)]
pub struct ServeProcess {
    child: ServeChild,
    address: String,
    lines: mpsc::Receiver<String>,
}

impl ServeProcess {
    /// How to start `binary` (a test's `env!("CARGO_BIN_EXE_switchback")`) in
    /// `dir`, on a free loopback port.
    pub fn command(binary: impl Into<PathBuf>, dir: &Path) -> ServeCommand {
        ServeCommand {
            binary: binary.into(),
            dir: dir.to_owned(),
            bind: "127.0.0.1:0".to_owned(),
            args: Vec::new(),
            env: Vec::new(),
            patience: Duration::from_secs(30),
            echo: false,
        }
    }

    /// Where it listens: `127.0.0.1:PORT`.
    pub fn address(&self) -> &str {
        &self.address
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The lines it logged since it listened, as they come.
    pub fn lines(&self) -> &mpsc::Receiver<String> {
        &self.lines
    }

    /// Send it `signal` (`-KILL`, `-TERM`) and wait for it to end: how it ended.
    ///
    /// # Panics
    /// When `kill` cannot be run or refuses (a broken test machine).
    pub fn signal(&mut self, signal: &str) -> ExitStatus {
        self.child.signal(signal)
    }
}

/// Every line of `output`, to its end, sent as it comes (and printed, if
/// `echo`), on a thread of its own.
fn read_lines(
    output: impl std::io::Read + Send + 'static,
    lines: mpsc::Sender<String>,
    echo: bool,
) {
    std::thread::spawn(move || {
        // By bytes: a line that is not UTF-8 is shown, not the end of the reading.
        for line in BufReader::new(output).split(b'\n').map_while(Result::ok) {
            let line = String::from_utf8_lossy(&line).into_owned();
            if echo {
                eprintln!("[switchback] {line}");
            }
            // The test may have stopped listening; the output is still read.
            let _ = lines.send(line);
        }
    });
}

/// The address in a server's "listening on http://ADDRESS" line (whatever
/// follows it on the line).
pub fn listening_in(line: &str) -> Option<String> {
    let after = line.split("listening on http://").nth(1)?;
    after.split_whitespace().next().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_address_is_read_from_the_listening_line() {
        let line = "2026-12-05T10:00:00Z  INFO switchback: listening on http://127.0.0.1:41234 (replica a)";
        assert_eq!(listening_in(line).as_deref(), Some("127.0.0.1:41234"));
        assert_eq!(listening_in("starting"), None);
    }

    #[test]
    fn a_process_that_never_listens_is_an_error_saying_what_it_said() {
        let dir = std::env::temp_dir();
        // `echo` prints its arguments and ends: never a listening line.
        let error = ServeProcess::command("echo", &dir)
            .patience(Duration::from_secs(5))
            .start()
            .unwrap_err();
        assert!(error.contains("ended before it listened"), "{error}");
        assert!(error.contains("serve --bind 127.0.0.1:0"), "{error}");
    }
}
