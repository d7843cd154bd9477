//! Dynamic profiles and their candidates in SQLite: the shared statements
//! (`store::shared`) in a write transaction, which holds the database's write
//! lock, so what the checks find holds until the commit.

use std::collections::HashSet;

use api::{ProfileId, Revision};
use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::SqliteStore;
use crate::domain::{Profile, ProfileWrite};
use crate::store::rows::Revisioned;
use crate::store::{ProfileStore, StoreError};

type Shared = crate::store::shared::Sql<sqlx::Sqlite>;

/// The providers `write`'s candidates name that exist (one query for all).
async fn present_providers(
    conn: &mut SqliteConnection,
    write: &ProfileWrite,
) -> Result<HashSet<String>, StoreError> {
    let ids: Vec<&str> = write
        .candidates
        .iter()
        .map(|(candidate, _)| candidate.provider_id.as_str())
        .collect();
    let present: Vec<String> = sqlx::query_scalar(
        "SELECT id FROM providers WHERE id IN (SELECT value FROM json_each($1))",
    )
    .bind(serde_json::to_string(&ids).expect("ids serialize"))
    .fetch_all(&mut *conn)
    .await?;
    Ok(present.into_iter().collect())
}

#[async_trait]
impl ProfileStore for SqliteStore {
    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError> {
        let mut tx = self.write().await?;
        let present = present_providers(&mut tx, &write).await?;
        let profile = Shared::insert_profile(&mut tx, &write, &present).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let mut tx = self.read().await?;
        let profiles = Shared::profiles(&mut tx).await?;
        tx.commit().await?;
        Ok(profiles)
    }

    async fn get_profile(&self, id: &ProfileId) -> Result<Profile, StoreError> {
        let mut tx = self.read().await?;
        let profile = Shared::profile(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn profile_by_name(&self, name: &str) -> Result<Profile, StoreError> {
        let mut tx = self.read().await?;
        let profile = Shared::profile_by_name(&mut tx, name).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected: Revision,
    ) -> Result<Profile, StoreError> {
        let mut tx = self.write().await?;
        let present = present_providers(&mut tx, &write).await?;
        let profile = Shared::update_profile(&mut tx, &write, expected, &present).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn delete_profile(&self, id: &ProfileId) -> Result<(), StoreError> {
        let mut tx = self.write().await?;
        let profile = Shared::profile(&mut tx, id.as_str()).await?;
        Shared::refuse_if_profile_used(&mut tx, id.as_str(), profile.name).await?;
        Shared::delete(Revisioned::Profiles, &mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(())
    }
}
