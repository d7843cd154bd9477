//! The SQLite driver: a file through sqlx, migrated on open.
//!
//! Writes run in `BEGIN IMMEDIATE` transactions, so a transaction holds the
//! write lock before it reads anything it then depends on; the revision
//! fence in each UPDATE makes a stale write fail rather than win.

use std::collections::HashSet;
use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use policy::{ErrorCode, FieldError, FieldPath};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{FromRow, SqliteConnection, SqlitePool};

use super::{Store, StoreError};
use crate::domain::{Candidate, IdOrigin, Profile, ProfileWrite, Provider, ProviderWrite};

/// The migrations in `migrations/`, embedded in the binary.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// The SQLite store handle: cheap to clone.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pool: SqlitePool,
}

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
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Full)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
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
}

#[derive(FromRow)]
struct ProviderRow {
    id: String,
    name: String,
    kind: String,
    family: String,
    base_url: String,
    api_key_env: Option<String>,
    revision: i64,
    created_at_ms: i64,
    updated_at_ms: i64,
}

impl ProviderRow {
    fn into_domain(self) -> Result<Provider, StoreError> {
        Ok(Provider {
            kind: parse_enum("provider kind", &self.kind)?,
            family: parse_enum("provider family", &self.family)?,
            id: self.id,
            name: self.name,
            base_url: self.base_url,
            api_key_env: self.api_key_env,
            revision: self.revision,
            created_at_ms: self.created_at_ms,
            updated_at_ms: self.updated_at_ms,
        })
    }
}

#[derive(FromRow)]
struct ProfileRow {
    id: String,
    name: String,
    revision: i64,
    created_at_ms: i64,
    updated_at_ms: i64,
}

#[derive(FromRow)]
struct CandidateRow {
    id: String,
    profile_id: String,
    provider_id: String,
    model: String,
    enabled: bool,
    max_tokens: i64,
    escalation_json: String,
    policy_json: String,
}

impl CandidateRow {
    fn into_domain(self) -> Result<Candidate, StoreError> {
        let corrupt = |what: &'static str| {
            move |error: serde_json::Error| StoreError::Corrupt {
                what,
                message: error.to_string(),
            }
        };
        Ok(Candidate {
            max_tokens: u32::try_from(self.max_tokens).map_err(|_| StoreError::Corrupt {
                what: "max_tokens",
                message: self.max_tokens.to_string(),
            })?,
            escalation: serde_json::from_str(&self.escalation_json)
                .map_err(corrupt("escalation"))?,
            policy: serde_json::from_str(&self.policy_json).map_err(corrupt("policy"))?,
            id: self.id,
            provider_id: self.provider_id,
            model: self.model,
            enabled: self.enabled,
        })
    }
}

/// Kinds and families are stored by their JSON names.
fn parse_enum<T: serde::de::DeserializeOwned>(
    what: &'static str,
    text: &str,
) -> Result<T, StoreError> {
    serde_json::from_value(serde_json::Value::String(text.to_owned())).map_err(|error| {
        StoreError::Corrupt {
            what,
            message: error.to_string(),
        }
    })
}

fn enum_name<T: serde::Serialize>(value: &T) -> String {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => name,
        _ => unreachable!("kinds and families serialize as strings"),
    }
}

fn is_unique_violation(error: &sqlx::Error) -> bool {
    error
        .as_database_error()
        .is_some_and(|error| error.is_unique_violation())
}

fn name_taken(entity: &str) -> StoreError {
    StoreError::Invalid(vec![FieldError::new(
        &FieldPath::root().field("name"),
        ErrorCode::Unique,
        format!("another {entity} already has this name"),
    )])
}

async fn fetch_provider(conn: &mut SqliteConnection, id: &str) -> Result<Provider, StoreError> {
    let row: Option<ProviderRow> = sqlx::query_as(
        "SELECT id, name, kind, family, base_url, api_key_env, revision, created_at_ms, updated_at_ms \
         FROM providers WHERE id = ?",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.ok_or_else(|| StoreError::NotFound {
        entity: "provider",
        id: id.to_owned(),
    })?
    .into_domain()
}

async fn fetch_profile(conn: &mut SqliteConnection, id: &str) -> Result<Profile, StoreError> {
    let row: Option<ProfileRow> = sqlx::query_as(
        "SELECT id, name, revision, created_at_ms, updated_at_ms FROM profiles WHERE id = ?",
    )
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let row = row.ok_or_else(|| StoreError::NotFound {
        entity: "profile",
        id: id.to_owned(),
    })?;
    let candidates: Vec<CandidateRow> = sqlx::query_as(
        "SELECT id, profile_id, provider_id, model, enabled, max_tokens, escalation_json, policy_json \
         FROM candidates WHERE profile_id = ? ORDER BY position",
    )
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    profile_from_rows(row, candidates)
}

fn profile_from_rows(
    row: ProfileRow,
    candidates: Vec<CandidateRow>,
) -> Result<Profile, StoreError> {
    Ok(Profile {
        candidates: candidates
            .into_iter()
            .map(CandidateRow::into_domain)
            .collect::<Result<_, _>>()?,
        id: row.id,
        name: row.name,
        revision: row.revision,
        created_at_ms: row.created_at_ms,
        updated_at_ms: row.updated_at_ms,
    })
}

/// Inside a write transaction: every referenced provider exists, and every
/// client-sent candidate id belongs to this profile (`known_ids`).
async fn check_references(
    conn: &mut SqliteConnection,
    write: &ProfileWrite,
    known_ids: &HashSet<String>,
) -> Result<(), StoreError> {
    let mut errors = Vec::new();
    let candidates = FieldPath::root().field("candidates");
    for (index, (candidate, origin)) in write.candidates.iter().enumerate() {
        if *origin == IdOrigin::Client && !known_ids.contains(&candidate.id) {
            errors.push(FieldError::new(
                &candidates.index(index).field("id"),
                ErrorCode::NotFound,
                "is not a candidate of this profile: leave the id out to add a new candidate",
            ));
        }
        let exists: Option<i64> = sqlx::query_scalar("SELECT 1 FROM providers WHERE id = ?")
            .bind(&candidate.provider_id)
            .fetch_optional(&mut *conn)
            .await?;
        if exists.is_none() {
            errors.push(FieldError::new(
                &candidates.index(index).field("provider_id"),
                ErrorCode::NotFound,
                "names no provider",
            ));
        }
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(StoreError::Invalid(errors))
    }
}

async fn insert_candidates(
    conn: &mut SqliteConnection,
    write: &ProfileWrite,
) -> Result<(), StoreError> {
    for (position, (candidate, _)) in write.candidates.iter().enumerate() {
        sqlx::query(
            "INSERT INTO candidates (id, profile_id, position, provider_id, model, enabled, max_tokens, escalation_json, policy_json) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(&candidate.id)
        .bind(&write.id)
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(&candidate.provider_id)
        .bind(&candidate.model)
        .bind(candidate.enabled)
        .bind(i64::from(candidate.max_tokens))
        .bind(serde_json::to_string(&candidate.escalation).expect("escalation serializes"))
        .bind(serde_json::to_string(&candidate.policy).expect("policy serializes"))
        .execute(&mut *conn)
        .await?;
    }
    Ok(())
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

    async fn init_instance(&self, now_ms: i64) -> Result<i64, StoreError> {
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

    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let inserted = sqlx::query(
            "INSERT INTO providers (id, name, name_key, kind, family, base_url, api_key_env, revision, created_at_ms, updated_at_ms) \
             VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
        )
        .bind(&write.id)
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(&write.base_url)
        .bind(&write.api_key_env)
        .bind(write.now_ms)
        .bind(write.now_ms)
        .execute(&mut *conn)
        .await;
        match inserted {
            Err(error) if is_unique_violation(&error) => Err(name_taken("provider")),
            Err(error) => Err(error.into()),
            Ok(_) => fetch_provider(&mut conn, &write.id).await,
        }
    }

    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError> {
        let rows: Vec<ProviderRow> = sqlx::query_as(
            "SELECT id, name, kind, family, base_url, api_key_env, revision, created_at_ms, updated_at_ms \
             FROM providers ORDER BY name_key, id",
        )
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(ProviderRow::into_domain).collect()
    }

    async fn get_provider(&self, id: &str) -> Result<Provider, StoreError> {
        let mut conn = self.pool.acquire().await?;
        fetch_provider(&mut conn, id).await
    }

    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected_revision: i64,
    ) -> Result<Provider, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let updated = sqlx::query(
            "UPDATE providers SET name = ?, name_key = ?, kind = ?, family = ?, base_url = ?, api_key_env = ?, \
             revision = revision + 1, updated_at_ms = ? WHERE id = ? AND revision = ?",
        )
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(&write.base_url)
        .bind(&write.api_key_env)
        .bind(write.now_ms)
        .bind(&write.id)
        .bind(expected_revision)
        .execute(&mut *tx)
        .await;
        match updated {
            Err(error) if is_unique_violation(&error) => return Err(name_taken("provider")),
            Err(error) => return Err(error.into()),
            Ok(result) if result.rows_affected() == 0 => {
                let current = fetch_provider(&mut tx, &write.id).await?;
                return Err(StoreError::Stale {
                    sent: expected_revision,
                    current: current.revision,
                });
            }
            Ok(_) => {}
        }
        let provider = fetch_provider(&mut tx, &write.id).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn delete_provider(&self, id: &str) -> Result<(), StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let users: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT profiles.name FROM candidates JOIN profiles ON profiles.id = candidates.profile_id \
             WHERE candidates.provider_id = ? ORDER BY profiles.name",
        )
        .bind(id)
        .fetch_all(&mut *tx)
        .await?;
        if !users.is_empty() {
            return Err(StoreError::InUse {
                entity: "provider",
                id: id.to_owned(),
                users: format!("the profiles {}", users.join(", ")),
            });
        }
        let deleted = sqlx::query("DELETE FROM providers WHERE id = ?")
            .bind(id)
            .execute(&mut *tx)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                entity: "provider",
                id: id.to_owned(),
            });
        }
        tx.commit().await?;
        Ok(())
    }

    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let inserted = sqlx::query(
            "INSERT INTO profiles (id, name, name_key, revision, created_at_ms, updated_at_ms) VALUES (?, ?, ?, 1, ?, ?)",
        )
        .bind(&write.id)
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(write.now_ms)
        .bind(write.now_ms)
        .execute(&mut *tx)
        .await;
        match inserted {
            Err(error) if is_unique_violation(&error) => return Err(name_taken("profile")),
            Err(error) => return Err(error.into()),
            Ok(_) => {}
        }
        check_references(&mut tx, &write, &HashSet::new()).await?;
        insert_candidates(&mut tx, &write).await?;
        let profile = fetch_profile(&mut tx, &write.id).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        let rows: Vec<ProfileRow> = sqlx::query_as(
            "SELECT id, name, revision, created_at_ms, updated_at_ms FROM profiles ORDER BY name_key, id",
        )
        .fetch_all(&mut *conn)
        .await?;
        let mut candidates: Vec<CandidateRow> = sqlx::query_as(
            "SELECT id, profile_id, provider_id, model, enabled, max_tokens, escalation_json, policy_json \
             FROM candidates ORDER BY profile_id, position",
        )
        .fetch_all(&mut *conn)
        .await?;
        rows.into_iter()
            .map(|row| {
                let mine: Vec<CandidateRow>;
                (mine, candidates) = candidates.drain(..).partition(|c| c.profile_id == row.id);
                profile_from_rows(row, mine)
            })
            .collect()
    }

    async fn get_profile(&self, id: &str) -> Result<Profile, StoreError> {
        let mut conn = self.pool.acquire().await?;
        fetch_profile(&mut conn, id).await
    }

    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected_revision: i64,
    ) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin_with("BEGIN IMMEDIATE").await?;
        let updated = sqlx::query(
            "UPDATE profiles SET name = ?, name_key = ?, revision = revision + 1, updated_at_ms = ? \
             WHERE id = ? AND revision = ?",
        )
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(write.now_ms)
        .bind(&write.id)
        .bind(expected_revision)
        .execute(&mut *tx)
        .await;
        match updated {
            Err(error) if is_unique_violation(&error) => return Err(name_taken("profile")),
            Err(error) => return Err(error.into()),
            Ok(result) if result.rows_affected() == 0 => {
                let current: Option<i64> =
                    sqlx::query_scalar("SELECT revision FROM profiles WHERE id = ?")
                        .bind(&write.id)
                        .fetch_optional(&mut *tx)
                        .await?;
                return Err(match current {
                    None => StoreError::NotFound {
                        entity: "profile",
                        id: write.id.clone(),
                    },
                    Some(current) => StoreError::Stale {
                        sent: expected_revision,
                        current,
                    },
                });
            }
            Ok(_) => {}
        }
        let known_ids: HashSet<String> =
            sqlx::query_scalar("SELECT id FROM candidates WHERE profile_id = ?")
                .bind(&write.id)
                .fetch_all(&mut *tx)
                .await?
                .into_iter()
                .collect();
        check_references(&mut tx, &write, &known_ids).await?;
        sqlx::query("DELETE FROM candidates WHERE profile_id = ?")
            .bind(&write.id)
            .execute(&mut *tx)
            .await?;
        insert_candidates(&mut tx, &write).await?;
        let profile = fetch_profile(&mut tx, &write.id).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn delete_profile(&self, id: &str) -> Result<(), StoreError> {
        let deleted = sqlx::query("DELETE FROM profiles WHERE id = ?")
            .bind(id)
            .execute(&self.pool)
            .await?;
        if deleted.rows_affected() == 0 {
            return Err(StoreError::NotFound {
                entity: "profile",
                id: id.to_owned(),
            });
        }
        Ok(())
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(store.init_instance(1_000).await.unwrap(), 1_000);
        store.close().await;

        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(reopened.schema_version().await.unwrap(), version);
        assert_eq!(
            reopened.init_instance(2_000).await.unwrap(),
            1_000,
            "the first time is kept"
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

    #[tokio::test]
    async fn conformance_on_a_file() {
        let (_dir, _url, store) = open_temp().await;
        super::super::conformance::run_all(&store).await;
    }

    #[tokio::test]
    async fn everything_survives_reopening_the_file() {
        let (_dir, url, store) = open_temp().await;
        let profile = super::super::conformance::seed_profile(&store).await;
        store.close().await;
        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(reopened.get_profile(&profile.id).await.unwrap(), profile);
    }

    #[tokio::test]
    async fn concurrent_updates_exactly_one_wins() {
        let (_dir, _url, store) = open_temp().await;
        super::super::conformance::concurrent_updates_exactly_one_wins(&store).await;
    }
}
