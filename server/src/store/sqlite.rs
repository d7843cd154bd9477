//! The durable store: a SQLite database through sqlx, migrated on open.

use std::str::FromStr;
use std::time::Duration;

use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::SqlitePool;

/// Errors opening or migrating the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The URL names no database this build can open.
    #[error(
        "unsupported database URL {url:?}: expected sqlite://PATH (e.g. sqlite://switchback.db)"
    )]
    UnsupportedUrl { url: String },
    /// The database URL could not be parsed.
    #[error("invalid database URL {url:?}: {source}")]
    InvalidUrl { url: String, source: sqlx::Error },
    /// The database could not be opened.
    #[error("cannot open database {url:?}: {source}")]
    Open { url: String, source: sqlx::Error },
    /// A migration failed.
    #[error("database migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A query failed.
    #[error(transparent)]
    Query(#[from] sqlx::Error),
}

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// The store handle: cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
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
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5));
        let pool = SqlitePoolOptions::new()
            .max_connections(8)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Open {
                url: url.to_string(),
                source,
            })?;
        MIGRATOR.run(&pool).await?;
        Ok(Self { pool })
    }

    /// Record when this database was first set up; later calls keep the first time.
    pub async fn init_instance(&self, now_ms: i64) -> Result<i64, StoreError> {
        sqlx::query(
            "INSERT INTO instance (id, created_at_ms) VALUES (1, ?) ON CONFLICT (id) DO NOTHING",
        )
        .bind(now_ms)
        .execute(&self.pool)
        .await?;
        let created_at_ms: i64 =
            sqlx::query_scalar("SELECT created_at_ms FROM instance WHERE id = 1")
                .fetch_one(&self.pool)
                .await?;
        Ok(created_at_ms)
    }

    /// The latest applied migration's version: proves the database answers.
    pub async fn schema_version(&self) -> Result<i64, StoreError> {
        let version: Option<i64> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success = 1")
                .fetch_one(&self.pool)
                .await?;
        Ok(version.unwrap_or(0))
    }

    /// Close every connection (on shutdown), flushing the write-ahead log.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn creates_migrates_and_reopens_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("new.db").display());
        let store = Store::open(&url).await.unwrap();
        let version = store.schema_version().await.unwrap();
        assert!(version >= 1, "migrations ran: {version}");
        assert_eq!(store.init_instance(1_000).await.unwrap(), 1_000);
        store.close().await;

        let reopened = Store::open(&url).await.unwrap();
        assert_eq!(reopened.schema_version().await.unwrap(), version);
        assert_eq!(
            reopened.init_instance(2_000).await.unwrap(),
            1_000,
            "the first time is kept"
        );
    }

    #[tokio::test]
    async fn a_bad_url_is_a_clear_error() {
        let error = Store::open("switchback.db").await.unwrap_err();
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
        let error = Store::open(&missing_parent).await.unwrap_err();
        assert!(matches!(error, StoreError::Open { .. }), "{error}");
    }
}
