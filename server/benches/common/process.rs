//! `switchback serve` as a child process of a bench (the test kit's, with its
//! complaints counted), and what `/proc` says of a process: its peak resident
//! set and the CPU time it has used.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::Duration;

use testkit::{ServeChild, ServeProcess, listening_in};

/// Errors printed in full; the rest are only counted.
const ERROR_SAMPLES: usize = 10;

/// Every error of a run: a count, and the first few in words.
#[derive(Default)]
pub struct Errors {
    count: AtomicU64,
    /// The first few, in words.
    pub samples: Mutex<Vec<String>>,
}

impl Errors {
    pub fn record(&self, what: String) {
        self.count.fetch_add(1, Ordering::Relaxed);
        let mut samples = self.samples.lock().unwrap();
        if samples.len() < ERROR_SAMPLES {
            samples.push(what);
        }
    }

    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// `switchback serve` as a child process (the test kit's), killed if dropped.
pub struct Serve {
    /// The process.
    pub child: ServeChild,
    /// Where it listens: `http://127.0.0.1:PORT`.
    pub base: String,
    /// Lines it logged at WARN or ERROR: a count and the first few.
    pub complaints: Arc<Errors>,
    /// The lines it logged that a bench asked to see (`watch`), in order.
    pub watched: Arc<Mutex<Vec<String>>>,
}

impl Serve {
    /// Serve on `database`, in `dir`, on a free loopback port, with `env` set;
    /// lines containing `watch` are kept in [`Serve::watched`].
    pub fn start(dir: &Path, database: &str, env: &[(&str, &str)], watch: &str) -> Serve {
        let (child, lines) = ServeProcess::command(env!("CARGO_BIN_EXE_switchback"), dir)
            .args(&["--database", database])
            .envs(env)
            .spawn()
            .unwrap();
        let complaints = Arc::new(Errors::default());
        let watched = Arc::new(Mutex::new(Vec::new()));
        let (address_tx, address_rx) = mpsc::channel();
        let (tally, seen, watch) = (complaints.clone(), watched.clone(), watch.to_owned());
        // Every line, to the end of the run.
        std::thread::spawn(move || {
            let mut address_tx = Some(address_tx);
            for line in lines {
                if let Some(address) = listening_in(&line)
                    && let Some(address_tx) = address_tx.take()
                {
                    let _ = address_tx.send(address);
                }
                if line.contains(" WARN ") || line.contains(" ERROR ") {
                    tally.record(line.clone());
                }
                if !watch.is_empty() && line.contains(&watch) {
                    seen.lock().unwrap().push(line);
                }
            }
        });
        // Long enough for a start on 100,000 routes in a slow database.
        let address = address_rx
            .recv_timeout(Duration::from_secs(600))
            .expect("serve logs the address it listens on");
        Serve {
            child,
            base: format!("http://{address}"),
            complaints,
            watched,
        }
    }

    /// Its process id, as `/proc` names it.
    pub fn pid(&self) -> String {
        self.child.id().to_string()
    }

    /// SIGTERM, then wait: whether it stopped cleanly.
    pub fn stop(&mut self) -> Result<(), String> {
        let status = self.child.signal("-TERM");
        if status.success() {
            Ok(())
        } else {
            Err(format!("serve exited with {status} on SIGTERM"))
        }
    }
}

/// A `/proc/PID/status` figure in MB (`VmHWM:` is the peak resident set).
pub fn status_mb(pid: &str, field: &str) -> f64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| {
            rest.trim()
                .trim_end_matches("kB")
                .trim()
                .parse::<f64>()
                .ok()
        })
        .map_or(0.0, |kb| kb / 1024.0)
}

/// The kernel's clock ticks a second, in which `/proc` counts CPU time.
pub fn ticks_per_second() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8(output.stdout).ok())
        .and_then(|text| text.trim().parse::<f64>().ok())
        .unwrap_or(100.0)
}

/// A process's CPU time so far (user + system), in seconds.
pub fn cpu_seconds(pid: &str, ticks_per_second: f64) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // After the command name in parentheses: state is field 3, utime 14, stime 15.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or("", |(_, rest)| rest)
        .split_whitespace()
        .collect();
    let ticks = |index: usize| {
        fields
            .get(index)
            .and_then(|value| value.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / ticks_per_second
}
