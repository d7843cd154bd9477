//! Providers in PostgreSQL.

use api::{ProviderId, Revision};
use async_trait::async_trait;
use sqlx::PgConnection;

use super::PostgresStore;
use crate::domain::{Provider, ProviderWrite};
use crate::store::rows::{
    ProviderRow, Revisioned, enum_name, is_unique_violation, provider_columns, script_json,
    timeouts_json, unfinished_users,
};
use crate::store::{ProviderStore, StoreError};

const TABLE: Revisioned = Revisioned::Providers;

async fn fetch(conn: &mut PgConnection, id: &str) -> Result<Provider, StoreError> {
    let row: Option<ProviderRow> = sqlx::query_as(concat!(
        "SELECT ",
        provider_columns!(),
        " FROM providers WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    row.ok_or_else(|| TABLE.not_found(id))?.into_domain()
}

#[async_trait]
impl ProviderStore for PostgresStore {
    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError> {
        let mut tx = self.pool.begin().await?;
        let inserted = sqlx::query(
            "INSERT INTO providers (id, name, name_key, kind, family, base_url, api_key_env, timeouts_json, \
             script_json, revision, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 1, $10, $10) ON CONFLICT (name_key) DO NOTHING",
        )
        .bind(write.id.as_str())
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(&write.base_url)
        .bind(&write.api_key_env)
        .bind(timeouts_json(&write))
        .bind(script_json(&write))
        .bind(write.now.as_millis())
        .execute(&mut *tx)
        .await?;
        if inserted.rows_affected() == 0 {
            return Err(TABLE.name_taken());
        }
        let provider = fetch(&mut tx, write.id.as_str()).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError> {
        let rows: Vec<ProviderRow> = sqlx::query_as(concat!(
            "SELECT ",
            provider_columns!(),
            " FROM providers ORDER BY name_key, id"
        ))
        .fetch_all(&self.pool)
        .await?;
        rows.into_iter().map(ProviderRow::into_domain).collect()
    }

    async fn get_provider(&self, id: &ProviderId) -> Result<Provider, StoreError> {
        let mut conn = self.pool.acquire().await?;
        fetch(&mut conn, id.as_str()).await
    }

    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected: Revision,
    ) -> Result<Provider, StoreError> {
        let mut tx = self.pool.begin().await?;
        let updated = sqlx::query(
            "UPDATE providers SET name = $1, name_key = $2, kind = $3, family = $4, base_url = $5, \
             api_key_env = $6, timeouts_json = COALESCE($7, timeouts_json), \
             script_json = CASE WHEN $3 = 'simulated' THEN COALESCE($8, script_json) ELSE NULL END, \
             revision = revision + 1, updated_at_ms = $9 WHERE id = $10 AND revision = $11",
        )
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(&write.base_url)
        .bind(&write.api_key_env)
        .bind(timeouts_json(&write))
        .bind(script_json(&write))
        .bind(write.now.as_millis())
        .bind(write.id.as_str())
        .bind(expected.get())
        .execute(&mut *tx)
        .await;
        match updated {
            Err(error) if is_unique_violation(&error) => return Err(TABLE.name_taken()),
            Err(error) => return Err(error.into()),
            Ok(result) if result.rows_affected() == 0 => {
                return Err(
                    super::stale_or_missing(TABLE, &mut tx, write.id.as_str(), expected).await,
                );
            }
            Ok(_) => {}
        }
        let provider = fetch(&mut tx, write.id.as_str()).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn delete_provider(&self, id: &ProviderId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Locked: a profile or task that would start using it waits for this.
        let provider = fetch(&mut tx, id.as_str()).await?;
        sqlx::query("SELECT id FROM providers WHERE id = $1 FOR UPDATE")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        let users: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT profiles.name FROM candidates JOIN profiles ON profiles.id = candidates.profile_id \
             WHERE candidates.provider_id = $1 ORDER BY profiles.name",
        )
        .bind(id.as_str())
        .fetch_all(&mut *tx)
        .await?;
        if !users.is_empty() {
            return Err(StoreError::InUse {
                entity: TABLE.entity(),
                name: provider.name,
                users: format!("the profiles {}", users.join(", ")),
            });
        }
        let unfinished =
            super::tasks::unfinished_tasks_using_provider(&mut tx, id.as_str()).await?;
        if unfinished > 0 {
            return Err(StoreError::InUse {
                entity: TABLE.entity(),
                name: provider.name,
                users: unfinished_users(unfinished),
            });
        }
        sqlx::query("DELETE FROM providers WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}
