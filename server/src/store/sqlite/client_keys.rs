//! Client keys in SQLite: the shared statements (`store::client_keys`), the
//! writes in a write transaction.

use api::{ClientKeyId, Timestamp};
use async_trait::async_trait;

use super::SqliteStore;
use crate::domain::{ClientKey, ClientKeyWrite};
use crate::store::client_keys::ClientKeySql;
use crate::store::{ClientKeyStore, StoreError};

type Sql = ClientKeySql<sqlx::Sqlite>;

#[async_trait]
impl ClientKeyStore for SqliteStore {
    async fn create_client_key(&self, write: ClientKeyWrite) -> Result<ClientKey, StoreError> {
        let mut tx = self.write().await?;
        let key = Sql::create(&mut tx, write).await?;
        tx.commit().await?;
        Ok(key)
    }

    async fn list_client_keys(&self) -> Result<Vec<ClientKey>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Sql::list(&mut conn).await
    }

    async fn client_key_by_digest(&self, digest: &str) -> Result<Option<ClientKey>, StoreError> {
        let mut conn = self.pool.acquire().await?;
        Sql::by_digest(&mut conn, digest).await
    }

    async fn revoke_client_key(
        &self,
        id: &ClientKeyId,
        now: Timestamp,
    ) -> Result<ClientKey, StoreError> {
        let mut tx = self.write().await?;
        let key = Sql::revoke(&mut tx, id, now).await?;
        tx.commit().await?;
        Ok(key)
    }
}
