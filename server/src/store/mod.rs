//! The durable store: one trait, one driver per database (SQLite now,
//! PostgreSQL for replicas later), one conformance suite run against each.
//!
//! Every write that depends on a read is guarded in SQL: updates name the
//! revision they were computed from (`WHERE id = ? AND revision = ?`), and
//! zero rows is a typed [`StoreError::Stale`], never a silent success.

mod sqlite;

#[cfg(test)]
mod conformance;

use async_trait::async_trait;
use policy::FieldError;

use crate::domain::{Profile, ProfileWrite, Provider, ProviderWrite};

pub use sqlite::SqliteStore;

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
        sent: i64,
        /// The revision in the store.
        current: i64,
    },
    /// The write refers to things that do not exist, or repeats a unique
    /// value: field errors for the caller.
    #[error("invalid references")]
    Invalid(Vec<FieldError>),
    /// The row is still used by others (a provider by profiles).
    #[error("{entity} {id} is used by {users}")]
    InUse {
        /// "provider" or "profile".
        entity: &'static str,
        /// The id.
        id: String,
        /// Who uses it, for people.
        users: String,
    },
    /// The URL names no database this build can open.
    #[error(
        "unsupported database URL {url:?}: expected sqlite://PATH (e.g. sqlite://switchback.db)"
    )]
    UnsupportedUrl {
        /// The URL given.
        url: String,
    },
    /// The database URL could not be parsed.
    #[error("invalid database URL {url:?}: {source}")]
    InvalidUrl {
        /// The URL given.
        url: String,
        /// Why.
        source: sqlx::Error,
    },
    /// The database could not be opened.
    #[error("cannot open database {url:?}: {source}")]
    Open {
        /// The URL given.
        url: String,
        /// Why.
        source: sqlx::Error,
    },
    /// A migration failed.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A stored document does not parse: the database was edited by hand or
    /// by a newer version.
    #[error("corrupt stored {what}: {message}")]
    Corrupt {
        /// What was being read.
        what: &'static str,
        /// Why it does not parse.
        message: String,
    },
    /// The database failed.
    #[error(transparent)]
    Database(#[from] sqlx::Error),
}

/// The durable store of providers and dynamic profiles.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// The latest applied migration: proves the database answers.
    async fn schema_version(&self) -> Result<i64, StoreError>;

    /// Record when this database was first set up; later calls keep the first time.
    async fn init_instance(&self, now_ms: i64) -> Result<i64, StoreError>;

    /// Insert a provider. A name taken (regardless of case) is `Invalid`.
    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError>;

    /// Every provider, by name.
    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError>;

    /// One provider.
    async fn get_provider(&self, id: &str) -> Result<Provider, StoreError>;

    /// Replace a provider if it is still at `expected_revision`.
    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected_revision: i64,
    ) -> Result<Provider, StoreError>;

    /// Delete a provider no profile uses.
    async fn delete_provider(&self, id: &str) -> Result<(), StoreError>;

    /// Insert a profile and its candidates. Unknown providers and a taken
    /// name are `Invalid`; client-sent candidate ids are `Invalid` (a new
    /// profile has none yet).
    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError>;

    /// Every profile, by name, with its candidates in order.
    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError>;

    /// One profile with its candidates in order.
    async fn get_profile(&self, id: &str) -> Result<Profile, StoreError>;

    /// Replace a profile's name and candidates if it is still at
    /// `expected_revision`. Client-sent candidate ids must belong to it.
    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected_revision: i64,
    ) -> Result<Profile, StoreError>;

    /// Delete a profile and its candidates.
    async fn delete_profile(&self, id: &str) -> Result<(), StoreError>;

    /// Close every connection (on shutdown).
    async fn close(&self);
}
