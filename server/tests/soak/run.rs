//! The soak's driver: one `switchback serve` on the run's database, tasks
//! created from several threads while the server is killed with SIGKILL at
//! moments a seeded generator picks and started again (now and then killed
//! again while it starts, in the middle of its restart pass), then, at rest, one
//! more kill and start, the checks through the API of that last server, a clean
//! stop, and the database's checks.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock, mpsc};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::common;
use crate::soak::integrity::Database;
use crate::soak::provider;
use crate::soak::script::{self, Ending};

/// How many threads create tasks at once.
const CREATORS: usize = 4;

/// How long the run may take to come to rest once every task is created.
const REST_WITHIN: Duration = Duration::from_secs(120);

/// How long one task's creation may take, through every kill that cuts it.
const CREATION_WITHIN: Duration = Duration::from_secs(60);

/// The run's size and seed: the short form's by default, the environment's
/// (`SWITCHBACK_SOAK_TASKS`, `SWITCHBACK_SOAK_KILLS`, `SWITCHBACK_SOAK_SEED`)
/// when given.
#[derive(Debug, Clone, Copy)]
pub struct Settings {
    /// Tasks created.
    pub tasks: usize,
    /// Kills while they run (one more comes at rest).
    pub kills: usize,
    /// What the kill schedule is drawn from.
    pub seed: u64,
}

impl Settings {
    /// `tasks` and `kills` unless the environment says otherwise; a seed from
    /// the environment or the clock.
    pub fn from_env(tasks: usize, kills: usize) -> Self {
        let number = |name: &str| {
            std::env::var(name).ok().map(|value| {
                value
                    .trim()
                    .parse::<u64>()
                    .unwrap_or_else(|_| panic!("{name} must be a whole number, not {value:?}"))
            })
        };
        let seed = number("SWITCHBACK_SOAK_SEED").unwrap_or_else(|| {
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos();
            (nanos as u64) ^ u64::from(std::process::id()).rotate_left(32)
        });
        Self {
            tasks: number("SWITCHBACK_SOAK_TASKS").map_or(tasks, |tasks| tasks as usize),
            kills: number("SWITCHBACK_SOAK_KILLS").map_or(kills, |kills| kills as usize),
            seed,
        }
    }
}

/// SplitMix64: a few lines, and every seed gives a good stream.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut mixed = self.0;
        mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        mixed ^ (mixed >> 31)
    }

    /// A number in `0..bound`.
    fn below(&mut self, bound: u64) -> u64 {
        self.next() % bound.max(1)
    }
}

/// One kill of the schedule.
#[derive(Debug, Clone, Copy)]
struct Kill {
    /// It comes once this many tasks are created ...
    after_created: usize,
    /// ... and this much later.
    delay: Duration,
    /// The server started after it is killed again this soon, before or during
    /// its restart pass, and then started once more.
    again_while_starting: Option<Duration>,
}

/// The kills, in order: at random points of the creations, and the last once
/// every task is created (while retries still wait).
fn schedule(settings: Settings) -> Vec<Kill> {
    let mut random = SplitMix64(settings.seed);
    let tasks = settings.tasks as u64;
    let mut kills: Vec<Kill> = (0..settings.kills)
        .map(|number| {
            let last = number + 1 == settings.kills;
            Kill {
                after_created: if last {
                    settings.tasks
                } else {
                    1 + random.below(tasks) as usize
                },
                delay: Duration::from_millis(random.below(if last { 400 } else { 60 })),
                again_while_starting: (random.below(4) == 0)
                    .then(|| Duration::from_millis(random.below(150))),
            }
        })
        .collect();
    kills.sort_by_key(|kill| kill.after_created);
    kills
}

/// The one server of the run, started again after every kill on the same
/// database under the same replica name.
struct Server {
    dir: tempfile::TempDir,
    database_url: String,
    child: Option<testkit::ServeChild>,
    /// Where it listens now (each start takes a free port).
    address: Arc<RwLock<String>>,
    /// The warnings and errors every start logged, shown if the run fails.
    complaints: Arc<Mutex<Vec<String>>>,
    starts: usize,
}

impl Server {
    fn new(database_url: String) -> Self {
        Self {
            dir: tempfile::tempdir().unwrap(),
            database_url,
            child: None,
            address: Arc::default(),
            complaints: Arc::default(),
            starts: 0,
        }
    }

    /// Spawn it, keeping its warnings and errors; the first address it names
    /// arrives on the answer.
    fn spawn(&mut self) -> mpsc::Receiver<String> {
        self.starts += 1;
        let (child, lines) = common::serve_command(self.dir.path())
            .args(&["--replica", "soak"])
            .envs(&[
                ("SWITCHBACK_DATABASE_URL", &self.database_url),
                // The soak makes more changes a minute than a client should.
                ("SWITCHBACK_MUTATIONS_PER_MINUTE", "0"),
                ("RUST_LOG", "info"),
            ])
            .spawn()
            .unwrap();
        self.child = Some(child);
        let (address_tx, address_rx) = mpsc::channel();
        let complaints = self.complaints.clone();
        let start = self.starts;
        std::thread::spawn(move || {
            let mut address_tx = Some(address_tx);
            for line in lines {
                if let Some(address) = testkit::listening_in(&line)
                    && let Some(address_tx) = address_tx.take()
                {
                    let _ = address_tx.send(address);
                }
                if line.contains("WARN") || line.contains("ERROR") {
                    complaints
                        .lock()
                        .unwrap()
                        .push(format!("start {start}: {line}"));
                }
            }
        });
        address_rx
    }

    fn start(&mut self) {
        let address = self
            .spawn()
            .recv_timeout(Duration::from_secs(30))
            .expect("the server listens");
        *self.address.write().unwrap() = address;
    }

    /// Start it and kill it `after` later, whether or not it listens yet.
    fn start_and_kill_after(&mut self, after: Duration) {
        let _listening = self.spawn();
        std::thread::sleep(after);
        self.kill();
    }

    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.signal("-KILL");
        }
    }

    /// SIGTERM, and it must stop cleanly.
    fn stop(&mut self) {
        let mut child = self.child.take().expect("a server runs");
        let exit = child.signal("-TERM");
        assert!(
            exit.success(),
            "the server stops cleanly on SIGTERM: {exit:?}"
        );
    }

    fn address(&self) -> String {
        self.address.read().unwrap().clone()
    }
}

/// Shows what the servers complained of when the run fails.
struct ComplaintsOnFailure(Arc<Mutex<Vec<String>>>);

impl Drop for ComplaintsOnFailure {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let complaints = self
                .0
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            eprintln!(
                "the servers logged {} warnings and errors:",
                complaints.len()
            );
            for line in complaints.iter().take(200) {
                eprintln!("  {line}");
            }
        }
    }
}

/// One task's creation.
#[derive(Debug)]
struct Created {
    index: usize,
    id: String,
    /// Sends that got no answer (the server was down, starting, or killed
    /// before it answered) before the one that was answered.
    unanswered: usize,
    /// 201, or 200: the answer to a repeat, with the task the cut send created.
    status: u16,
}

/// Create task `index` with its own Idempotency-Key, sending again (to wherever
/// the server listens by then) until an answer comes: a send whose answer a kill
/// cut may or may not have created the task, and the repeat says which.
fn create(address: &RwLock<String>, profile_id: &str, index: usize) -> Created {
    let key = format!("soak-{index}");
    let body = json!({"profile_id": profile_id, "prompt": script::prompt(index)});
    let since = Instant::now();
    let mut unanswered = 0;
    loop {
        let at = address.read().unwrap().clone();
        match common::try_request_with(
            &at,
            "POST",
            "/api/tasks",
            &[("Idempotency-Key", &key)],
            Some(&body),
        ) {
            Ok((status @ (200 | 201), task)) => {
                // A first send is never a repeat: 200 then means the key was
                // taken by another task.
                assert!(
                    status == 201 || unanswered > 0,
                    "task {index}'s first send answered {status}: {task}"
                );
                return Created {
                    index,
                    id: task["id"].as_str().unwrap().to_owned(),
                    unanswered,
                    status,
                };
            }
            Ok((status, body)) => panic!("creating task {index}: {status} {body}"),
            Err(_) => {
                unanswered += 1;
                assert!(
                    since.elapsed() < CREATION_WITHIN,
                    "task {index} not created in {CREATION_WITHIN:?}"
                );
                // The server is down or starting: look again in a moment.
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

/// Every task listed, once none is moving any more.
fn at_rest(address: &str, tasks: usize) -> Vec<Value> {
    testkit::eventually_every(REST_WITHIN, Duration::from_millis(100), || {
        let listed = common::list_tasks(address);
        let mut states: BTreeMap<String, usize> = BTreeMap::new();
        for task in &listed {
            *states
                .entry(task["route"]["state"].as_str().unwrap_or("?").to_owned())
                .or_insert(0) += 1;
        }
        let resting = ["completed", "held", "stopped"]
            .iter()
            .map(|state| states.get(*state).copied().unwrap_or(0))
            .sum::<usize>();
        if listed.len() >= tasks && resting == listed.len() {
            Ok(listed)
        } else {
            Err(format!(
                "not at rest: {} tasks listed, {states:?}",
                listed.len()
            ))
        }
    })
}

/// Run the soak on `database`.
pub fn soak(database: Database, settings: Settings) {
    let began = Instant::now();
    eprintln!(
        "soak on {} ({}): {} tasks, {} kills; replay with SWITCHBACK_SOAK_SEED={} \
         SWITCHBACK_SOAK_TASKS={} SWITCHBACK_SOAK_KILLS={}",
        database.name(),
        database.location(),
        settings.tasks,
        settings.kills,
        settings.seed,
        settings.tasks,
        settings.kills,
    );
    let (provider, received) = provider::start();
    let base_url = provider.base_url();
    let mut server = Server::new(database.url());
    let _complaints = ComplaintsOnFailure(server.complaints.clone());
    server.start();

    let (status, provider) = common::request(
        &server.address(),
        "POST",
        "/api/providers",
        Some(
            &json!({"name": "soak", "kind": "openai_compatible", "family": "openai",
                     "base_url": base_url}),
        ),
    );
    assert_eq!(status, 201, "{provider}");
    let candidate = |model: &str| {
        json!({"provider_id": provider["id"], "model": model, "enabled": true,
               "max_tokens": 64, "policy": script::policy()})
    };
    let (status, profile) = common::request(
        &server.address(),
        "POST",
        "/api/profiles",
        Some(&json!({"name": "soak", "candidates": [
            candidate(script::FIRST_MODEL), candidate(script::SECOND_MODEL)]})),
    );
    assert_eq!(status, 201, "{profile}");
    let profile_id = profile["id"].as_str().unwrap().to_owned();

    // Create every task from several threads while this one kills the server
    // as the schedule says.
    let kills = schedule(settings);
    let created_so_far = AtomicUsize::new(0);
    let mut restarts_killed = 0;
    let address = server.address.clone();
    let mut created: Vec<Created> = std::thread::scope(|scope| {
        let creators: Vec<_> = (0..CREATORS)
            .map(|creator| {
                let (address, profile_id, created_so_far) =
                    (&address, &profile_id, &created_so_far);
                scope.spawn(move || {
                    (creator..settings.tasks)
                        .step_by(CREATORS)
                        .map(|index| {
                            let created = create(address, profile_id, index);
                            created_so_far.fetch_add(1, Ordering::SeqCst);
                            created
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for kill in &kills {
            // Wait for the creations to reach the kill's point (or a creator to
            // give up, whose panic the join below passes on).
            while created_so_far.load(Ordering::SeqCst) < kill.after_created
                && !creators.iter().all(|creator| creator.is_finished())
            {
                std::thread::sleep(Duration::from_millis(1));
            }
            std::thread::sleep(kill.delay);
            server.kill();
            if let Some(after) = kill.again_while_starting {
                server.start_and_kill_after(after);
                restarts_killed += 1;
            }
            server.start();
        }
        creators
            .into_iter()
            .flat_map(|creator| creator.join().unwrap())
            .collect()
    });
    created.sort_by_key(|created| created.index);
    let created_in = began.elapsed();

    let resting = at_rest(&server.address(), settings.tasks);
    let came_to_rest_in = began.elapsed();
    let received_at_rest = received.lock().unwrap().clone();

    // One more kill at rest: everything below is read from the database by a
    // server that started after a SIGKILL.
    server.kill();
    server.start();
    let address = server.address();

    // No route was lost, and none was made twice: every task created is listed,
    // once, and nothing else is.
    let ids: HashSet<&str> = created.iter().map(|created| created.id.as_str()).collect();
    assert_eq!(ids.len(), settings.tasks, "two creations answered one task");
    let listed = common::list_tasks(&address);
    let listed_ids: HashSet<&str> = listed
        .iter()
        .map(|task| task["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        listed.len(),
        settings.tasks,
        "tasks listed after the last kill"
    );
    assert_eq!(listed_ids, ids, "the tasks listed are the tasks created");
    assert_eq!(resting.len(), settings.tasks, "tasks listed at rest");

    // Every task is where its script leaves it, or held as interrupted, and the
    // provider received exactly the requests its attempts say.
    let mut problems = Vec::new();
    let mut endings: BTreeMap<(&str, Ending), usize> = BTreeMap::new();
    let mut attempts = 0;
    let (mut interrupted, mut interrupted_sent) = (0, 0);
    let none = HashMap::new();
    for created in &created {
        let (status, task) =
            common::request(&address, "GET", &format!("/api/tasks/{}", created.id), None);
        assert_eq!(status, 200, "{task}");
        let script = script::script_of(created.index);
        attempts += task["attempts"].as_array().map_or(0, Vec::len);
        let requests = received_at_rest
            .by_task
            .get(&created.index)
            .unwrap_or(&none);
        match script.check(&task, requests) {
            Ok(ending) => {
                *endings.entry((script.name, ending)).or_insert(0) += 1;
                if let Ending::Interrupted(attempts) = ending {
                    interrupted += 1;
                    // Every attempt before the interrupted one was one request.
                    interrupted_sent += requests.values().sum::<usize>() + 1 - attempts;
                }
            }
            Err(problem) => problems.push(format!(
                "task {} ({}, {}): {problem}\n  {task}\n  requests {requests:?}",
                created.index, script.name, created.id
            )),
        }
    }
    assert!(
        problems.is_empty(),
        "{} of {} tasks are not as their scripts imply:\n{}",
        problems.len(),
        settings.tasks,
        problems
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert!(
        received_at_rest.unexpected.is_empty(),
        "requests no script sends: {:?}",
        received_at_rest.unexpected
    );
    assert_eq!(
        received_at_rest.total,
        received_at_rest
            .by_task
            .values()
            .flat_map(HashMap::values)
            .sum::<usize>()
    );

    server.stop();
    // Nothing was sent after the run came to rest: not by the kill at rest, the
    // restart after it, nor while the checks read every task.
    assert_eq!(
        *received.lock().unwrap(),
        received_at_rest,
        "requests after the run came to rest"
    );
    let integrity = database.check(settings.tasks);
    assert_eq!(
        integrity.attempts, attempts as i64,
        "attempts stored and shown"
    );

    let sent_again = created
        .iter()
        .filter(|created| created.unanswered > 0)
        .count();
    let repeats = created
        .iter()
        .filter(|created| created.status == 200)
        .count();
    eprintln!(
        "soak on {} (seed {}): {} tasks created in {:.1} s, at rest at {:.1} s, checked at {:.1} s; \
         {} kills ({} of them followed by a kill of the next start), and one more at rest; \
         {} creations sent again after a kill ({} of them had been made by the send the kill cut: \
         the repeat answered 200 with that task); \
         {} requests, {} attempts ({} held as interrupted, {} of them received by the provider \
         before the kill), {} route events kept; {}",
        database.name(),
        settings.seed,
        settings.tasks,
        created_in.as_secs_f64(),
        came_to_rest_in.as_secs_f64(),
        began.elapsed().as_secs_f64(),
        kills.len(),
        restarts_killed,
        sent_again,
        repeats,
        received_at_rest.total,
        integrity.attempts,
        interrupted,
        interrupted_sent,
        integrity.events,
        integrity.driver_check,
    );
    for ((name, ending), count) in &endings {
        eprintln!("  {count:>5}  {name}: {ending:?}");
    }
    let complaints = server.complaints.lock().unwrap().clone();
    eprintln!(
        "  the servers logged {} warnings and errors",
        complaints.len()
    );
    for line in complaints.iter().take(20) {
        eprintln!("    {line}");
    }
    drop(server);
    database.remove();
}
