//! The durable store: one trait per aggregate (providers, profiles, and tasks
//! with their routes, and the batches the restart pass reads and writes), one
//! driver per database (SQLite, the default; PostgreSQL, for several replicas),
//! one conformance suite run against each.
//!
//! Every store method writes in one transaction (a commit found stale, or a
//! repeated idempotency key, is read back after it). Every write that depends on a read
//! is guarded in SQL: updates name the revision they were computed from
//! (`WHERE id = ? AND revision = ?`), and zero rows is told apart in one
//! place as [`StoreError::NotFound`] (the row is gone) or
//! [`StoreError::Stale`] (it moved on), never a silent success.

mod client_keys;
mod postgres;
mod rows;
mod shared;
mod sqlite;

#[cfg(test)]
mod conformance;

use api::{AttemptId, FieldError, ProfileId, ProviderId, Revision, TaskCursor, TaskId, Timestamp};
use async_trait::async_trait;
use policy::route::RouteState;

use crate::domain::{
    Attempt, AttemptEnd, Circuit, CircuitHistoryEntry, CircuitKey, CircuitWait, ClientKey,
    ClientKeyWrite, FeedSender, Pause, Profile, ProfileWrite, Progress, Provider, ProviderWrite,
    RouteCommit, RouteCounts, RouteRecord, StoredEvent, Task, TaskDetail, TaskListing, TaskWrite,
};

pub use postgres::{PostgresStore, default_replica, without_password};
pub use sqlite::SqliteStore;

/// Open the store a database URL names: `sqlite://PATH` (one server process) or
/// `postgres://…` / `postgresql://…` (one or more replicas, this one named
/// `replica`), migrated.
pub async fn open(url: &str, replica: &str) -> Result<std::sync::Arc<dyn Store>, StoreError> {
    if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        Ok(std::sync::Arc::new(
            PostgresStore::open(url, replica).await?,
        ))
    } else {
        Ok(std::sync::Arc::new(SqliteStore::open(url).await?))
    }
}

/// What a store operation can refuse or fail with.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// No such row.
    #[error("no {entity} with id {id}")]
    NotFound {
        /// "provider" or "profile".
        entity: &'static str,
        /// The id asked for.
        id: String,
    },
    /// The update was computed from an older revision.
    #[error("revision {sent} is stale: the current revision is {current}")]
    Stale {
        /// The revision the caller sent.
        sent: Revision,
        /// The revision in the store.
        current: Revision,
    },
    /// The write refers to things that do not exist, or repeats a unique
    /// value: field errors for the caller.
    #[error("invalid references: {} field errors", .0.len())]
    Invalid(Vec<FieldError>),
    /// The transition was computed from an older generation of the route:
    /// nothing was written. `current` is the route now.
    #[error("generation {sent} is stale: the route is at {}", .current.route.generation)]
    StaleGeneration {
        /// The generation the transition was computed from.
        sent: i64,
        /// The route as it is now.
        current: Box<RouteRecord>,
    },
    /// The row is still used by others (a provider by profiles).
    #[error("{entity} {name} is used by {users}")]
    InUse {
        /// "provider".
        entity: &'static str,
        /// Its name.
        name: String,
        /// Who uses it, for people.
        users: String,
    },
    /// The URL names no database this build can open.
    #[error(
        "unsupported database URL {url:?}: expected sqlite://PATH (e.g. sqlite://switchback.db) or postgres://USER@HOST/DATABASE"
    )]
    UnsupportedUrl {
        /// The URL given.
        url: String,
    },
    /// The database URL could not be parsed.
    #[error("invalid database URL {url:?}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// Why.
        source: sqlx::Error,
    },
    /// Another server that is still running holds this replica name on the
    /// database: two servers under one name would each take the other's routes
    /// for its own.
    #[error(
        "another running server is the replica {replica:?} on this database: give each server its own --replica NAME (or SWITCHBACK_REPLICA)"
    )]
    ReplicaTaken {
        /// The name asked for.
        replica: String,
    },
    /// The database could not be opened.
    #[error("cannot open database {url:?}")]
    Open {
        /// The URL given.
        url: String,
        /// Why.
        source: sqlx::Error,
    },
    /// A migration failed.
    #[error("database migration failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored value does not parse: the database was edited by hand or by
    /// a newer version.
    #[error("corrupt stored {what}: {message}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Why it does not parse.
        message: String,
    },
    /// The database failed.
    #[error("database error")]
    Database(#[from] sqlx::Error),
    /// The database failed under the task writer.
    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),
    /// A batch of the task writer could not be written (every write in it failed
    /// with it), or the writer has stopped.
    #[error("database write failed: {0}")]
    Write(String),
}

impl StoreError {
    /// Whether the same write may succeed if tried again (the database failed, not
    /// the write).
    pub fn may_pass(&self) -> bool {
        matches!(self, Self::Database(_) | Self::Sqlite(_) | Self::Write(_))
    }
}

/// The providers.
#[async_trait]
pub trait ProviderStore: Send + Sync {
    /// Insert a provider. A name taken (regardless of case) is `Invalid`.
    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError>;

    /// Every provider, by name.
    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError>;

    /// One provider.
    async fn get_provider(&self, id: &ProviderId) -> Result<Provider, StoreError>;

    /// Replace a provider if it is still at `expected`.
    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected: Revision,
    ) -> Result<Provider, StoreError>;

    /// Delete a provider no profile uses.
    async fn delete_provider(&self, id: &ProviderId) -> Result<(), StoreError>;
}

/// The gateway's client keys.
#[async_trait]
pub trait ClientKeyStore: Send + Sync {
    /// Keep a new key (its digest, never the key).
    async fn create_client_key(&self, write: ClientKeyWrite) -> Result<ClientKey, StoreError>;

    /// Every key, newest first, revoked ones too.
    async fn list_client_keys(&self) -> Result<Vec<ClientKey>, StoreError>;

    /// The working (not revoked) key with this digest.
    async fn client_key_by_digest(&self, digest: &str) -> Result<Option<ClientKey>, StoreError>;

    /// Revoke a key (at `now`); revoking it again changes nothing. `NotFound`
    /// when there is no such key.
    async fn revoke_client_key(
        &self,
        id: &api::ClientKeyId,
        now: Timestamp,
    ) -> Result<ClientKey, StoreError>;
}

/// The dynamic profiles and their candidates.
#[async_trait]
pub trait ProfileStore: Send + Sync {
    /// Insert a profile and its candidates. Unknown providers and a taken
    /// name are `Invalid`; client-sent candidate ids are `Invalid` (a new
    /// profile has none yet).
    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError>;

    /// Every profile, by name, with its candidates in order.
    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError>;

    /// One profile with its candidates in order.
    async fn get_profile(&self, id: &ProfileId) -> Result<Profile, StoreError>;

    /// The profile named `name`, whatever its case (names are unique regardless
    /// of case), with its candidates in order: how a gateway call's `model`
    /// names its profile. `NotFound` names the name.
    async fn profile_by_name(&self, name: &str) -> Result<Profile, StoreError>;

    /// Replace a profile's name and candidates if it is still at
    /// `expected`. Client-sent candidate ids must belong to it.
    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected: Revision,
    ) -> Result<Profile, StoreError>;

    /// Delete a profile and its candidates.
    async fn delete_profile(&self, id: &ProfileId) -> Result<(), StoreError>;
}

/// Tasks, their routes, attempts and turns, the shared circuits and the route
/// events. Every route write goes through [`TaskStore::commit`], fenced by the
/// generation it was computed from.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Publish every committed transition's event (and every new task's) to
    /// `feed`, in commit order, once it is durable; on several replicas, the
    /// events every replica commits.
    fn attach_feed(&self, feed: FeedSender);

    /// Insert a task with its snapshot, route, first turn and creation event, and
    /// answer the event row's id (see [`TaskStore::commit`]); with
    /// [`TaskWrite::start`], its first transition too, in the same transaction
    /// (published after the creation's event, its `after` run once durable).
    /// With an idempotency key already used, nothing is written and the first
    /// task is answered, without an event id.
    async fn create_task(&self, write: TaskWrite) -> Result<(TaskDetail, Option<i64>), StoreError>;

    /// The task started with this idempotency key, if any.
    async fn task_by_idempotency_key(&self, key: &str) -> Result<Option<TaskDetail>, StoreError>;

    /// One task with its route, attempts (oldest first) and turns.
    async fn get_task(&self, id: &TaskId) -> Result<TaskDetail, StoreError>;

    /// One route.
    async fn get_route(&self, id: &TaskId) -> Result<RouteRecord, StoreError>;

    /// One task's snapshot (it never changes).
    async fn get_snapshot(&self, id: &TaskId) -> Result<Task, StoreError>;

    /// What dispatching a route reads: the route, its turns and its calls by
    /// candidate, as of one moment.
    async fn get_progress(&self, id: &TaskId) -> Result<Progress, StoreError>;

    /// Tasks newest first, after `cursor`, optionally in one state.
    async fn list_tasks(
        &self,
        state: Option<RouteState>,
        cursor: Option<TaskCursor>,
        limit: u32,
    ) -> Result<Vec<TaskListing>, StoreError>;

    /// The tasks whose route waits for a deadline (a retry's or a reset's), the
    /// soonest first, at most `limit`.
    async fn list_waiting(&self, limit: u32) -> Result<Vec<TaskListing>, StoreError>;

    /// The routes held or waiting now, and the routes of the tasks created at or
    /// after `created_since_ms`, counted by state.
    async fn route_counts(&self, created_since_ms: i64) -> Result<RouteCounts, StoreError>;

    /// Write a transition in one transaction: the route if it is still at
    /// `expected_generation` (else `StaleGeneration`, nothing written), and with it
    /// the attempt, turn and circuit changes and the event. Answers the event row's
    /// id (on SQLite its id in the log; PostgreSQL gives the log's ids, in commit
    /// order, just after the commit, and every read of the log sees them).
    async fn commit(
        &self,
        expected_generation: i64,
        commit: RouteCommit,
    ) -> Result<i64, StoreError>;

    /// Finish an attempt whose route moved on, if nothing finished it yet; a
    /// finished attempt never changes.
    async fn finish_attempt(&self, id: &AttemptId, end: &AttemptEnd) -> Result<(), StoreError>;

    /// Routes whose deadline is at or before `now_ms`, earliest first.
    async fn due_routes(&self, now_ms: i64, limit: u32) -> Result<Vec<RouteRecord>, StoreError>;

    /// The earliest pending deadline after `after_ms`.
    async fn next_deadline(&self, after_ms: i64) -> Result<Option<i64>, StoreError>;

    /// Routes in these states that no other live replica owns, by id (restart
    /// reconciliation: on a database this process alone serves, every one).
    async fn routes_in(
        &self,
        states: &[RouteState],
        limit: u32,
        after: Option<TaskId>,
    ) -> Result<Vec<RouteRecord>, StoreError>;

    /// Tell every replica that a stop of `task_id` was committed from
    /// `generation`, so the one with its call in flight cuts it (`Feed::Cancel`).
    /// Nothing on a database this process alone serves.
    async fn announce_cancel(&self, _task_id: &TaskId, _generation: i64) -> Result<(), StoreError> {
        Ok(())
    }

    /// Whether other replicas may share this database (PostgreSQL): the engine
    /// then looks at it now and then for what they did or left (deadlines they
    /// armed, probes they finished, routes of a replica that went away).
    fn is_shared(&self) -> bool {
        false
    }

    /// Routes in these states whose replica went away (its heartbeat lapsed),
    /// taken over by this one: each is adopted by one replica. None on a database
    /// this process alone serves (its restart pass covers them).
    async fn adopt_orphans(
        &self,
        _states: &[RouteState],
        _limit: u32,
    ) -> Result<Vec<RouteRecord>, StoreError> {
        Ok(Vec::new())
    }

    /// How many routes are in each state.
    async fn count_routes(&self) -> Result<Vec<(RouteState, i64)>, StoreError>;

    /// How many routes are unfinished (neither completed nor stopped): an index
    /// range as long as the unfinished routes, however many finished ones the
    /// store keeps.
    async fn count_open_routes(&self) -> Result<i64, StoreError>;

    /// Finished attempts with their stored evidence, newest first, at most
    /// `limit`: every one, or (`unsure_only`) those the catalogue was unsure of
    /// (`unknown`, or `low` or `medium` confidence). Their `task_id` and
    /// `provider_id` say where each came from.
    async fn attempts_with_evidence(
        &self,
        unsure_only: bool,
        limit: u32,
    ) -> Result<Vec<Attempt>, StoreError>;

    /// Every open or half-open shared circuit, the soonest to half-open first.
    async fn list_circuits(&self) -> Result<Vec<Circuit>, StoreError>;

    /// The circuits that close `provider_id` or its `model`.
    async fn circuits_over(
        &self,
        provider_id: &ProviderId,
        model: &str,
    ) -> Result<Vec<Circuit>, StoreError>;

    /// Let `task_id` probe the half-open circuit `key`, if no running route probes
    /// it and it is due by `now_ms`. Answers whether this route is the probe.
    async fn claim_probe(
        &self,
        key: &CircuitKey,
        task_id: &TaskId,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// The routes waiting on an open circuit, soonest first, at most `limit`.
    async fn list_circuit_waits(&self, limit: u32) -> Result<Vec<CircuitWait>, StoreError>;

    /// What happened to the circuits since `since_ms`, newest first, at most `limit`.
    async fn circuit_history(
        &self,
        since_ms: i64,
        limit: u32,
    ) -> Result<Vec<CircuitHistoryEntry>, StoreError>;

    /// A person closes the circuit `key` as they saw it, half-opening at
    /// `until_ms`: in one write it goes, the closing is recorded, and the routes
    /// waiting on it are due at `now_ms`. Answers those routes, or `None` when
    /// the circuit is not there with that reset (gone, reopened or extended
    /// since), and then nothing is written.
    async fn close_circuit(
        &self,
        key: &CircuitKey,
        until_ms: i64,
        now_ms: i64,
    ) -> Result<Option<Vec<TaskId>>, StoreError>;

    /// Forget the circuits' history before `before_ms`; answers how much went.
    async fn prune_circuit_history(&self, before_ms: i64) -> Result<u64, StoreError>;

    /// What a person paused: everything and each provider, oldest first.
    async fn list_pauses(&self) -> Result<Vec<Pause>, StoreError>;

    /// Pause (`paused`) or resume automatic recovery on `provider_id` (`None`:
    /// everywhere) at `now_ms`, recorded in the pauses' history. Answers whether
    /// it changed anything: pausing what is paused, or resuming what is not,
    /// writes nothing.
    async fn set_pause(
        &self,
        provider_id: Option<&ProviderId>,
        paused: bool,
        now_ms: i64,
    ) -> Result<bool, StoreError>;

    /// Release the probe claims of routes no other live replica owns (on start: no
    /// attempt survives a restart).
    async fn release_probes(&self) -> Result<(), StoreError>;

    /// Route events after `after_id`, oldest first, and the oldest id still kept:
    /// every event committed before the call.
    async fn events_after(
        &self,
        after_id: i64,
        limit: u32,
    ) -> Result<(Vec<StoredEvent>, Option<i64>), StoreError>;

    /// The newest route event's id.
    async fn last_event_id(&self) -> Result<i64, StoreError>;

    /// Drop the oldest route events beyond the newest `keep`, at most
    /// `at_most` of them; answers how many went. A bounded step, so a long
    /// log is pruned in short writes that others' writes come between.
    async fn prune_events(&self, keep: i64, at_most: i64) -> Result<u64, StoreError>;
}

/// What a pass over many routes at once reads and writes (the restart pass, a
/// replica taking over another's routes): a batch at a time, not a read and a
/// transaction per route.
#[async_trait]
pub trait BatchStore: Send + Sync {
    /// The snapshots of these tasks (the ones that exist), in no particular order.
    async fn get_snapshots(&self, ids: &[TaskId]) -> Result<Vec<Task>, StoreError>;

    /// The unfinished attempt of each of these tasks that has one (should a
    /// task have more than one, the latest comes last).
    async fn unfinished_attempts(
        &self,
        ids: &[TaskId],
    ) -> Result<Vec<(TaskId, AttemptId)>, StoreError>;

    /// Write many transitions at once, each as [`TaskStore::commit`] writes one:
    /// fenced by its own expected generation (one that finds its route at another
    /// generation writes nothing and is answered `None`), its `after` run once it
    /// is durable, its event published. In as few transactions and round trips as
    /// the driver can: transitions that write a route, an attempt's end and an
    /// event (a hold, a stop, a skip); one that starts an attempt, answers or asks
    /// a turn, changes a circuit or fires a deadline is written as `commit` writes
    /// it.
    async fn commit_all(
        &self,
        commits: Vec<(i64, RouteCommit)>,
    ) -> Result<Vec<Option<i64>>, StoreError>;
}

/// The whole store: every aggregate, and the database itself.
#[async_trait]
pub trait Store:
    ProviderStore + ProfileStore + ClientKeyStore + TaskStore + BatchStore + Send + Sync + 'static
{
    /// The latest applied migration: proves the database answers.
    async fn schema_version(&self) -> Result<i64, StoreError>;

    /// Record when this database was first set up; later calls keep the first time.
    async fn init_instance(&self, now: Timestamp) -> Result<Timestamp, StoreError>;

    /// Close every connection (on shutdown).
    async fn close(&self);

    /// Which driver this is: `sqlite` or `postgres`.
    fn driver(&self) -> &'static str;

    /// This replica's name, on a database replicas share.
    fn replica(&self) -> Option<&str> {
        None
    }
}
