//! The soak's databases, and the checks run on them once the last server has
//! stopped: the driver's own integrity check (SQLite's `integrity_check` and
//! `foreign_key_check`; on PostgreSQL, amcheck's B-tree and heap checks when the
//! extension can be had), and the same consistency queries of the schema on both.

use std::collections::HashMap;
use std::path::PathBuf;

use serde_json::Value;
use sqlx::Connection as _;

/// Consistency queries of the schema, the same on both drivers: each counts the
/// rows that break what it names, and every count must be 0 once the run is at
/// rest and the server stopped.
const CONSISTENCY: [(&str, &str); 17] = [
    (
        "tasks without a route",
        "SELECT COUNT(*) FROM tasks t WHERE NOT EXISTS (SELECT 1 FROM routes r WHERE r.task_id = t.id)",
    ),
    (
        "routes without a task",
        "SELECT COUNT(*) FROM routes r WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = r.task_id)",
    ),
    (
        "tasks without their first turn",
        "SELECT COUNT(*) FROM tasks t WHERE NOT EXISTS \
         (SELECT 1 FROM turns u WHERE u.task_id = t.id AND u.number = 1)",
    ),
    (
        "tasks whose snapshot is not the profile's two candidates",
        "SELECT COUNT(*) FROM tasks t WHERE \
         (SELECT COUNT(*) FROM task_candidates c WHERE c.task_id = t.id) <> 2",
    ),
    (
        "tasks without their Idempotency-Key",
        "SELECT COUNT(*) FROM tasks WHERE idempotency_key IS NULL",
    ),
    (
        "routes not at rest",
        "SELECT COUNT(*) FROM routes WHERE state NOT IN ('completed', 'held', 'stopped')",
    ),
    (
        "routes at rest with a deadline",
        "SELECT COUNT(*) FROM routes WHERE deadline_ms IS NOT NULL",
    ),
    (
        "held or stopped routes without a cause",
        "SELECT COUNT(*) FROM routes WHERE state IN ('held', 'stopped') AND cause IS NULL",
    ),
    (
        "attempts never finished",
        "SELECT COUNT(*) FROM attempts WHERE finished_at_ms IS NULL OR outcome IS NULL",
    ),
    (
        "attempts finished before they started",
        "SELECT COUNT(*) FROM attempts WHERE finished_at_ms < started_at_ms",
    ),
    (
        "attempts of a task without the task",
        "SELECT COUNT(*) FROM attempts a WHERE NOT EXISTS (SELECT 1 FROM tasks t WHERE t.id = a.task_id)",
    ),
    (
        "tasks whose attempts are not numbered one after another",
        "SELECT COUNT(*) FROM (SELECT task_id FROM attempts GROUP BY task_id \
         HAVING MAX(seq) - MIN(seq) + 1 <> COUNT(*)) gaps",
    ),
    (
        "attempts that did not start after the one before, at a later generation",
        "SELECT COUNT(*) FROM attempts a JOIN attempts b ON b.task_id = a.task_id AND b.seq = a.seq + 1 \
         WHERE b.generation <= a.generation OR b.started_at_ms < a.finished_at_ms",
    ),
    (
        "attempts at a generation their route has not passed",
        "SELECT COUNT(*) FROM attempts a JOIN routes r ON r.task_id = a.task_id \
         WHERE a.generation >= r.generation",
    ),
    (
        "completed routes whose turn has no answer or no producer",
        "SELECT COUNT(*) FROM routes r JOIN turns u ON u.task_id = r.task_id AND u.number = r.turn \
         WHERE r.state = 'completed' AND (u.answer IS NULL OR u.completed_at_ms IS NULL \
         OR u.candidate_id IS NULL OR u.model IS NULL)",
    ),
    (
        "completed routes whose last attempt was not answered",
        "SELECT COUNT(*) FROM routes r JOIN attempts a ON a.task_id = r.task_id \
         WHERE r.state = 'completed' AND a.outcome <> 'answered' \
         AND a.seq = (SELECT MAX(b.seq) FROM attempts b WHERE b.task_id = r.task_id)",
    ),
    (
        // No script's answer carries a reset still ahead, so none may open one.
        "circuits open",
        "SELECT COUNT(*) FROM circuits",
    ),
];

/// What the checks found, for the run's summary.
#[derive(Debug, Default)]
pub struct Integrity {
    /// Rows of each table that matter here.
    pub tasks: i64,
    /// Attempts in the database.
    pub attempts: i64,
    /// Route events kept.
    pub events: i64,
    /// What the driver's own check covered, in words.
    pub driver_check: String,
}

/// A database for one soak run.
pub enum Database {
    /// A SQLite file in a directory of the run's own.
    Sqlite {
        /// The database file.
        file: PathBuf,
        /// Keeps the directory until the run ends.
        _dir: tempfile::TempDir,
    },
    /// A schema of the run's own in the test database.
    Postgres {
        /// The schema's name.
        schema: String,
        /// A URL whose connections use the schema.
        url: String,
    },
}

impl Database {
    /// A new SQLite file.
    pub fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::Sqlite {
            file: dir.path().join("soak.db"),
            _dir: dir,
        }
    }

    /// A new schema in the test database (`SWITCHBACK_TEST_POSTGRES_URL`).
    pub fn postgres() -> Self {
        let (schema, url) = runtime()
            .block_on(testkit::postgres::schema("switchback_soak"))
            .unwrap();
        Self::Postgres { schema, url }
    }

    /// The driver's name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Sqlite { .. } => "sqlite",
            Self::Postgres { .. } => "postgres",
        }
    }

    /// What `switchback serve` is given as its database.
    pub fn url(&self) -> String {
        match self {
            Self::Sqlite { file, .. } => format!("sqlite://{}", file.display()),
            Self::Postgres { url, .. } => url.clone(),
        }
    }

    /// Where the run's data is, for a person replaying a failure.
    pub fn location(&self) -> String {
        match self {
            Self::Sqlite { file, .. } => file.display().to_string(),
            Self::Postgres { schema, .. } => format!("schema {schema}"),
        }
    }

    /// Run every check on the stopped server's database, which must hold
    /// `tasks` tasks: panics with every problem found, else answers what it saw.
    pub fn check(&self, tasks: usize) -> Integrity {
        let (integrity, problems) = match self {
            Self::Sqlite { file, .. } => check_sqlite(file, tasks),
            Self::Postgres { schema, url } => {
                runtime().block_on(check_postgres(schema, url, tasks))
            }
        };
        assert!(
            problems.is_empty(),
            "the {} database ({}) fails its checks:\n{}",
            self.name(),
            self.location(),
            problems.join("\n")
        );
        integrity
    }

    /// Remove what the run left in a shared database (a SQLite file goes with its
    /// directory). Only after every check passed: a failed run's schema stays for
    /// a person to look at.
    pub fn remove(self) {
        if let Self::Postgres { schema, .. } = self {
            runtime().block_on(async {
                let mut admin = sqlx::PgConnection::connect(&testkit::postgres::url())
                    .await
                    .unwrap();
                sqlx::query(sqlx::AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
                    .execute(&mut admin)
                    .await
                    .unwrap();
            });
        }
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A route event as the checks read it: its task, and the route's generation
/// in its data.
struct StoredEvent {
    task_id: String,
    data_json: String,
}

/// The events (in the order of their public ids) against the routes: a task's
/// events carry strictly increasing generations, and unless the log was pruned
/// (`complete` false) every task has events, the last at its route's generation.
fn check_events(
    events: &[StoredEvent],
    generations: &HashMap<String, i64>,
    complete: bool,
    problems: &mut Vec<String>,
) {
    let mut last: HashMap<&str, i64> = HashMap::new();
    for event in events {
        let data: Value = match serde_json::from_str(&event.data_json) {
            Ok(data) => data,
            Err(error) => {
                problems.push(format!(
                    "an event of {} is not JSON: {error}",
                    event.task_id
                ));
                continue;
            }
        };
        let Some(generation) = data["generation"].as_i64() else {
            problems.push(format!(
                "an event of {} has no generation: {data}",
                event.task_id
            ));
            continue;
        };
        if data["task_id"] != event.task_id.as_str() {
            problems.push(format!(
                "an event of {} names {}",
                event.task_id, data["task_id"]
            ));
        }
        if !generations.contains_key(&event.task_id) {
            problems.push(format!("an event of {}, which has no route", event.task_id));
        }
        if let Some(before) = last.insert(&event.task_id, generation)
            && before >= generation
        {
            problems.push(format!(
                "the events of {} go from generation {before} to {generation}",
                event.task_id
            ));
        }
    }
    if complete {
        for (task_id, generation) in generations {
            match last.get(task_id.as_str()) {
                Some(last) if last == generation => {}
                Some(last) => problems.push(format!(
                    "the last event of {task_id} is at generation {last}, its route at {generation}"
                )),
                None => problems.push(format!("{task_id} has no event")),
            }
        }
    }
}

fn check_sqlite(file: &std::path::Path, tasks: usize) -> (Integrity, Vec<String>) {
    let connection = rusqlite::Connection::open(file).unwrap();
    let mut problems = Vec::new();
    let integrity: Vec<String> = connection
        .prepare("PRAGMA integrity_check")
        .unwrap()
        .query_map([], |row| row.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    if integrity != ["ok"] {
        problems.push(format!("integrity_check: {integrity:?}"));
    }
    let foreign: Vec<String> = connection
        .prepare("PRAGMA foreign_key_check")
        .unwrap()
        .query_map([], |row| {
            Ok(format!(
                "{} row {:?} -> {}",
                row.get::<_, String>(0)?,
                row.get::<_, Option<i64>>(1)?,
                row.get::<_, String>(2)?
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    if !foreign.is_empty() {
        problems.push(format!("foreign_key_check: {foreign:?}"));
    }
    let count = |sql: &str| -> i64 { connection.query_row(sql, [], |row| row.get(0)).unwrap() };
    for (what, sql) in CONSISTENCY {
        let rows = count(sql);
        if rows != 0 {
            problems.push(format!("{rows} {what}"));
        }
    }
    let integrity = Integrity {
        tasks: count("SELECT COUNT(*) FROM tasks"),
        attempts: count("SELECT COUNT(*) FROM attempts"),
        events: count("SELECT COUNT(*) FROM route_events"),
        driver_check: "integrity_check ok, foreign_key_check empty".to_owned(),
    };
    if integrity.tasks != tasks as i64 {
        problems.push(format!(
            "{} tasks stored for {tasks} created",
            integrity.tasks
        ));
    }
    let generations: HashMap<String, i64> = connection
        .prepare("SELECT task_id, generation FROM routes")
        .unwrap()
        .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let events: Vec<StoredEvent> = connection
        .prepare("SELECT task_id, data_json FROM route_events ORDER BY id")
        .unwrap()
        .query_map([], |row| {
            Ok(StoredEvent {
                task_id: row.get(0)?,
                data_json: row.get(1)?,
            })
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    // AUTOINCREMENT ids start at 1: a log whose first id is 1 was never pruned.
    let complete = count("SELECT COALESCE(MIN(id), 1) FROM route_events") == 1;
    check_events(&events, &generations, complete, &mut problems);
    (integrity, problems)
}

async fn check_postgres(schema: &str, url: &str, tasks: usize) -> (Integrity, Vec<String>) {
    let mut connection = sqlx::PgConnection::connect(url).await.unwrap();
    let mut problems = Vec::new();
    for (what, sql) in CONSISTENCY {
        let rows: i64 = sqlx::query_scalar(sql)
            .fetch_one(&mut connection)
            .await
            .unwrap();
        if rows != 0 {
            problems.push(format!("{rows} {what}"));
        }
    }
    let unsequenced: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM route_events WHERE seq IS NULL")
            .fetch_one(&mut connection)
            .await
            .unwrap();
    if unsequenced != 0 {
        problems.push(format!(
            "{unsequenced} route events never given their public id"
        ));
    }
    let count = |sql: &'static str| sqlx::query_scalar::<_, i64>(sql);
    let mut integrity = Integrity {
        tasks: count("SELECT COUNT(*) FROM tasks")
            .fetch_one(&mut connection)
            .await
            .unwrap(),
        attempts: count("SELECT COUNT(*) FROM attempts")
            .fetch_one(&mut connection)
            .await
            .unwrap(),
        events: count("SELECT COUNT(*) FROM route_events")
            .fetch_one(&mut connection)
            .await
            .unwrap(),
        driver_check: String::new(),
    };
    if integrity.tasks != tasks as i64 {
        problems.push(format!(
            "{} tasks stored for {tasks} created",
            integrity.tasks
        ));
    }
    let generations: HashMap<String, i64> =
        sqlx::query_as::<_, (String, i64)>("SELECT task_id, generation FROM routes")
            .fetch_all(&mut connection)
            .await
            .unwrap()
            .into_iter()
            .collect();
    let events: Vec<StoredEvent> = sqlx::query_as::<_, (String, String)>(
        "SELECT task_id, data_json FROM route_events WHERE seq IS NOT NULL ORDER BY seq",
    )
    .fetch_all(&mut connection)
    .await
    .unwrap()
    .into_iter()
    .map(|(task_id, data_json)| StoredEvent { task_id, data_json })
    .collect();
    // The sequence starts at 1: a log whose first public id is 1 was never pruned.
    let complete = count("SELECT COALESCE(MIN(seq), 1) FROM route_events")
        .fetch_one(&mut connection)
        .await
        .unwrap()
        == 1;
    check_events(&events, &generations, complete, &mut problems);
    integrity.driver_check = amcheck(schema, &mut problems).await;
    (integrity, problems)
}

/// amcheck over every B-tree index (with every heap tuple looked up in it) and
/// every table of `schema`; what it covered, or why it could not run.
async fn amcheck(schema: &str, problems: &mut Vec<String>) -> String {
    // The extension is the database's, not the schema's: made once, in the
    // default schema, from a connection without the run's search path.
    let mut admin = sqlx::PgConnection::connect(&testkit::postgres::url())
        .await
        .unwrap();
    let created = sqlx::query("CREATE EXTENSION IF NOT EXISTS amcheck")
        .execute(&mut admin)
        .await;
    let namespace: Option<String> = sqlx::query_scalar(
        "SELECT n.nspname::text FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace \
         WHERE e.extname = 'amcheck'",
    )
    .fetch_optional(&mut admin)
    .await
    .unwrap();
    let Some(namespace) = namespace else {
        let why = created
            .err()
            .map_or_else(String::new, |error| error.to_string());
        return format!("amcheck is unavailable ({why}): indexes and heaps not checked");
    };
    let relations = |kind: &'static str| {
        sqlx::query_scalar::<_, String>(
            "SELECT c.relname::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_am a ON a.oid = c.relam \
             WHERE n.nspname = $1 AND c.relkind::text = $2 AND (c.relkind <> 'i' OR a.amname = 'btree') \
             ORDER BY c.relname",
        )
        .bind(schema.to_owned())
        .bind(kind)
    };
    let indexes = relations("i").fetch_all(&mut admin).await.unwrap();
    let tables = relations("r").fetch_all(&mut admin).await.unwrap();
    for index in &indexes {
        let checked = sqlx::query(sqlx::AssertSqlSafe(format!(
            "SELECT {namespace}.bt_index_parent_check(index => $1::regclass, heapallindexed => true)"
        )))
        .bind(format!("{schema}.{index}"))
        .execute(&mut admin)
        .await;
        if let Err(error) = checked {
            problems.push(format!("amcheck on index {index}: {error}"));
        }
    }
    for table in &tables {
        let corrupt = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(format!(
            "SELECT COUNT(*) FROM {namespace}.verify_heapam($1::regclass)"
        )))
        .bind(format!("{schema}.{table}"))
        .fetch_one(&mut admin)
        .await;
        match corrupt {
            Ok(0) => {}
            Ok(rows) => problems.push(format!("verify_heapam on {table}: {rows} corrupt tuples")),
            Err(error) => problems.push(format!("verify_heapam on {table}: {error}")),
        }
    }
    format!(
        "amcheck: {} B-tree indexes (bt_index_parent_check, heapallindexed) and {} tables (verify_heapam) sound",
        indexes.len(),
        tables.len()
    )
}
