//! Dynamic profiles and their candidates in PostgreSQL: the shared statements
//! (`store::shared`), with the row locks that keep what a write checked true
//! until its commit.

use std::collections::HashSet;

use api::{ProfileId, Revision};
use async_trait::async_trait;
use sqlx::PgConnection;

use super::PostgresStore;
use crate::domain::{Profile, ProfileWrite};
use crate::store::rows::Revisioned;
use crate::store::{ProfileStore, StoreError};

type Shared = crate::store::shared::Sql<sqlx::Postgres>;

/// The providers `write`'s candidates name that exist (one query for all),
/// each locked against deletion until the commit.
async fn present_providers(
    conn: &mut PgConnection,
    write: &ProfileWrite,
) -> Result<HashSet<String>, StoreError> {
    let ids: Vec<String> = write
        .candidates
        .iter()
        .map(|(candidate, _)| candidate.provider_id.as_str().to_owned())
        .collect();
    let present: Vec<String> =
        sqlx::query_scalar("SELECT id FROM providers WHERE id = ANY($1) FOR SHARE")
            .bind(&ids)
            .fetch_all(&mut *conn)
            .await?;
    Ok(present.into_iter().collect())
}

#[async_trait]
impl ProfileStore for PostgresStore {
    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let present = present_providers(&mut tx, &write).await?;
        let profile = Shared::insert_profile(&mut tx, &write, &present).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let profiles = Shared::profiles(&mut tx).await?;
        tx.commit().await?;
        Ok(profiles)
    }

    async fn get_profile(&self, id: &ProfileId) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let profile = Shared::profile(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn profile_by_name(&self, name: &str) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let profile = Shared::profile_by_name(&mut tx, name).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected: Revision,
    ) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let present = present_providers(&mut tx, &write).await?;
        let profile = Shared::update_profile(&mut tx, &write, expected, &present).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn delete_profile(&self, id: &ProfileId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        // Locked: a task that would start on it waits for this.
        sqlx::query("SELECT id FROM profiles WHERE id = $1 FOR UPDATE")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        let profile = Shared::profile(&mut tx, id.as_str()).await?;
        Shared::refuse_if_profile_used(&mut tx, id.as_str(), profile.name).await?;
        Shared::delete(Revisioned::Profiles, &mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(())
    }
}
