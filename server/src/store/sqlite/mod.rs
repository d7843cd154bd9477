//! The SQLite driver: a file through sqlx, migrated on open; one module per
//! aggregate, with its row types and SQL.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions, so a transaction holds the
//! write lock before it reads anything it then depends on; the revision
//! fence in each UPDATE makes a stale write fail rather than win. Reads of
//! more than one table run in one transaction too, so they see one state.

mod batch;
mod client_keys;
mod commit;
mod profiles;
mod providers;
mod reader;
mod tasks;
mod wal_batch;
mod writer;

use std::str::FromStr;
use std::time::Duration;

use api::Timestamp;
use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqliteConnection, SqlitePool, Transaction};

use super::{Store, StoreError};

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// The SQLite store handle: cheap to clone.
///
/// Reads share a pool of connections. Tasks, routes and everything a transition
/// writes go through the task writer (a thread writing in batches, see
/// [`writer`]); profiles and providers through a pool of one. The two take turns
/// through one gate: SQLite lets one writer in at a time anyway, and queueing
/// writers here, in order and without polling, is far faster than letting them
/// meet `SQLITE_BUSY` and back off inside its busy handler.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
    writer: SqlitePool,
    tasks: writer::TaskWriter,
    gate: writer::Gate,
    readers: std::sync::Arc<reader::Readers>,
    /// Where committed events are published (the engine's live feed).
    feed: std::sync::Arc<std::sync::OnceLock<crate::domain::FeedSender>>,
}

/// A write transaction of the sqlx writer, holding the gate until it ends.
struct WriteTx {
    tx: Transaction<'static, Sqlite>,
    _gate: tokio::sync::OwnedMutexGuard<()>,
}

impl WriteTx {
    async fn commit(self) -> Result<(), sqlx::Error> {
        self.tx.commit().await
    }
}

impl std::ops::Deref for WriteTx {
    type Target = SqliteConnection;

    fn deref(&self) -> &SqliteConnection {
        &self.tx
    }
}

impl std::ops::DerefMut for WriteTx {
    fn deref_mut(&mut self) -> &mut SqliteConnection {
        &mut self.tx
    }
}

/// The page size a new database file is made with (an existing one keeps its own:
/// SQLite fixes it when the file is made, and in WAL mode for good). A commit writes
/// each page it changes, whole, to the log before its `fsync`, and a new task
/// changes one page in each of some twenty B-trees (its tables and their indexes):
/// with 1 KiB pages that is about 30 KB a task rather than 90 KB with SQLite's
/// default of 4 KiB, and the `fsync` of a task's creation, which a gateway call
/// waits for before it sends, takes less time. Rows larger than a page (a long
/// prompt) go on in overflow pages, as they do at any size.
const PAGE_SIZE: u32 = 1024;

impl SqliteStore {
    /// Open (creating the file if missing) and migrate the database at `url`.
    pub async fn open(url: &str) -> Result<Self, StoreError> {
        // sqlx would take any other string as a file name; say so instead.
        if !url.starts_with("sqlite:") {
            return Err(StoreError::UnsupportedUrl {
                url: url.to_string(),
            });
        }
        let options = SqliteConnectOptions::from_str(url)
            .map_err(|source| StoreError::InvalidUrl {
                url: url.to_string(),
                source,
            })?
            .create_if_missing(true)
            .page_size(PAGE_SIZE)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let open = |connections: u32, options: SqliteConnectOptions| async move {
            SqlitePoolOptions::new()
                .max_connections(connections)
                .connect_with(options)
                .await
                .map_err(|source| StoreError::Open {
                    url: url.to_string(),
                    source,
                })
        };
        let writer = open(1, options.clone()).await?;
        MIGRATOR.run(&writer).await?;
        let gate = writer::Gate::default();
        let tasks = writer::TaskWriter::start(options.get_filename(), gate.clone())
            .map_err(|error| StoreError::Write(format!("cannot open {url:?} to write: {error}")))?;
        let readers = reader::Readers::open(options.get_filename())?;
        let pool = open(8, options).await?;
        Ok(Self {
            pool,
            writer,
            tasks,
            gate,
            readers: std::sync::Arc::new(readers),
            feed: std::sync::Arc::default(),
        })
    }

    /// A write transaction that holds the write lock from its first statement
    /// (and the gate, so the task writer waits for it rather than SQLite's busy
    /// handler).
    async fn write(&self) -> Result<WriteTx, StoreError> {
        let gate = self.gate.clone().lock_owned().await;
        Ok(WriteTx {
            tx: self.writer.begin_with("BEGIN IMMEDIATE").await?,
            _gate: gate,
        })
    }

    /// A read transaction: every statement in it sees the same state.
    async fn read(&self) -> Result<Transaction<'static, Sqlite>, StoreError> {
        Ok(self.pool.begin().await?)
    }
}

impl SqliteStore {
    /// Publish a committed event to the feed, if one is attached: called by the
    /// task writer after the commit, in commit order.
    fn publish(&self, id: i64, data: &std::sync::Arc<str>) {
        if let Some(feed) = self.feed.get() {
            let _ = feed.send(crate::domain::Feed::Event(crate::domain::Published {
                id,
                data: data.clone(),
            }));
        }
    }
}

#[async_trait]
impl Store for SqliteStore {
    async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
                .fetch_one(&self.pool)
                .await?;
        Ok(version.unwrap_or(0))
    }

    async fn init_instance(&self, now: Timestamp) -> Result<Timestamp, StoreError> {
        let mut tx = self.write().await?;
        sqlx::query(
            "INSERT INTO instance (id, created_at_ms) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
        )
        .bind(now.as_millis())
        .execute(&mut *tx)
        .await?;
        let created_at_ms: i64 =
            sqlx::query_scalar("SELECT created_at_ms FROM instance WHERE id = 1")
                .fetch_one(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(Timestamp::from_millis(created_at_ms))
    }

    fn driver(&self) -> &'static str {
        "sqlite"
    }

    async fn close(&self) {
        self.tasks.close().await;
        self.pool.close().await;
        self.writer.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ProfileStore, conformance};

    async fn open_temp() -> (tempfile::TempDir, String, SqliteStore) {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("store.db").display());
        let store = SqliteStore::open(&url).await.unwrap();
        (dir, url, store)
    }

    #[tokio::test]
    async fn creates_migrates_and_reopens_a_file() {
        let (_dir, url, store) = open_temp().await;
        let version = store.schema_version().await.unwrap();
        assert!(version >= 2, "migrations ran: {version}");
        let first = Timestamp::from_millis(1_000);
        assert_eq!(store.init_instance(first).await.unwrap(), first);
        store.close().await;

        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(reopened.schema_version().await.unwrap(), version);
        assert_eq!(
            reopened
                .init_instance(Timestamp::from_millis(2_000))
                .await
                .unwrap(),
            first,
            "the first time is kept"
        );
    }

    /// A new file is made with small pages (set before the log is, or SQLite would
    /// keep its default); a file made before keeps the pages it has, and opens.
    #[tokio::test]
    async fn a_new_file_has_small_pages_and_an_older_one_keeps_its_own() {
        let page_size = |store: &SqliteStore| {
            store
                .readers
                .read(|connection| {
                    Ok(connection.query_row("PRAGMA page_size", [], |row| row.get::<_, u32>(0))?)
                })
                .unwrap()
        };
        let (_dir, _url, store) = open_temp().await;
        assert_eq!(page_size(&store), PAGE_SIZE);
        store.close().await;

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("older.db");
        let older = rusqlite::Connection::open(&path).unwrap();
        older
            .execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE made_before (x);")
            .unwrap();
        drop(older);
        let store = SqliteStore::open(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        assert_eq!(page_size(&store), 4096, "SQLite's default, kept");
        assert!(store.schema_version().await.unwrap() >= 2, "migrated");
    }

    /// The task writer runs as its gathered WAL needs (`wal_batch.rs`): every commit
    /// synced, no cache spill; and its commit reaches the WAL in one write.
    #[tokio::test]
    async fn the_writer_syncs_every_commit_and_writes_each_at_once() {
        let (_dir, _url, store) = open_temp().await;
        let pragma = |connection: &rusqlite::Connection, name: &str| -> Result<i64, StoreError> {
            Ok(connection.query_row(&format!("PRAGMA {name}"), [], |row| row.get(0))?)
        };
        let settings = store
            .tasks
            .write(
                move |connection| {
                    Ok((
                        pragma(connection, "synchronous")?,
                        pragma(connection, "cache_spill")?,
                    ))
                },
                |_| {},
            )
            .await
            .unwrap();
        assert_eq!(settings, (2, 0), "synchronous = FULL, cache_spill = OFF");
        let writes = || wal_batch::WRITES.with(std::cell::Cell::get);
        let before = store
            .tasks
            .write(move |_| Ok(writes()), |_| {})
            .await
            .unwrap();
        let after = store
            .tasks
            .write(
                move |connection| {
                    connection.execute_batch(
                        "CREATE TABLE gathered (n TEXT); CREATE INDEX gathered_n ON gathered (n);",
                    )?;
                    Ok(())
                },
                |()| {},
            )
            .await
            .and(store.tasks.write(move |_| Ok(writes()), |_| {}).await)
            .unwrap();
        // One write; two if the checkpointer has just emptied the log, which starts
        // again with a header synced before the frames. Written a page at a time,
        // these five or so pages would be twice as many writes.
        assert!(
            (1..=2).contains(&(after - before)),
            "the commit's frames in one write: {}",
            after - before
        );
    }

    #[tokio::test]
    async fn a_bad_url_is_a_clear_error() {
        let error = SqliteStore::open("switchback.db").await.unwrap_err();
        assert!(
            matches!(error, StoreError::UnsupportedUrl { .. }),
            "{error}"
        );
        assert!(error.to_string().contains("sqlite://"), "{error}");
        assert!(
            !std::path::Path::new("switchback.db").exists(),
            "no file was created"
        );

        let dir = tempfile::tempdir().unwrap();
        let missing_parent = format!("sqlite://{}", dir.path().join("no/such/dir/x.db").display());
        let error = SqliteStore::open(&missing_parent).await.unwrap_err();
        assert!(matches!(error, StoreError::Open { .. }), "{error}");
    }

    /// The store conformance suite on a file, one test per behaviour.
    mod conformance_on_a_file {
        use super::open_temp;

        crate::store::conformance::conformance_tests!({
            let (dir, _url, store) = open_temp().await;
            (store, dir)
        });
    }

    #[tokio::test]
    async fn everything_survives_reopening_the_file() {
        let (_dir, url, store) = open_temp().await;
        let profile = conformance::seed_profile(&store).await;
        store.close().await;
        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(reopened.get_profile(&profile.id).await.unwrap(), profile);
    }

    #[tokio::test]
    async fn a_panicking_write_fails_alone_and_the_writer_goes_on() {
        let (_dir, _url, store) = open_temp().await;
        let panicked = store
            .tasks
            .write(
                |_| -> Result<(), StoreError> { panic!("a bug in a write") },
                |()| {},
            )
            .await;
        assert!(
            matches!(panicked, Err(StoreError::Write(_))),
            "{panicked:?}"
        );
        let after_panicked = store
            .tasks
            .write(|_| Ok(7), |_: &i32| panic!("a bug after a commit"))
            .await;
        assert_eq!(after_panicked.unwrap(), 7, "committed, and said so");
        let next = store
            .tasks
            .write(
                |connection| {
                    Ok(connection
                        .prepare_cached("SELECT COUNT(*) FROM tasks")?
                        .query_row([], |row| row.get::<_, i64>(0))?)
                },
                |_| {},
            )
            .await;
        assert_eq!(next.unwrap(), 0, "the writer still writes");
        store.close().await;
        let closed = store.tasks.write(|_| Ok(()), |()| {}).await;
        assert!(
            matches!(closed, Err(StoreError::Write(_))),
            "closed: {closed:?}"
        );
    }

    /// Poll a write once, so it is queued for the writer, and hand it back.
    async fn queued<F: std::future::Future + Unpin>(mut write: F) -> F {
        std::future::poll_fn(|context| {
            let _ = std::pin::Pin::new(&mut write).poll(context);
            std::task::Poll::Ready(())
        })
        .await;
        write
    }

    /// The order in which writes' after-commit steps ran.
    type Order = std::sync::Arc<std::sync::Mutex<Vec<String>>>;

    /// An after-commit step that notes `name` in `order`.
    fn noted(order: &Order, name: &str) -> impl FnOnce(&()) + Send + 'static {
        let (order, name) = (order.clone(), name.to_owned());
        move |(): &()| order.lock().unwrap().push(name)
    }

    /// Hold the writer inside a batch: a first write (noted `first`) that
    /// waits to be let go. Answers it, queued, and what lets it go.
    async fn hold_writer<'a>(
        store: &'a SqliteStore,
        order: &Order,
    ) -> (
        impl std::future::Future<Output = Result<(), StoreError>> + Unpin + 'a,
        std::sync::mpsc::Sender<()>,
    ) {
        let (started, running) = tokio::sync::oneshot::channel();
        let (release, go) = std::sync::mpsc::channel::<()>();
        let first = queued(Box::pin(store.tasks.write(
            move |_| {
                let _ = started.send(());
                let _ = go.recv();
                Ok(())
            },
            noted(order, "first"),
        )))
        .await;
        running.await.unwrap();
        (first, release)
    }

    #[tokio::test]
    async fn a_burst_of_new_tasks_waits_behind_the_work_in_progress() {
        let (_dir, _url, store) = open_temp().await;
        let order = Order::default();
        // A first write holds the writer inside its batch until it is let go...
        let (first, release) = hold_writer(&store, &order).await;
        // ...while forty new tasks queue, then one route's commit.
        let mut writes = Vec::new();
        for index in 0..40 {
            let name = format!("new {index}");
            writes.push(
                queued(Box::pin(
                    store.tasks.write_new(|_| Ok(()), noted(&order, &name)),
                ))
                .await,
            );
        }
        let route = queued(Box::pin(
            store.tasks.write(|_| Ok(()), noted(&order, "route")),
        ))
        .await;
        release.send(()).unwrap();
        first.await.unwrap();
        route.await.unwrap();
        for write in writes {
            write.await.unwrap();
        }
        let order = order.lock().unwrap();
        assert_eq!(order.len(), 42);
        assert_eq!(order[0], "first");
        // The next batch took the route and sixteen new tasks; the rest came after.
        let route = order.iter().position(|name| name == "route").unwrap();
        assert!(route <= 1 + writer::NEW_PER_BATCH, "{order:?}");
    }

    #[tokio::test]
    async fn an_unhurried_write_rides_with_the_next_work_or_goes_alone() {
        let (_dir, _url, store) = open_temp().await;
        let order = Order::default();
        // The writer is held inside a batch while an unhurried write, then a
        // route's commit, queue: the unhurried one is written after the
        // commit that came later, with it.
        let (first, release) = hold_writer(&store, &order).await;
        let unhurried = queued(Box::pin(
            store
                .tasks
                .write_unhurried(|_| Ok(()), noted(&order, "unhurried")),
        ))
        .await;
        let route = queued(Box::pin(
            store.tasks.write(|_| Ok(()), noted(&order, "route")),
        ))
        .await;
        release.send(()).unwrap();
        first.await.unwrap();
        route.await.unwrap();
        unhurried.await.unwrap();
        assert_eq!(*order.lock().unwrap(), ["first", "route", "unhurried"]);
        // Alone, it is written all the same.
        store
            .tasks
            .write_unhurried(|_| Ok(()), noted(&order, "alone"))
            .await
            .unwrap();
        assert_eq!(
            order.lock().unwrap().last().map(String::as_str),
            Some("alone")
        );
    }
}
