//! Secret hygiene, end to end: with a provider key set and a provider that echoes
//! the `authorization` and `x-api-key` headers back inside its error bodies, its
//! response headers, its stream events and its answers, a whole run (errors,
//! retries, holds, skips, waits, a second turn, completions, a person's actions)
//! leaves the key in no database row (nor the raw bytes of the database, its WAL
//! or its shared memory file), no log line (at `RUST_LOG=debug`), no page, no API
//! or server-function answer, no live event and no metric.
//!
//! Two keys: one of Anthropic's shape, and one of no recognisable shape (40
//! random letters and digits), so the test passes only if the exact value the
//! adapter sent is scrubbed, not just what looks like a key.

mod echo;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use echo::{EchoProvider, Format, Step};
use providers::reqwest;
use serde_json::{Value, json};

/// The variable holding the Anthropic provider's key.
const ANTHROPIC_KEY_ENV: &str = "SWITCHBACK_SECRETS_ANTHROPIC_API_KEY";
/// The variable holding the OpenAI provider's key.
const PLAIN_KEY_ENV: &str = "SWITCHBACK_SECRETS_PLAIN_API_KEY";

/// How long any one wait for the server may take before the test fails.
const PATIENCE: Duration = Duration::from_secs(60);

/// The two keys of the run, fresh for each run.
struct Keys {
    /// `sk-ant-api03-…AA`, 108 characters, as Anthropic issues them.
    anthropic: String,
    /// 40 random letters and digits: no pattern of a key's shape catches it.
    plain: String,
}

impl Keys {
    /// Two keys drawn for this run.
    fn new() -> Self {
        const KEY_CHARACTERS: &[u8] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
        const ALPHANUMERIC: &[u8] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
        let anthropic = format!("sk-ant-api03-{}AA", random_text(93, KEY_CHARACTERS));
        // Drawn again in the (vanishingly unlikely) case a pattern would catch it.
        let plain = std::iter::repeat_with(|| random_text(40, ALPHANUMERIC))
            .find(|plain| {
                let sentence = format!("credential {plain} refused");
                catalogue::redact_secrets(&sentence) == sentence
                    && catalogue::safe_cause(&sentence) == sentence
            })
            .unwrap();
        Self { anthropic, plain }
    }

    /// What must appear nowhere: each key, and pieces of it long enough to be
    /// worth something (its last 16 characters, and 16 from its middle).
    fn needles(&self) -> Vec<Needle> {
        let mut needles = Vec::new();
        for (name, key) in [
            ("the Anthropic key", &self.anthropic),
            ("the plain key", &self.plain),
        ] {
            let middle = key.len() / 2 - 8;
            needles.push(Needle {
                what: name.to_owned(),
                text: key.clone(),
            });
            needles.push(Needle {
                what: format!("{name}'s last 16 characters"),
                text: key[key.len() - 16..].to_owned(),
            });
            needles.push(Needle {
                what: format!("16 characters from the middle of {name}"),
                text: key[middle..middle + 16].to_owned(),
            });
        }
        needles
    }
}

/// `length` characters drawn from `alphabet` (std's randomly seeded hasher as the
/// source, so the test needs no random crate).
fn random_text(length: usize, alphabet: &[u8]) -> String {
    use std::hash::{BuildHasher, Hasher};
    let state = std::collections::hash_map::RandomState::new();
    (0..length)
        .map(|index| {
            let mut hasher = state.build_hasher();
            hasher.write_usize(index);
            alphabet[(hasher.finish() % alphabet.len() as u64) as usize] as char
        })
        .collect()
}

/// A piece of text that must not be found.
struct Needle {
    what: String,
    text: String,
}

/// What the search of everything the run left found.
#[derive(Default)]
struct Findings {
    /// Where a needle was found, with a little context.
    leaks: Vec<String>,
    /// How many places were searched, by surface.
    places: std::collections::BTreeMap<&'static str, usize>,
    /// How many places held a needle, by surface.
    leaking: std::collections::BTreeMap<&'static str, usize>,
}

impl Findings {
    /// Searches `bytes`, one place of `surface` (database rows, logs, pages, ...).
    fn search(&mut self, needles: &[Needle], surface: &'static str, place: &str, bytes: &[u8]) {
        *self.places.entry(surface).or_default() += 1;
        let text = String::from_utf8_lossy(bytes);
        let mut found = false;
        for needle in needles {
            if let Some(at) = text.find(&needle.text) {
                found = true;
                let start = text.floor_char_boundary(at.saturating_sub(80));
                let end = text.ceil_char_boundary((at + needle.text.len() + 80).min(text.len()));
                self.leaks.push(format!(
                    "{} in {place}: …{}…",
                    needle.what,
                    &text[start..end]
                ));
            }
        }
        if found {
            *self.leaking.entry(surface).or_default() += 1;
        }
    }

    /// Fails with every surface that leaked, and the first leaks found.
    fn assert_none(&self) {
        let surfaces: Vec<String> = self
            .places
            .iter()
            .map(|(surface, places)| {
                let leaking = self.leaking.get(surface).copied().unwrap_or(0);
                format!("{surface}: {leaking} of {places} places")
            })
            .collect();
        assert!(
            self.leaks.is_empty(),
            "{} leaks; by surface:\n{}\nthe first of them:\n{}",
            self.leaks.len(),
            surfaces.join("\n"),
            self.leaks
                .iter()
                .take(30)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

/// Which surface an answer of the server belongs to, by its request.
fn surface_of(what: &str) -> &'static str {
    let path = what.split_whitespace().nth(1).unwrap_or_default();
    if path.starts_with("/api/") {
        "API answers"
    } else if path.starts_with("/fn/") {
        "server-function answers"
    } else if path == "/metrics" || path == "/healthz" {
        "metrics and health"
    } else {
        "pages"
    }
}

/// One answer the server gave, kept to be searched.
struct Exchange {
    what: String,
    head: String,
    body: Vec<u8>,
}

/// The test's HTTP client: every answer it receives is kept.
#[derive(Clone)]
struct Client {
    base: String,
    http: reqwest::Client,
    transcript: Arc<Mutex<Vec<Exchange>>>,
}

impl Client {
    fn new(address: &str) -> Self {
        Self {
            base: format!("http://{address}"),
            // No compression is asked for (reqwest is built without it here), so
            // every body is searched as the bytes it is.
            http: providers::http_client_builder().build().unwrap(),
            transcript: Arc::default(),
        }
    }

    async fn send(&self, what: String, request: reqwest::RequestBuilder) -> (u16, Vec<u8>) {
        let response = request.send().await.unwrap();
        let status = response.status().as_u16();
        assert!(
            response.headers().get("content-encoding").is_none(),
            "{what}: an encoded body could hide a key from the search"
        );
        let head = format!("{:?} {:?}", response.status(), response.headers());
        let body = response.bytes().await.unwrap().to_vec();
        self.transcript.lock().unwrap().push(Exchange {
            what,
            head,
            body: body.clone(),
        });
        (status, body)
    }

    /// A GET that must answer 200: its body.
    async fn page(&self, path: &str) -> String {
        let (status, body) = self
            .send(
                format!("GET {path}"),
                self.http.get(format!("{}{path}", self.base)),
            )
            .await;
        let body = String::from_utf8(body).unwrap();
        assert_eq!(status, 200, "GET {path}: {body}");
        body
    }

    /// A GET of JSON that must answer 200.
    async fn get(&self, path: &str) -> Value {
        serde_json::from_str(&self.page(path).await).unwrap()
    }

    /// A JSON POST: its status and answer.
    async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        let (status, answer) = self
            .send(
                format!("POST {path}"),
                self.http
                    .post(format!("{}{path}", self.base))
                    .header("content-type", "application/json")
                    .body(body.to_string()),
            )
            .await;
        (
            status,
            serde_json::from_slice(&answer).unwrap_or(Value::Null),
        )
    }

    /// A server function, called as the hydrated app calls it.
    async fn server_fn(&self, name: &str, content_type: &str, arguments: String) -> String {
        let (status, body) = self
            .send(
                format!("POST /fn/{name} {arguments}"),
                self.http
                    .post(format!("{}/fn/{name}", self.base))
                    .header("sec-fetch-site", "same-origin")
                    .header("content-type", content_type)
                    .body(arguments),
            )
            .await;
        let body = String::from_utf8(body).unwrap();
        assert_eq!(status, 200, "/fn/{name}: {body}");
        body
    }

    /// Polls a task until `done` holds (the engine acts at once; this only waits
    /// for it to be seen).
    async fn until(&self, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        let path = format!("/api/tasks/{id}");
        let done = &done;
        let path = &path;
        testkit::eventually_async(PATIENCE, || async move {
            let task = self.get(path).await;
            if done(&task) {
                Ok(task)
            } else {
                Err(format!("task {id} not yet {what}: {task}"))
            }
        })
        .await
    }
}

/// `switchback serve` with its whole output captured byte for byte (the key
/// must be in none of it, whatever it is), killed when dropped.
struct Server {
    address: String,
    child: std::process::Child,
    stdout: Arc<Mutex<Vec<u8>>>,
    stderr: Arc<Mutex<Vec<u8>>>,
    readers: Vec<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Starts `switchback serve` on a free loopback port and `database_url`, in
    /// `dir`, logging at debug, with both keys in its environment.
    fn start(dir: &Path, database_url: &str, keys: &Keys) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_switchback"))
            .args(["serve", "--bind", "127.0.0.1:0", "--database", database_url])
            .env("RUST_LOG", "debug")
            .env("NO_COLOR", "1")
            .env(ANTHROPIC_KEY_ENV, &keys.anthropic)
            .env(PLAIN_KEY_ENV, &keys.plain)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = Arc::<Mutex<Vec<u8>>>::default();
        let stderr = Arc::<Mutex<Vec<u8>>>::default();
        let readers = vec![
            capture(child.stdout.take().unwrap(), stdout.clone()),
            capture(child.stderr.take().unwrap(), stderr.clone()),
        ];
        let started = Instant::now();
        let address = loop {
            let printed = String::from_utf8_lossy(&stdout.lock().unwrap()).into_owned();
            if let Some(rest) = printed.split("listening on http://").nth(1)
                && let Some(address) = rest.split_whitespace().next()
            {
                break address.to_owned();
            }
            assert!(
                started.elapsed() < PATIENCE,
                "no listening line: {printed} {}",
                String::from_utf8_lossy(&stderr.lock().unwrap())
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        Self {
            address,
            child,
            stdout,
            stderr,
            readers,
        }
    }

    /// SIGTERM, a clean exit, and every byte it printed: (stdout, stderr).
    fn stop(mut self) -> (Vec<u8>, Vec<u8>) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "a clean exit on SIGTERM: {exit:?}");
        for reader in self.readers.drain(..) {
            reader.join().unwrap();
        }
        let stdout = std::mem::take(&mut *self.stdout.lock().unwrap());
        let stderr = std::mem::take(&mut *self.stderr.lock().unwrap());
        (stdout, stderr)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads `from` to its end into `into`, on a thread of its own.
fn capture(
    mut from: impl Read + Send + 'static,
    into: Arc<Mutex<Vec<u8>>>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut buffer = [0u8; 8192];
        loop {
            match from.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(read) => into.lock().unwrap().extend_from_slice(&buffer[..read]),
            }
        }
    })
}

/// What the test does at a stop of a task's route.
#[derive(Debug, Clone, Copy)]
enum Then {
    /// Send this action (`retry_now`, `skip_now`, `cancel_wait`, `stop`).
    Act(&'static str),
    /// Add a turn to the completed task.
    Turn,
    /// The route's end: check it.
    Done,
}

/// A state the route comes to rest in, and what the test does there.
#[derive(Debug, Clone, Copy)]
struct Stop {
    state: &'static str,
    then: Then,
}

/// At rest in `state`, the test does `then`.
const fn at(state: &'static str, then: Then) -> Stop {
    Stop { state, then }
}

/// One row of the run: a script, the profiles it runs on, where its route stops
/// and what it ends as.
struct Scenario {
    /// The prompt's first word.
    name: &'static str,
    /// The profiles it runs on, a task each.
    profiles: &'static [&'static str],
    /// The provider's answers, request by request, whichever candidate asks.
    steps: &'static [Step],
    /// Where the route comes to rest, in order, and what the test does there.
    stops: &'static [Stop],
    /// The route's cause at the end.
    cause: Option<&'static str>,
    /// Attempts (and so requests) at the end.
    attempts: usize,
    /// Turns at the end.
    turns: usize,
    /// The candidate the route ends on.
    last_candidate: u64,
}

/// Profiles whose retries come at once (100 ms, then doubling).
const QUICK: &[&str] = &["anthropic first", "openai first"];
/// A profile whose retry waits ten minutes, so only an action moves it on.
const PATIENT: &[&str] = &["patient"];

/// Every path the run takes; each row runs once on each of its profiles.
const SCENARIOS: &[Scenario] = &[
    // Transient errors, retried on the same candidate until it answers; then a
    // second turn on the candidate that answered.
    Scenario {
        name: "retried",
        profiles: QUICK,
        steps: &[
            Step::RateLimited,
            Step::Overloaded,
            Step::ServerError,
            Step::Reply,
        ],
        stops: &[at("completed", Then::Turn), at("completed", Then::Done)],
        cause: None,
        attempts: 5,
        turns: 2,
        last_candidate: 0,
    },
    // A hard error (the key refused): skip to the next candidate, which answers.
    Scenario {
        name: "skipped",
        profiles: QUICK,
        steps: &[Step::Unauthorized, Step::Reply],
        stops: &[at("completed", Then::Done)],
        cause: None,
        attempts: 2,
        turns: 1,
        last_candidate: 1,
    },
    // A proxy's HTML error page: transient, retried.
    Scenario {
        name: "proxied",
        profiles: QUICK,
        steps: &[Step::ProxyPage, Step::Reply],
        stops: &[at("completed", Then::Done)],
        cause: None,
        attempts: 2,
        turns: 1,
        last_candidate: 0,
    },
    // A stream broken after output: held (unsafe effect); skipped by a person to
    // the next candidate, broken again, held, retried now, answered.
    Scenario {
        name: "broken",
        profiles: QUICK,
        steps: &[Step::BrokenStream, Step::BrokenStream, Step::Reply],
        stops: &[
            at("held", Then::Act("skip_now")),
            at("held", Then::Act("retry_now")),
            at("completed", Then::Done),
        ],
        cause: None,
        attempts: 3,
        turns: 1,
        last_candidate: 1,
    },
    // Retries exhausted, skip, a hard error on the last candidate: stopped.
    Scenario {
        name: "exhausted",
        profiles: QUICK,
        steps: &[
            Step::ServerError,
            Step::ServerError,
            Step::ServerError,
            Step::ServerError,
            Step::Unauthorized,
        ],
        stops: &[at("stopped", Then::Done)],
        cause: Some("exhausted"),
        attempts: 5,
        turns: 1,
        last_candidate: 1,
    },
    // Held after a broken stream, and stopped by a person.
    Scenario {
        name: "stopped",
        profiles: QUICK,
        steps: &[Step::BrokenStream],
        stops: &[at("held", Then::Act("stop")), at("stopped", Then::Done)],
        cause: Some("stopped_by_user"),
        attempts: 1,
        turns: 1,
        last_candidate: 0,
    },
    // A pending retry, fired early by a person.
    Scenario {
        name: "waited",
        profiles: PATIENT,
        steps: &[Step::ServerError, Step::Reply],
        stops: &[
            at("retry_wait", Then::Act("retry_now")),
            at("completed", Then::Done),
        ],
        cause: None,
        attempts: 2,
        turns: 1,
        last_candidate: 0,
    },
    // A pending retry cancelled (held), then skipped to the next candidate.
    Scenario {
        name: "cancelled",
        profiles: PATIENT,
        steps: &[Step::Overloaded, Step::Reply],
        stops: &[
            at("retry_wait", Then::Act("cancel_wait")),
            at("held", Then::Act("skip_now")),
            at("completed", Then::Done),
        ],
        cause: None,
        attempts: 2,
        turns: 1,
        last_candidate: 1,
    },
];

/// A version-2 policy: transient errors retried (from `initial_interval_ms`, three
/// times) then skipped; hard errors skipped at once.
fn policy(initial_interval_ms: u64) -> Value {
    json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": initial_interval_ms},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 100},
                 "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "skip"}})
}

/// One task of the run.
struct Run {
    scenario: &'static Scenario,
    prompt: String,
    id: String,
    /// The next stop to reach.
    next: usize,
    /// The generation the last action or turn left the route at.
    generation: i64,
}

impl Run {
    /// Waits for the route to rest at its next stop, at or after the generation
    /// the test's last action left it at (so an earlier rest in the same state does
    /// not count).
    async fn reach_next_stop(&self, client: &Client) -> Value {
        let stop = self.scenario.stops[self.next];
        let after = self.generation;
        client
            .until(&self.id, stop.state, |task| {
                task["route"]["state"] == stop.state
                    && task["route"]["generation"].as_i64().unwrap() >= after
            })
            .await
    }

    /// Does what the stop asks and waits for the next stop (its task); `None` at
    /// the end, once the end is checked.
    async fn act_and_move_on(&mut self, client: &Client, task: Value) -> Option<Value> {
        let context = format!("{} ({})", self.prompt, self.id);
        let stop = self.scenario.stops[self.next];
        let generation = task["route"]["generation"].as_i64().unwrap();
        let answer = match stop.then {
            Then::Done => {
                self.check_end(&task);
                return None;
            }
            Then::Act(action) => {
                client
                    .post(
                        &format!("/api/tasks/{}/actions", self.id),
                        &json!({"action": action, "generation": generation}),
                    )
                    .await
            }
            Then::Turn => {
                client
                    .post(
                        &format!("/api/tasks/{}/turns", self.id),
                        &json!({"prompt": "Say it once more."}),
                    )
                    .await
            }
        };
        assert_eq!(answer.0, 200, "{context}: {stop:?}: {}", answer.1);
        self.generation = answer.1["route"]["generation"].as_i64().unwrap();
        self.next += 1;
        Some(self.reach_next_stop(client).await)
    }

    fn check_end(&self, task: &Value) {
        let context = format!("{} ({}): {task}", self.prompt, self.id);
        let route = &task["route"];
        assert_eq!(
            route["cause"].as_str(),
            self.scenario.cause,
            "cause: {context}"
        );
        assert_eq!(
            task["attempts"].as_array().unwrap().len(),
            self.scenario.attempts,
            "attempts: {context}"
        );
        assert_eq!(
            task["turns"].as_array().unwrap().len(),
            self.scenario.turns,
            "turns: {context}"
        );
        assert_eq!(
            route["candidate_index"], self.scenario.last_candidate,
            "candidate: {context}"
        );
    }
}

/// Reads every surface once: the pages, the API, the server functions, the
/// metrics and the health check (each answer lands in the client's transcript).
async fn sweep(client: &Client, runs: &[Run], profiles: &[String], providers: &[String]) {
    for path in [
        "/",
        "/tasks",
        "/tasks?state=held",
        "/tasks?state=completed",
        "/tasks?state=stopped",
        "/providers",
        "/client-keys",
        "/profiles",
        "/profiles/new",
        "/metrics",
        "/healthz",
        "/api/providers",
        "/api/profiles",
        "/api/openapi.json",
    ] {
        client.page(path).await;
    }
    for state in [
        "queued",
        "running",
        "retry_wait",
        "waiting_for_reset",
        "retrying",
        "held",
        "completed",
        "stopped",
    ] {
        client.get(&format!("/api/tasks?state={state}")).await;
    }
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            Some(cursor) => format!("/api/tasks?limit=5&cursor={cursor}"),
            None => "/api/tasks?limit=5".to_owned(),
        };
        let page = client.get(&path).await;
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_owned()),
            None => break,
        }
    }
    for run in runs {
        client.page(&format!("/tasks/{}", run.id)).await;
        client.get(&format!("/api/tasks/{}", run.id)).await;
        client
            .server_fn(
                "load_task",
                "application/x-www-form-urlencoded",
                format!("id={}", run.id),
            )
            .await;
    }
    for profile in profiles {
        client.page(&format!("/profiles/{profile}")).await;
        client.get(&format!("/api/profiles/{profile}")).await;
        client
            .server_fn(
                "load_profile_editor",
                "application/x-www-form-urlencoded",
                format!("id={profile}"),
            )
            .await;
    }
    for provider in providers {
        client.get(&format!("/api/providers/{provider}")).await;
    }
    client
        .server_fn("list_tasks", "application/json", r#"{"state":null}"#.into())
        .await;
    for name in ["list_providers", "list_profiles"] {
        client
            .server_fn(name, "application/x-www-form-urlencoded", String::new())
            .await;
    }
}

/// Every text and blob of every row of every table of the SQLite database.
fn search_rows(findings: &mut Findings, needles: &[Needle], database: &Path) -> Vec<Value> {
    let connection =
        rusqlite::Connection::open_with_flags(database, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let tables: Vec<String> = connection
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut rows_read = 0;
    for table in &tables {
        let mut statement = connection
            .prepare(&format!("SELECT * FROM \"{table}\""))
            .unwrap();
        let columns: Vec<String> = statement
            .column_names()
            .iter()
            .map(|name| name.to_string())
            .collect();
        let mut rows = statement.query([]).unwrap();
        let mut index = 0;
        while let Some(row) = rows.next().unwrap() {
            for (column, name) in columns.iter().enumerate() {
                if let rusqlite::types::ValueRef::Text(bytes)
                | rusqlite::types::ValueRef::Blob(bytes) = row.get_ref(column).unwrap()
                {
                    findings.search(
                        needles,
                        "database rows",
                        &format!("database {table}[{index}].{name}"),
                        bytes,
                    );
                }
            }
            index += 1;
        }
        rows_read += index;
    }
    assert!(rows_read > 100, "only {rows_read} rows in {tables:?}");
    // What the scrub left behind, for the checks that the echo really came back.
    let evidence: Vec<Value> = connection
        .prepare("SELECT evidence_json FROM attempts WHERE evidence_json IS NOT NULL")
        .unwrap()
        .query_map([], |row| row.get::<_, String>(0))
        .unwrap()
        .map(|text| serde_json::from_str(&text.unwrap()).unwrap())
        .collect();
    evidence
}

/// The raw bytes of the database file and its companions, whichever exist.
fn search_files(findings: &mut Findings, needles: &[Needle], database: &Path, when: &str) {
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let path = format!("{}{suffix}", database.display());
        if let Ok(bytes) = std::fs::read(&path) {
            findings.search(
                needles,
                "database files",
                &format!("the bytes of {path} ({when})"),
                &bytes,
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_run_leaves_the_key_nowhere() {
    let keys = Keys::new();
    let needles = keys.needles();
    // The plain key is what no shape-based redaction can catch; the Anthropic one
    // is what it can.
    assert_ne!(
        catalogue::redact_secrets(&keys.anthropic),
        keys.anthropic,
        "the Anthropic key has a known shape"
    );

    let work_dir = tempfile::tempdir().unwrap();
    let database = work_dir.path().join("switchback.db");
    let database_url = format!("sqlite://{}", database.display());
    let provider = EchoProvider::start();
    let server = Server::start(work_dir.path(), &database_url, &keys);
    let client = Client::new(&server.address);

    // One page watching the live events for the whole run.
    let events = client
        .http
        .get(format!("{}/api/events", client.base))
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(events.status(), 200);
    let live = Arc::<Mutex<Vec<u8>>>::default();
    let watcher = tokio::spawn({
        let live = live.clone();
        async move {
            let mut events = events;
            while let Ok(Some(chunk)) = events.chunk().await {
                live.lock().unwrap().extend_from_slice(&chunk);
            }
        }
    });

    let mut providers = Vec::new();
    for (name, kind, env) in [
        ("Echoing Anthropic", "anthropic", ANTHROPIC_KEY_ENV),
        ("Echoing OpenAI", "openai", PLAIN_KEY_ENV),
    ] {
        let (status, created) = client
            .post(
                "/api/providers",
                &json!({"name": name, "kind": kind, "base_url": provider.base_url(),
                        "api_key_env": env, "timeouts": {"connect_ms": 10_000, "first_byte_ms": 10_000, "idle_ms": 10_000}}),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        assert_eq!(created["api_key_env_set"], true, "{created}");
        providers.push(created["id"].as_str().unwrap().to_owned());
    }
    let (anthropic, openai) = (&providers[0], &providers[1]);
    let mut profiles = std::collections::HashMap::new();
    for (name, order, initial_interval_ms) in [
        ("anthropic first", [anthropic, openai], 100),
        ("openai first", [openai, anthropic], 100),
        ("patient", [anthropic, openai], 600_000),
    ] {
        let candidates: Vec<Value> = order
            .iter()
            .map(|provider_id| {
                json!({"provider_id": provider_id, "model": "echo-1", "enabled": true,
                       "max_tokens": 256, "policy": policy(initial_interval_ms)})
            })
            .collect();
        let (status, created) = client
            .post(
                "/api/profiles",
                &json!({"name": name, "candidates": candidates}),
            )
            .await;
        assert_eq!(status, 201, "{created}");
        profiles.insert(name, created["id"].as_str().unwrap().to_owned());
    }

    let mut runs = Vec::new();
    for scenario in SCENARIOS {
        for profile in scenario.profiles {
            let prompt = format!("{} on {profile}", scenario.name);
            provider.script(&prompt, scenario.steps);
            let (status, task) = client
                .post(
                    "/api/tasks",
                    &json!({"profile_id": profiles[profile], "prompt": prompt}),
                )
                .await;
            assert_eq!(status, 201, "{task}");
            runs.push(Run {
                scenario,
                prompt,
                id: task["id"].as_str().unwrap().to_owned(),
                next: 0,
                generation: 0,
            });
        }
    }
    let profile_ids: Vec<String> = profiles.values().cloned().collect();

    // Every route at its first rest (many held or waiting, with their causes on
    // show): read everything; then on to the end, reading everything again.
    let mut at_rest = Vec::new();
    for run in &runs {
        at_rest.push(run.reach_next_stop(&client).await);
    }
    sweep(&client, &runs, &profile_ids, &providers).await;
    // The WAL holds every page written since its last checkpoint, including any
    // row version later rewritten: read it while it is there.
    let mut findings = Findings::default();
    search_files(&mut findings, &needles, &database, "while serving");
    let mut finals = Vec::new();
    for (run, task) in runs.iter_mut().zip(at_rest) {
        let mut task = task;
        while let Some(next) = run.act_and_move_on(&client, task.clone()).await {
            task = next;
        }
        finals.push(task);
    }
    sweep(&client, &runs, &profile_ids, &providers).await;

    // Each request carried its provider's key (so there was a key to leak), and
    // none was sent more often than its task has attempts.
    let received = provider.received();
    for request in &received {
        match request.format {
            Format::Anthropic => {
                assert_eq!(request.api_key.as_ref(), Some(&keys.anthropic));
                assert_eq!(request.authorization, None);
            }
            Format::OpenAi => {
                assert_eq!(
                    request.authorization,
                    Some(format!("Bearer {}", keys.plain))
                );
                assert_eq!(request.api_key, None);
            }
        }
    }
    for run in &runs {
        let sent = received
            .iter()
            .filter(|request| request.prompt == run.prompt)
            .count();
        assert_eq!(sent, run.scenario.attempts, "requests for {}", run.prompt);
    }

    let (stdout, stderr) = server.stop();
    tokio::time::timeout(PATIENCE, watcher)
        .await
        .expect("the event stream ends with the server")
        .unwrap();

    // The run was the verbose one, and the page saw it live.
    let log = String::from_utf8_lossy(&stdout);
    assert!(log.contains(" DEBUG "), "the log is at debug level");
    assert!(log.contains("attempt failed"), "{log}");
    let live = std::mem::take(&mut *live.lock().unwrap());
    let live_text = String::from_utf8_lossy(&live);
    for run in &runs {
        assert!(
            live_text.contains(&run.id),
            "no live event for {}",
            run.prompt
        );
    }

    // Search everything.
    for (line_number, line) in stdout.split(|byte| *byte == b'\n').enumerate() {
        findings.search(
            &needles,
            "log lines",
            &format!("standard output line {}", line_number + 1),
            line,
        );
    }
    for (line_number, line) in stderr.split(|byte| *byte == b'\n').enumerate() {
        findings.search(
            &needles,
            "log lines",
            &format!("standard error line {}", line_number + 1),
            line,
        );
    }
    findings.search(&needles, "live events", "the live event stream", &live);
    for exchange in client.transcript.lock().unwrap().iter() {
        let surface = surface_of(&exchange.what);
        findings.search(
            &needles,
            surface,
            &format!("the head of the answer to {}", exchange.what),
            exchange.head.as_bytes(),
        );
        findings.search(
            &needles,
            surface,
            &format!("the answer to {}", exchange.what),
            &exchange.body,
        );
    }
    let evidence = search_rows(&mut findings, &needles, &database);
    search_files(&mut findings, &needles, &database, "after the stop");
    findings.assert_none();

    // Not vacuous: every failed attempt kept its evidence and every answer its
    // text, each with the echo in it, scrubbed.
    let failed = finals
        .iter()
        .flat_map(|task| task["attempts"].as_array().unwrap())
        .filter(|attempt| attempt["outcome"] == "failed")
        .count();
    assert_eq!(
        evidence.len(),
        failed,
        "one evidence row per failed attempt"
    );
    for kept in &evidence {
        assert!(
            kept.to_string().contains("[redacted]"),
            "the echo is missing from {kept}"
        );
    }
    let answers: Vec<&str> = finals
        .iter()
        .flat_map(|task| task["turns"].as_array().unwrap())
        .filter_map(|turn| turn["answer"].as_str())
        .collect();
    let completed_turns: usize = runs
        .iter()
        .filter(|run| run.scenario.cause.is_none())
        .map(|run| run.scenario.turns)
        .sum();
    assert_eq!(answers.len(), completed_turns, "{answers:?}");
    for answer in answers {
        assert!(answer.starts_with("Here is what you sent: "), "{answer}");
        assert!(answer.contains("[redacted]"), "{answer}");
    }
    eprintln!(
        "{} requests echoed a key; no key in {:?}",
        received.len(),
        findings.places
    );
}
