//! Providers in PostgreSQL: the shared statements (`store::shared`), with the
//! row lock a delete takes.

use api::{ProviderId, Revision};
use async_trait::async_trait;

use super::PostgresStore;
use crate::domain::{Provider, ProviderWrite};
use crate::store::rows::Revisioned;
use crate::store::{ProviderStore, StoreError};

type Shared = crate::store::shared::Sql<sqlx::Postgres>;

#[async_trait]
impl ProviderStore for PostgresStore {
    async fn create_provider(&self, write: ProviderWrite) -> Result<Provider, StoreError> {
        let mut tx = self.pool.begin().await?;
        let provider = Shared::insert_provider(&mut tx, &write).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn list_providers(&self) -> Result<Vec<Provider>, StoreError> {
        Shared::providers(&self.pool).await
    }

    async fn get_provider(&self, id: &ProviderId) -> Result<Provider, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Shared::provider(&mut conn, id.as_str()).await
    }

    async fn update_provider(
        &self,
        write: ProviderWrite,
        expected: Revision,
    ) -> Result<Provider, StoreError> {
        let mut tx = self.pool.begin().await?;
        let provider = Shared::update_provider(&mut tx, &write, expected).await?;
        tx.commit().await?;
        Ok(provider)
    }

    async fn delete_provider(&self, id: &ProviderId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Locked first: a profile or task that would start using it waits for
        // this transaction, so what the checks below find holds until it ends.
        sqlx::query("SELECT id FROM providers WHERE id = $1 FOR UPDATE")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        let provider = Shared::provider(&mut tx, id.as_str()).await?;
        Shared::refuse_if_provider_used(&mut tx, &provider).await?;
        Shared::delete(Revisioned::Providers, &mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(())
    }
}
