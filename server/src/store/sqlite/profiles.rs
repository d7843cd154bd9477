//! Dynamic profiles and their candidates in SQLite: the shared statements
//! (`store::shared`) in a write transaction, which holds the database's write
//! lock, so what the checks find holds until the commit.

use std::collections::HashSet;

use api::{ProfileId, Revision};
use async_trait::async_trait;
use sqlx::SqliteConnection;

use super::SqliteStore;
use crate::domain::{Profile, ProfileWrite};
use crate::store::rows::{CandidateRow, ProfileRow, Revisioned, profile_from_rows};
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
        // Read for every gateway call: in place (see `reader`), one statement
        // (one snapshot) for the profile and its candidates.
        self.readers.read(|connection| {
            let mut statement = connection.prepare_cached(
                "SELECT p.id, p.name, p.revision, p.gateway_deadline_s, p.created_at_ms, \
                 p.updated_at_ms, c.id, c.profile_id, c.provider_id, c.model, c.enabled, \
                 c.max_tokens, c.escalation_json, c.policy_json \
                 FROM profiles p LEFT JOIN candidates c ON c.profile_id = p.id \
                 WHERE p.name_key = ? ORDER BY c.position",
            )?;
            let mut rows = statement.query([name.to_lowercase()])?;
            let mut profile = None;
            let mut candidates = Vec::new();
            while let Some(row) = rows.next()? {
                if profile.is_none() {
                    profile = Some(ProfileRow::from_rusqlite(row, 0)?);
                }
                candidates.extend(CandidateRow::from_rusqlite(row, 6)?);
            }
            let profile = profile.ok_or_else(|| Revisioned::Profiles.not_found(name))?;
            profile_from_rows(profile, candidates)
        })
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
