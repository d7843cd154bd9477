//! The PostgreSQL driver: the store of several server replicas on one database
//! (SPEC 7), through a sqlx pool, migrated on open (`migrations/postgres/`); one
//! module per aggregate, with its SQL. The rows are the ones the SQLite driver
//! reads (`store/rows.rs`).
//!
//! Every write is one transaction. Updates are fenced in their WHERE clause (a
//! revision, a route's generation), so of two replicas computing from the same
//! read exactly one wins and the other is told it is stale; names and
//! idempotency keys are unique in the schema, so two replicas cannot both take
//! one.

mod batch;
mod client_keys;
mod commit;
mod profiles;
mod providers;
mod sequence;
mod tasks;

use std::str::FromStr;

use futures_util::FutureExt;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use api::Timestamp;
use async_trait::async_trait;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{PgConnection, PgPool};

use super::{Store, StoreError};
use crate::domain::{Feed, FeedSender, Published};

/// The PostgreSQL migrations, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

/// Connections each replica keeps.
const CONNECTIONS: u32 = 16;

/// How often a replica says it is alive.
const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a replica may stay silent before the others take its routes over.
pub(super) const LAPSE_MS: i64 = 10_000;

/// Events read from the log at once.
const PUMP_BATCH: u32 = 512;

/// The PostgreSQL store handle: cheap to clone.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// This replica's id: the owner of the routes it commits.
    replica: Arc<str>,
    /// The last event id when the store was opened: the feed starts after it.
    opened_at_event: i64,
    /// Whether the feed's pump was started.
    pumping: Arc<OnceLock<()>>,
    /// Set by `close`; held by each heartbeat while it writes, so a heartbeat
    /// that began before the replica left cannot write its row back after.
    leaving: Arc<tokio::sync::Mutex<bool>>,
    /// Told of each commit this replica makes: its pump sequences the new events
    /// (and announces the batch to every replica), so a commit notifies no one.
    committed: Arc<tokio::sync::Notify>,
    /// The connection that holds this replica's name (a session advisory lock)
    /// while the server runs: a second server asking for the name is refused,
    /// and the name is free again the moment this process ends, however it
    /// ends (the database drops a dead client's session, and its locks).
    name_lock: Arc<tokio::sync::Mutex<Option<PgConnection>>>,
}

impl PostgresStore {
    /// Connect to the database at `url` (`postgres://` or `postgresql://`) and
    /// migrate it, as the replica `replica`.
    pub async fn open(url: &str, replica: &str) -> Result<Self, StoreError> {
        let shown = without_password(url);
        let options = PgConnectOptions::from_str(url).map_err(|source| StoreError::InvalidUrl {
            url: shown.clone(),
            source,
        })?;
        Self::open_with(options, &shown, replica).await
    }

    /// Connect with `options` (a schema of its own for a test, say) and migrate,
    /// as the replica `replica`; `url` names the database in errors. The replica
    /// says it is alive every two seconds from now on, until the store is closed.
    pub async fn open_with(
        options: PgConnectOptions,
        url: &str,
        replica: &str,
    ) -> Result<Self, StoreError> {
        let pool = PgPoolOptions::new()
            .max_connections(CONNECTIONS)
            .acquire_timeout(Duration::from_secs(10))
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open {
                url: url.to_owned(),
                source,
            })?;
        MIGRATOR.run(&pool).await?;
        let name_lock = hold_name(&pool, replica).await?;
        let opened_at_event: Option<i64> = sqlx::query_scalar("SELECT MAX(seq) FROM route_events")
            .fetch_one(&pool)
            .await?;
        let store = Self {
            pool,
            replica: Arc::from(replica),
            opened_at_event: opened_at_event.unwrap_or(0),
            pumping: Arc::default(),
            leaving: Arc::default(),
            committed: Arc::default(),
            name_lock: Arc::new(tokio::sync::Mutex::new(Some(name_lock))),
        };
        store.heartbeat().await?;
        let beating = store.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(HEARTBEAT);
            every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            while !beating.pool.is_closed() {
                every.tick().await;
                if let Err(error) = beating.heartbeat().await
                    && !beating.pool.is_closed()
                {
                    tracing::warn!(error = %error, "the replica's heartbeat failed");
                }
            }
        });
        Ok(store)
    }

    /// Say this replica is alive, by the database's clock (the replicas' own
    /// clocks may disagree; the database's is one).
    async fn heartbeat(&self) -> Result<(), StoreError> {
        let leaving = self.leaving.lock().await;
        if *leaving {
            return Ok(());
        }
        sqlx::query(
            "INSERT INTO replicas (id, started_at_ms, heartbeat_at_ms) VALUES ($1, \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint, \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint) \
             ON CONFLICT (id) DO UPDATE SET heartbeat_at_ms = excluded.heartbeat_at_ms",
        )
        .bind(self.replica.as_ref())
        .execute(&self.pool)
        .await?;
        drop(leaving);
        // A replica killed without leaving keeps its row; once its heartbeat is
        // a day old, forget it (a route it owned reads as orphaned either way).
        sqlx::query(
            "DELETE FROM replicas WHERE heartbeat_at_ms < \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint - $1",
        )
        .bind(FORGET_REPLICA_AFTER_MS)
        .execute(&self.pool)
        .await?;
        self.keep_name().await;
        Ok(())
    }

    /// The name's session checked: one that died (the database restarted, the
    /// connection was cut) took the name's lock with it, so the name is taken
    /// again; should another server have taken it meanwhile, that is said.
    async fn keep_name(&self) {
        let mut name = self.name_lock.lock().await;
        let Some(connection) = name.as_mut() else {
            // Closed, or lost to another server already.
            return;
        };
        if sqlx::query("SELECT 1")
            .execute(&mut *connection)
            .await
            .is_ok()
        {
            return;
        }
        *name = None;
        match hold_name(&self.pool, &self.replica).await {
            Ok(again) => {
                tracing::warn!(replica = %self.replica, "this replica's name was lost with its connection; taken again");
                *name = Some(again);
            }
            Err(error) => tracing::error!(
                replica = %self.replica,
                error = %error,
                "this replica's name was lost with its connection, and another server holds it now"
            ),
        }
    }

    /// Publish the event log to `feed`, in id order, from every replica: woken by
    /// each of this replica's commits (it sequences what committed, see
    /// `PostgresStore::sequence`) and by each sequenced batch's notification,
    /// from any replica (it reads them), and every second in case one was lost,
    /// the listener reconnected or a replica went away before sequencing its
    /// own. Events pruned before this replica read them are a `Resync`.
    fn start_pump(&self, feed: FeedSender) {
        if self.pumping.set(()).is_err() {
            return;
        }
        let store = self.clone();
        tokio::spawn(async move { store.pump(feed).await });
    }

    async fn pump(self, feed: FeedSender) {
        let mut cursor = self.opened_at_event;
        let mut listener: Option<sqlx::postgres::PgListener> = None;
        let mut wake = Wake::everything();
        let mut last_sequenced = std::time::Instant::now();
        while !self.pool.is_closed() {
            if listener.is_none() {
                match sqlx::postgres::PgListener::connect_with(&self.pool).await {
                    Ok(mut connected) => {
                        match connected
                            .listen_all([sequence::SEQUENCED, sequence::CANCELS])
                            .await
                        {
                            Ok(()) => listener = Some(connected),
                            Err(_) if self.pool.is_closed() => return,
                            Err(error) => {
                                tracing::warn!(error = %error, "listening for route events failed");
                            }
                        }
                    }
                    // A pool closed by a clean stop is no failure.
                    Err(_) if self.pool.is_closed() => return,
                    Err(error) => {
                        tracing::warn!(error = %error, "listening for route events failed");
                    }
                }
            }
            if wake.sequence {
                last_sequenced = std::time::Instant::now();
                // Sequence what committed (all of it, batch after batch).
                loop {
                    match self.sequence().await {
                        Ok(count) if count >= sequence::SEQUENCE_BATCH => {}
                        Ok(_) => break,
                        Err(error) => {
                            if !self.pool.is_closed() {
                                tracing::warn!(error = %error, "sequencing route events failed");
                            }
                            break;
                        }
                    }
                }
            }
            if wake.sequence || wake.read {
                cursor = self.publish_after(cursor, &feed).await;
            }
            wake = Wake::default();
            // Wait for this replica's next commit or the next notification; then,
            // after a moment for more to come, take every notification already
            // here: one look serves them all.
            match listener.as_mut() {
                Some(connected) => {
                    let first = tokio::select! {
                        () = self.committed.notified() => {
                            wake.sequence = true;
                            None
                        }
                        received = tokio::time::timeout(SEQUENCE_AT_LEAST.saturating_sub(last_sequenced.elapsed()), connected.try_recv()) => {
                            match received {
                                Ok(Ok(Some(first))) => Some(first),
                                // A second since this replica last sequenced, or the
                                // connection lost and made again (what it carried is
                                // lost): look, to be sure.
                                Ok(Ok(None)) | Err(_) => {
                                    wake = Wake::everything();
                                    None
                                }
                                // The listener reconnects through the pool: a clean
                                // stop that closed it is no failure.
                                Ok(Err(_)) if self.pool.is_closed() => return,
                                Ok(Err(error)) => {
                                    tracing::warn!(error = %error, "listening for route events failed");
                                    listener = None;
                                    wake = Wake::everything();
                                    continue;
                                }
                            }
                        }
                    };
                    if first.is_some() || wake.sequence {
                        tokio::time::sleep(GATHER).await;
                    }
                    let mut heard = first.or_else(|| received_now(connected, &mut wake));
                    while let Some(notification) = heard {
                        match notification.channel() {
                            sequence::CANCELS => {
                                if let Some((generation, task_id)) =
                                    notification.payload().split_once(' ')
                                    && let Ok(generation) = generation.parse()
                                {
                                    let _ = feed.send(Feed::Cancel {
                                        task_id: api::TaskId::new(task_id),
                                        generation,
                                    });
                                }
                            }
                            _ => {
                                wake.read |= notification
                                    .payload()
                                    .parse::<i64>()
                                    .map_or(true, |last| last > cursor);
                            }
                        }
                        heard = received_now(connected, &mut wake);
                    }
                    // Events a replica committed and did not sequence (it went away
                    // first) are sequenced by the others within a second.
                    if last_sequenced.elapsed() >= SEQUENCE_AT_LEAST {
                        wake.sequence = true;
                    }
                }
                None => {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    wake = Wake::everything();
                }
            }
        }
    }

    /// Publish the sequenced events after `cursor`, in id order, to the end;
    /// answers the new cursor. Events pruned before they were read are a `Resync`.
    async fn publish_after(&self, mut cursor: i64, feed: &FeedSender) -> i64 {
        loop {
            match self.read_log(cursor, PUMP_BATCH, false).await {
                Ok((events, oldest)) => {
                    if oldest.is_some_and(|oldest| oldest > cursor + 1) && cursor > 0 {
                        let _ = feed.send(Feed::Resync);
                    }
                    let full = events.len() == PUMP_BATCH as usize;
                    for event in events {
                        cursor = event.id;
                        let _ = feed.send(Feed::Event(Published {
                            id: event.id,
                            data: Arc::from(event.data_json),
                        }));
                    }
                    if !full {
                        return cursor;
                    }
                }
                Err(error) => {
                    if !self.pool.is_closed() {
                        tracing::warn!(error = %error, "reading route events failed");
                    }
                    return cursor;
                }
            }
        }
    }
}

/// How often a replica's pump sequences even when it heard of no commit: the
/// events a replica committed and left unsequenced (it went away first) wait no
/// longer than this, and a notification lost with a connection no longer.
const SEQUENCE_AT_LEAST: Duration = Duration::from_secs(1);

/// How long a silent replica's row is kept: a day.
const FORGET_REPLICA_AFTER_MS: i64 = 24 * 60 * 60 * 1000;

/// `url` as it may be shown: a password in it is replaced by `***`.
pub fn without_password(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(authority_end);
    match authority.rsplit_once('@') {
        Some((credentials, host)) => match credentials.split_once(':') {
            Some((user, _password)) => format!("{scheme}://{user}:***@{host}{tail}"),
            None => url.to_owned(),
        },
        None => url.to_owned(),
    }
}

/// A notification the listener has already received, without waiting for one;
/// a lost connection is a reason to look at everything.
fn received_now(
    connected: &mut sqlx::postgres::PgListener,
    wake: &mut Wake,
) -> Option<sqlx::postgres::PgNotification> {
    match connected.try_recv().now_or_never() {
        Some(Ok(Some(next))) => Some(next),
        Some(Ok(None) | Err(_)) => {
            *wake = Wake::everything();
            None
        }
        None => None,
    }
}

/// What the feed's pump was woken for.
#[derive(Debug, Default, Clone, Copy)]
struct Wake {
    /// Events committed: give them their ids.
    sequence: bool,
    /// Events were given ids past the cursor: read them.
    read: bool,
}

impl Wake {
    fn everything() -> Self {
        Self {
            sequence: true,
            read: true,
        }
    }
}

/// How long the pump lets notifications gather before it acts on them: under
/// load, one sequencing and one read serve many commits.
const GATHER: Duration = Duration::from_millis(5);

#[async_trait]
impl Store for PostgresStore {
    async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&self.pool)
                .await?;
        Ok(version.unwrap_or(0))
    }

    async fn init_instance(&self, now: Timestamp) -> Result<Timestamp, StoreError> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(
            "INSERT INTO instance (id, created_at_ms) VALUES (1, $1) ON CONFLICT (id) DO NOTHING",
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
        "postgres"
    }

    fn replica(&self) -> Option<&str> {
        Some(&self.replica)
    }

    async fn close(&self) {
        // Leave at once: the others need not wait for this replica's heartbeat to
        // lapse to take over what it leaves.
        let mut leaving = self.leaving.lock().await;
        *leaving = true;
        let _ = sqlx::query("DELETE FROM replicas WHERE id = $1")
            .bind(self.replica.as_ref())
            .execute(&self.pool)
            .await;
        drop(leaving);
        if let Some(connection) = self.name_lock.lock().await.take() {
            let _ = sqlx::Connection::close(connection).await;
        }
        self.pool.close().await;
    }
}

/// Advisory locks' first key: the lock of a replica's name (the second key is
/// the name's hash, with the schema's, so tests in schemas of their own do not
/// meet).
const NAME_LOCK_CLASS: i32 = 0x5357_4b42;

/// How long a start waits for a name a live server holds (its heartbeat is
/// fresh) before it is refused: the database ends the session of a server that
/// was killed as soon as it sees the connection close, which can be a moment
/// after the process is gone.
const NAME_GRACE: Duration = Duration::from_secs(3);

/// Take `replica`'s name on a connection of its own, held until the store
/// closes or the process ends; refused while another running server holds it.
/// A name held by a session whose server's heartbeat has lapsed (its host went
/// away, and the database has not yet seen the connection die, which can take
/// hours) is taken from it: that session is ended. So a start waits at most
/// [`NAME_GRACE`] for a live holder, and [`LAPSE_MS`] more for one that stopped
/// beating.
async fn hold_name(pool: &PgPool, replica: &str) -> Result<PgConnection, StoreError> {
    let mut connection = pool.acquire().await?.detach();
    let started = tokio::time::Instant::now();
    let lapse = Duration::from_millis(LAPSE_MS.unsigned_abs());
    loop {
        let taken: bool = sqlx::query_scalar(
            "SELECT pg_try_advisory_lock($1, hashtext(current_schema() || '/' || $2))",
        )
        .bind(NAME_LOCK_CLASS)
        .bind(replica)
        .fetch_one(&mut connection)
        .await?;
        if taken {
            return Ok(connection);
        }
        // How long ago the holder last beat, by the database's clock.
        let silent_ms: Option<i64> = sqlx::query_scalar(
            "SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint - heartbeat_at_ms \
             FROM replicas WHERE id = $1",
        )
        .bind(replica)
        .fetch_optional(&mut connection)
        .await?;
        let waited = started.elapsed();
        match silent_ms {
            Some(silent_ms) if silent_ms >= LAPSE_MS => {
                tracing::warn!(
                    replica,
                    silent_ms,
                    "the session holding this replica's name belongs to a server that stopped \
                     beating; ending it"
                );
                sqlx::query(
                    "SELECT pg_terminate_backend(pid) FROM pg_locks \
                     WHERE locktype = 'advisory' AND granted AND objsubid = 2 \
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                     AND classid::bigint = ($1::bigint & 4294967295) \
                     AND objid::bigint = (hashtext(current_schema() || '/' || $2)::bigint & 4294967295) \
                     AND pid <> pg_backend_pid()",
                )
                .bind(NAME_LOCK_CLASS)
                .bind(replica)
                .execute(&mut connection)
                .await?;
            }
            // Beating (or not yet beating): alive, once the grace is over.
            Some(silent_ms)
                if silent_ms < 2 * i64::try_from(HEARTBEAT.as_millis()).unwrap_or(i64::MAX)
                    && waited >= NAME_GRACE =>
            {
                return Err(refused(connection, replica).await);
            }
            None if waited >= NAME_GRACE => return Err(refused(connection, replica).await),
            _ if waited >= NAME_GRACE + lapse => return Err(refused(connection, replica).await),
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The refusal of a name a live server holds, the connection let go.
async fn refused(connection: PgConnection, replica: &str) -> StoreError {
    let _ = sqlx::Connection::close(connection).await;
    StoreError::ReplicaTaken {
        replica: replica.to_owned(),
    }
}

/// The replica name a server takes when it is given none: the machine's host
/// name and a digest of the machine's id, its host name and the database's URL
/// (without its password). The same server on the same machine and database
/// takes the same name at each start, so after a crash it takes its routes
/// back at once rather than when its old heartbeat lapses; a second server on
/// the same machine and database needs a name of its own (`--replica`), and is
/// refused until it has one.
pub fn default_replica(database_url: &str) -> String {
    use sha2::Digest;
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map(|text| text.trim().to_owned())
            .unwrap_or_default()
    };
    let machine_id = [read("/etc/machine-id"), read("/var/lib/dbus/machine-id")]
        .into_iter()
        .find(|id| !id.is_empty())
        .unwrap_or_default();
    let host = [read("/proc/sys/kernel/hostname"), read("/etc/hostname")]
        .into_iter()
        .chain(std::env::var("HOSTNAME").ok())
        .find(|host| !host.is_empty())
        .unwrap_or_else(|| "server".to_owned());
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .take(48)
        .collect();
    let digest = sha2::Sha256::new()
        .chain_update(machine_id)
        .chain_update([0])
        .chain_update(&host)
        .chain_update([0])
        .chain_update(without_password(database_url))
        .finalize();
    let hex: String = digest
        .iter()
        .take(4)
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{host}-{hex}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::conformance;
    use crate::store::{ProfileStore, StoreError, TaskStore};

    async fn open_fresh(replica: &str) -> (PostgresStore, String) {
        let (_schema, url) = testkit::postgres::schema("switchback_test").await.unwrap();
        (PostgresStore::open(&url, replica).await.unwrap(), url)
    }

    /// The store conformance suite on a schema of its own, one test per
    /// behaviour.
    mod conformance_on_postgres {
        use super::open_fresh;

        crate::store::conformance::conformance_tests!(open_fresh("a").await);
    }

    #[tokio::test]
    async fn a_replica_name_is_one_running_servers_at_a_time() {
        let (first, url) = open_fresh("a").await;
        let refused = PostgresStore::open(&url, "a").await.unwrap_err();
        assert!(
            matches!(&refused, StoreError::ReplicaTaken { replica } if replica == "a"),
            "{refused:?}"
        );
        assert!(refused.to_string().contains("--replica"), "{refused}");
        // Another name on the same database, and the same name in another
        // database (schema), are free.
        let other = PostgresStore::open(&url, "b").await.unwrap();
        let (elsewhere, _) = open_fresh("a").await;
        // Free again once its server is gone.
        first.close().await;
        let again = PostgresStore::open(&url, "a").await.unwrap();
        for store in [other, elsewhere, again] {
            store.close().await;
        }
    }

    /// A name whose session outlived its server (its host went away, and the
    /// database has not seen the connection die) is taken back once that
    /// server's heartbeat has lapsed: the session left behind is ended.
    #[tokio::test]
    async fn a_name_left_by_a_server_that_stopped_beating_is_taken_back() {
        let (store, url) = open_fresh("another").await;
        let mut left = <PgConnection as sqlx::Connection>::connect(&url)
            .await
            .unwrap();
        let held: bool = sqlx::query_scalar(
            "SELECT pg_try_advisory_lock($1, hashtext(current_schema() || '/' || 'a'))",
        )
        .bind(NAME_LOCK_CLASS)
        .fetch_one(&mut left)
        .await
        .unwrap();
        assert!(held);
        sqlx::query(
            "INSERT INTO replicas (id, started_at_ms, heartbeat_at_ms) VALUES ('a', 0, \
             (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 60000)",
        )
        .execute(&mut left)
        .await
        .unwrap();
        let taken = PostgresStore::open(&url, "a").await.unwrap();
        assert!(
            sqlx::query("SELECT 1").execute(&mut left).await.is_err(),
            "the session left behind was ended"
        );
        taken.close().await;
        store.close().await;
    }

    /// A name whose connection is cut (the database ended its session) is taken
    /// again at the next heartbeat, on a session of its own.
    #[tokio::test]
    async fn a_name_whose_connection_is_cut_is_taken_again() {
        let (store, url) = open_fresh("a").await;
        let admin = sqlx::PgPool::connect(&url).await.unwrap();
        let holders = "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted \
             AND objsubid = 2 AND classid::bigint = ($1::bigint & 4294967295) \
             AND objid::bigint = (hashtext(current_schema() || '/' || 'a')::bigint & 4294967295)";
        let first: i32 = sqlx::query_scalar(holders)
            .bind(NAME_LOCK_CLASS)
            .fetch_one(&admin)
            .await
            .unwrap();
        sqlx::query("SELECT pg_terminate_backend($1)")
            .bind(first)
            .execute(&admin)
            .await
            .unwrap();
        let admin = &admin;
        testkit::eventually_async(Duration::from_secs(15), || async move {
            let now: Vec<i32> = sqlx::query_scalar(holders)
                .bind(NAME_LOCK_CLASS)
                .fetch_all(admin)
                .await
                .unwrap();
            if now.len() == 1 && now[0] != first {
                Ok(())
            } else {
                Err(format!("the name's holders: {now:?} (first {first})"))
            }
        })
        .await;
        store.close().await;
    }

    #[tokio::test]
    async fn everything_survives_reopening_the_database() {
        let (store, url) = open_fresh("a").await;
        let profile = conformance::seed_profile(&store).await;
        store.close().await;
        let reopened = PostgresStore::open(&url, "a").await.unwrap();
        assert_eq!(reopened.get_profile(&profile.id).await.unwrap(), profile);
        assert_eq!(reopened.schema_version().await.unwrap(), 8);
    }

    #[tokio::test]
    async fn two_replicas_commit_through_one_fence() {
        // Two replicas' stores on one database: a route computed from one read is
        // written by exactly one of them.
        let (first, url) = open_fresh("a").await;
        let second = PostgresStore::open(&url, "b").await.unwrap();
        conformance::concurrent_commits_exactly_one_wins_across(&first, &second).await;
    }

    #[tokio::test]
    async fn a_firing_skips_a_route_another_transaction_holds() {
        // A replica firing a deadline does not wait on another's transaction over
        // the same route (its firing, say): it is refused at once, nothing
        // written, and claims the route once that transaction is gone.
        let (store, _url) = open_fresh("a").await;
        let task = conformance::waiting_until(&store, "held", 50_000).await;
        let mut holder = store.pool.begin().await.unwrap();
        sqlx::query("SELECT 1 FROM routes WHERE task_id = $1 FOR UPDATE")
            .bind(task.id.as_str())
            .execute(&mut *holder)
            .await
            .unwrap();
        let refused = tokio::time::timeout(
            Duration::from_secs(5),
            store.commit(1, conformance::firing(&task, 1, 50_000)),
        )
        .await
        .expect("skipped, not waited for");
        assert_eq!(conformance::refused_at(refused), 1);
        holder.rollback().await.unwrap();
        store
            .commit(1, conformance::firing(&task, 1, 50_000))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_firing_claims_only_its_own_routes_while_their_owner_lives() {
        // The route's owner is the replica that committed its last transition;
        // another may claim its deadline only once that owner has gone.
        let (owner, url) = open_fresh("owner").await;
        let other = PostgresStore::open(&url, "other").await.unwrap();
        let task = conformance::waiting_until(&owner, "owned", 50_000).await;
        assert!(other.due_routes(50_000, 10).await.unwrap().is_empty());
        assert_eq!(
            conformance::refused_at(other.commit(1, conformance::firing(&task, 1, 50_000)).await),
            1,
            "the owner lives"
        );
        owner.close().await;
        assert_eq!(other.due_routes(50_000, 10).await.unwrap().len(), 1);
        other
            .commit(1, conformance::firing(&task, 1, 50_000))
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn events_a_replica_left_unsequenced_reach_the_others_feeds() {
        // A commits and never sequences (it has no pump: as if it went away
        // right after its commits); B's pump gives the events their ids and
        // publishes them.
        let (a, url) = open_fresh("a").await;
        let b = PostgresStore::open(&url, "b").await.unwrap();
        let (feed, mut published) = tokio::sync::broadcast::channel(64);
        b.attach_feed(feed);
        conformance::waiting_until(&a, "left", 50_000).await;
        let fed = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                if let Ok(Feed::Event(event)) = published.recv().await
                    && event.data.contains(r#""generation": 1"#)
                {
                    return event;
                }
            }
        })
        .await
        .expect("published by the other replica");
        assert!(fed.id > 0);
    }

    #[test]
    fn a_password_in_a_url_is_never_shown() {
        assert_eq!(
            without_password("postgres://app:s3cret@db:5432/switchback?sslmode=disable"),
            "postgres://app:***@db:5432/switchback?sslmode=disable"
        );
        assert_eq!(
            without_password("postgres://root@127.0.0.1/test"),
            "postgres://root@127.0.0.1/test"
        );
        assert_eq!(without_password("postgres://db/test"), "postgres://db/test");
    }

    #[tokio::test]
    async fn a_refused_url_says_what_it_expected() {
        let error = PostgresStore::open("postgres://nobody:hunter2@127.0.0.1:1/none", "a")
            .await
            .unwrap_err();
        assert!(matches!(error, StoreError::Open { .. }), "{error:?}");
        let shown = format!("{error} {error:?}");
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}
