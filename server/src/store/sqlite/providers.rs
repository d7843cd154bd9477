//! Providers in SQLite: the shared statements (`store::shared`) in a write
//! transaction, and the provider read every dispatch makes, in place.

use api::{ProviderId, Revision};
use async_trait::async_trait;

use super::SqliteStore;
use crate::domain::{Provider, ProviderWrite};
use crate::store::rows::{ProviderRow, Revisioned, provider_columns};
use crate::store::{ProviderStore, StoreError};

const TABLE: Revisioned = Revisioned::Providers;

type Shared = crate::store::shared::Sql<sqlx::Sqlite>;

#[async_trait]
impl ProviderStore for SqliteStore {
    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError> {
        let mut tx = self.write().await?;
        let provider = Shared::insert_provider(&mut tx, &write).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError> {
        Shared::providers(&self.pool).await
    }

    async fn get_provider(&self, id: &ProviderId) -> Result<Provider, StoreError> {
        // Read for every dispatch: in place (see `reader`).
        self.readers.read(|connection| {
            use rusqlite::OptionalExtension;
            let row = connection
                .prepare_cached(concat!(
                    "SELECT ",
                    provider_columns!(),
                    " FROM providers WHERE id = ?"
                ))?
                .query_row([id.as_str()], ProviderRow::from_rusqlite)
                .optional()?;
            row.ok_or_else(|| TABLE.not_found(id.as_str()))?
                .into_domain()
        })
    }

    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected: Revision,
    ) -> Result<Provider, StoreError> {
        let mut tx = self.write().await?;
        let provider = Shared::update_provider(&mut tx, &write, expected).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn delete_provider(&self, id: &ProviderId) -> Result<(), StoreError> {
        let mut tx = self.write().await?;
        let provider = Shared::provider(&mut tx, id.as_str()).await?;
        Shared::refuse_if_provider_used(&mut tx, &provider).await?;
        Shared::delete(TABLE, &mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(())
    }
}
