//! Dynamic profiles and their candidates in PostgreSQL.

use std::collections::{HashMap, HashSet};

use api::{FieldError, ProfileId, Revision, refusals};
use async_trait::async_trait;
use sqlx::PgConnection;

use super::PostgresStore;
use crate::domain::{IdOrigin, Profile, ProfileWrite};
use crate::store::rows::{
    CandidateRow, ProfileRow, Revisioned, candidate_columns, is_unique_violation, profile_columns,
    profile_from_rows, refused, unfinished_users,
};
use crate::store::{ProfileStore, StoreError};

const TABLE: Revisioned = Revisioned::Profiles;

async fn fetch(conn: &mut PgConnection, id: &str) -> Result<Profile, StoreError> {
    let row: Option<ProfileRow> = sqlx::query_as(concat!(
        "SELECT ",
        profile_columns!(),
        " FROM profiles WHERE id = $1"
    ))
    .bind(id)
    .fetch_optional(&mut *conn)
    .await?;
    let row = row.ok_or_else(|| TABLE.not_found(id))?;
    let candidates: Vec<CandidateRow> = sqlx::query_as(concat!(
        "SELECT ",
        candidate_columns!(),
        " FROM candidates WHERE profile_id = $1 ORDER BY position"
    ))
    .bind(id)
    .fetch_all(&mut *conn)
    .await?;
    profile_from_rows(row, candidates)
}

/// Inside a write transaction: every referenced provider exists (one query for
/// all of them, each locked against deletion until the commit), and every
/// client-sent candidate id belongs to this profile (`known_ids`). The errors, in
/// candidate order.
async fn reference_errors(
    conn: &mut PgConnection,
    write: &ProfileWrite,
    known_ids: &HashSet<String>,
) -> Result<Vec<FieldError>, StoreError> {
    let provider_ids: Vec<String> = write
        .candidates
        .iter()
        .map(|(candidate, _)| candidate.provider_id.as_str().to_owned())
        .collect();
    let found: HashSet<String> =
        sqlx::query_scalar("SELECT id FROM providers WHERE id = ANY($1) FOR SHARE")
            .bind(&provider_ids)
            .fetch_all(&mut *conn)
            .await?
            .into_iter()
            .collect();
    let mut errors = Vec::new();
    for (index, (candidate, origin)) in write.candidates.iter().enumerate() {
        if *origin == IdOrigin::Client && !known_ids.contains(candidate.id.as_str()) {
            errors.push(refusals::not_a_candidate_of_this_profile(index));
        }
        if !found.contains(candidate.provider_id.as_str()) {
            errors.push(refusals::no_such_provider(index));
        }
    }
    Ok(errors)
}

/// Whether another profile has this name (regardless of case).
async fn name_taken(conn: &mut PgConnection, write: &ProfileWrite) -> Result<bool, StoreError> {
    Ok(sqlx::query_scalar::<_, i64>(
        "SELECT 1::bigint FROM profiles WHERE name_key = $1 AND id <> $2",
    )
    .bind(write.name.to_lowercase())
    .bind(write.id.as_str())
    .fetch_optional(&mut *conn)
    .await?
    .is_some())
}

async fn insert_candidates(
    conn: &mut PgConnection,
    write: &ProfileWrite,
) -> Result<(), StoreError> {
    for (position, (candidate, _)) in write.candidates.iter().enumerate() {
        sqlx::query(
            "INSERT INTO candidates (id, profile_id, position, provider_id, model, enabled, max_tokens, \
             escalation_json, policy_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
        )
        .bind(candidate.id.as_str())
        .bind(write.id.as_str())
        .bind(i64::try_from(position).unwrap_or(i64::MAX))
        .bind(candidate.provider_id.as_str())
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

/// A unique violation on the name (another replica took it between the check and
/// the write) is the same refusal as one the check found.
fn name_race(error: sqlx::Error) -> StoreError {
    if is_unique_violation(&error) {
        TABLE.name_taken()
    } else {
        error.into()
    }
}

#[async_trait]
impl ProfileStore for PostgresStore {
    async fn create_profile(&self, write: ProfileWrite) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let taken = name_taken(&mut tx, &write).await?;
        let references = reference_errors(&mut tx, &write, &HashSet::new()).await?;
        refused(taken, references)?;
        sqlx::query(
            "INSERT INTO profiles (id, name, name_key, revision, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, 1, $4, $4)",
        )
        .bind(write.id.as_str())
        .bind(&write.name)
        .bind(write.name.to_lowercase())
        .bind(write.now.as_millis())
        .execute(&mut *tx)
        .await
        .map_err(name_race)?;
        insert_candidates(&mut tx, &write).await?;
        let profile = fetch(&mut tx, write.id.as_str()).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn list_profiles(&self) -> Result<Vec<Profile>, StoreError> {
        let mut tx = self.pool.begin().await?;
        let rows: Vec<ProfileRow> = sqlx::query_as(concat!(
            "SELECT ",
            profile_columns!(),
            " FROM profiles ORDER BY name_key, id"
        ))
        .fetch_all(&mut *tx)
        .await?;
        let candidates: Vec<CandidateRow> = sqlx::query_as(concat!(
            "SELECT ",
            candidate_columns!(),
            " FROM candidates ORDER BY profile_id, position"
        ))
        .fetch_all(&mut *tx)
        .await?;
        tx.commit().await?;
        let mut by_profile: HashMap<String, Vec<CandidateRow>> = HashMap::new();
        for candidate in candidates {
            by_profile
                .entry(candidate.profile_id.clone())
                .or_default()
                .push(candidate);
        }
        rows.into_iter()
            .map(|row| {
                let mine = by_profile.remove(&row.id).unwrap_or_default();
                profile_from_rows(row, mine)
            })
            .collect()
    }

    async fn get_profile(&self, id: &ProfileId) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        let profile = fetch(&mut tx, id.as_str()).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn update_profile(
        &self,
        write: ProfileWrite,
        expected: Revision,
    ) -> Result<Profile, StoreError> {
        let mut tx = self.pool.begin().await?;
        // The fence first: it locks the row, so what is checked below holds until
        // the commit.
        let updated = sqlx::query(
            "UPDATE profiles SET revision = revision + 1, updated_at_ms = $1 \
             WHERE id = $2 AND revision = $3",
        )
        .bind(write.now.as_millis())
        .bind(write.id.as_str())
        .bind(expected.get())
        .execute(&mut *tx)
        .await?;
        if updated.rows_affected() == 0 {
            return Err(super::stale_or_missing(TABLE, &mut tx, write.id.as_str(), expected).await);
        }
        let taken = name_taken(&mut tx, &write).await?;
        let known_ids: HashSet<String> =
            sqlx::query_scalar("SELECT id FROM candidates WHERE profile_id = $1")
                .bind(write.id.as_str())
                .fetch_all(&mut *tx)
                .await?
                .into_iter()
                .collect();
        let references = reference_errors(&mut tx, &write, &known_ids).await?;
        refused(taken, references)?;
        sqlx::query("UPDATE profiles SET name = $1, name_key = $2 WHERE id = $3")
            .bind(&write.name)
            .bind(write.name.to_lowercase())
            .bind(write.id.as_str())
            .execute(&mut *tx)
            .await
            .map_err(name_race)?;
        sqlx::query("DELETE FROM candidates WHERE profile_id = $1")
            .bind(write.id.as_str())
            .execute(&mut *tx)
            .await?;
        insert_candidates(&mut tx, &write).await?;
        let profile = fetch(&mut tx, write.id.as_str()).await?;
        tx.commit().await?;
        Ok(profile)
    }

    async fn delete_profile(&self, id: &ProfileId) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let name: Option<String> =
            sqlx::query_scalar("SELECT name FROM profiles WHERE id = $1 FOR UPDATE")
                .bind(id.as_str())
                .fetch_optional(&mut *tx)
                .await?;
        let Some(name) = name else {
            return Err(TABLE.not_found(id.as_str()));
        };
        let unfinished = super::tasks::unfinished_tasks_using_profile(&mut tx, id.as_str()).await?;
        if unfinished > 0 {
            return Err(StoreError::InUse {
                entity: TABLE.entity(),
                name,
                users: unfinished_users(unfinished),
            });
        }
        sqlx::query("DELETE FROM profiles WHERE id = $1")
            .bind(id.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(())
    }
}
