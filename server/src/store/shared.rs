//! The reads and statements of providers and profiles that are the same on
//! both drivers, written once. They number their parameters `$1`, `$2`, …,
//! which PostgreSQL requires and SQLite reads the same way (sqlx binds a
//! `$n` parameter to the n-th value on both).
//!
//! What differs by driver stays in each driver's `providers.rs` and
//! `profiles.rs`: how a write transaction begins, how a taken name is found
//! (SQLite's failed insert, PostgreSQL's check under row locks), and the locks
//! PostgreSQL takes so a profile or task cannot start using a provider being
//! deleted.

use std::collections::{HashMap, HashSet};
use std::marker::PhantomData;

use api::{Revision, refusals};
use sqlx::database::HasStatementCache;
use sqlx::{Database, Decode, Encode, Executor, FromRow, Pool, Type};

use super::StoreError;
use super::rows::{
    self, CandidateRow, ProfileRow, ProviderRow, Revisioned, candidate_columns, cli_json,
    enum_name, profile_columns, profile_from_rows, provider_columns, script_json, timeouts_json,
    unfinished_users,
};
use crate::domain::{IdOrigin, Profile, ProfileWrite, Provider, ProviderWrite};

/// The states an unfinished task's route can be in, for `concat!`.
macro_rules! unfinished {
    () => {
        "('queued', 'running', 'retry_wait', 'waiting_for_reset', 'retrying', 'held')"
    };
}

/// How many routes are unfinished, read through the index on their state.
pub(super) const COUNT_OPEN_ROUTES: &str =
    concat!("SELECT COUNT(*) FROM routes WHERE state IN ", unfinished!());

/// The routes that need a person or wait for a deadline, counted by state through the
/// index on their state.
pub(super) const COUNT_NEEDING_A_PERSON: &str = "SELECT state, COUNT(*) FROM routes \
     WHERE state IN ('held', 'retry_wait', 'waiting_for_reset') GROUP BY state";

/// The routes of the tasks created at or after `$1`, counted by state: read through
/// the index on the tasks' creation time, as many rows as tasks in the window.
pub(super) const COUNT_CREATED_SINCE: &str = "SELECT routes.state, COUNT(*) FROM tasks \
     JOIN routes ON routes.task_id = tasks.id WHERE tasks.created_at_ms >= $1 GROUP BY routes.state";

/// Every shared circuit, the soonest to half-open first.
pub(super) const LIST_CIRCUITS: &str = "SELECT provider_id, model, code, until_ms, probe_task_id, \
     opened_at_ms FROM circuits ORDER BY until_ms, provider_id, model";

/// What is paused, oldest first.
pub(super) const LIST_PAUSES: &str = "SELECT pauses.scope, pauses.paused_at_ms, providers.name \
     FROM pauses LEFT JOIN providers ON providers.id = pauses.scope \
     ORDER BY pauses.paused_at_ms, pauses.scope";

/// Pause `$1` (`''`: everything) since `$2`, unless it is paused already.
pub(super) const PAUSE: &str =
    "INSERT INTO pauses (scope, paused_at_ms) VALUES ($1, $2) ON CONFLICT (scope) DO NOTHING";

/// Resume `$1`.
pub(super) const RESUME: &str = "DELETE FROM pauses WHERE scope = $1";

/// A pause or a resume, recorded: `$1` the scope, `$2` `paused` or `resumed`, `$3` when.
pub(super) const RECORD_PAUSE: &str =
    "INSERT INTO pause_history (scope, kind, at_ms) VALUES ($1, $2, $3)";

/// The codes of a provider's circuit, as an SQL list, for `concat!`.
macro_rules! provider_circuit_codes {
    () => {
        "('usage_limited', 'quota_exhausted', 'insufficient_credits')"
    };
}

/// The codes of a model's circuit, as an SQL list, for `concat!`.
macro_rules! model_circuit_codes {
    () => {
        "('rate_limited', 'overloaded')"
    };
}

/// The routes waiting for the reset of a limit a circuit covers (their own
/// failure's, or a circuit's), each with the limit's code and its current
/// candidate's provider and model, soonest first: `$1` the most.
pub(super) const LIST_CIRCUIT_WAITS: &str = "SELECT routes.task_id, routes.code, \
     task_candidates.provider_id, task_candidates.model, routes.deadline_ms FROM routes \
     JOIN task_candidates ON task_candidates.task_id = routes.task_id \
     AND task_candidates.position = routes.candidate_index \
     WHERE routes.state = 'waiting_for_reset' AND routes.code IN ('usage_limited', \
     'quota_exhausted', 'insufficient_credits', 'rate_limited', 'overloaded') \
     AND routes.deadline_ms IS NOT NULL ORDER BY routes.deadline_ms, routes.task_id LIMIT $1";

/// The routes a person's closing of a circuit makes due now (`$1` now, `$2`
/// the provider, `$3` the model or `''` for the provider's circuit): those
/// waiting for the reset of a limit of the circuit's codes (`$codes`, one of the
/// two lists above), on a candidate it covers; `$owner` sets more columns.
macro_rules! release_waits {
    ($codes:expr, $owner:literal) => {
        concat!(
            "UPDATE routes SET deadline_ms = $1",
            $owner,
            " WHERE state = 'waiting_for_reset' AND code IN ",
            $codes,
            " AND deadline_ms > $1 AND EXISTS (SELECT 1 FROM task_candidates \
             WHERE task_candidates.task_id = routes.task_id \
             AND task_candidates.position = routes.candidate_index \
             AND task_candidates.provider_id = $2 AND ($3 = '' OR task_candidates.model = $3)) \
             RETURNING task_id"
        )
    };
}

/// [`release_waits!`] on SQLite, for a provider's circuit and for a model's.
pub(super) const RELEASE_WAITS_SQLITE: [&str; 2] = [
    release_waits!(provider_circuit_codes!(), ""),
    release_waits!(model_circuit_codes!(), ""),
];

/// [`release_waits!`] on PostgreSQL (the routes become `$4`'s, the replica
/// closing it), for a provider's circuit and for a model's.
pub(super) const RELEASE_WAITS_POSTGRES: [&str; 2] = [
    release_waits!(provider_circuit_codes!(), ", owner = $4"),
    release_waits!(model_circuit_codes!(), ", owner = $4"),
];

/// The circuits' history since `$1`, newest first: `$2` the most.
pub(super) const CIRCUIT_HISTORY: &str = "SELECT provider_id, model, kind, code, until_ms, \
     at_ms, task_id FROM circuit_history WHERE at_ms >= $1 ORDER BY at_ms DESC, id DESC \
     LIMIT $2";

/// A person's closing of a circuit, recorded: `$1` provider, `$2` model (`''`
/// for the provider's), `$3` the code, `$4` its reset, `$5` now.
pub(super) const RECORD_CLOSED_BY_PERSON: &str = "INSERT INTO circuit_history (provider_id, \
     model, kind, code, until_ms, at_ms, task_id) VALUES ($1, $2, 'closed_by_person', $3, $4, \
     $5, NULL)";

/// Finished attempts with their evidence, newest first: `$1` = 1 for only those the
/// catalogue was unsure of, `$2` the most to read.
pub(super) const ATTEMPTS_WITH_EVIDENCE: &str = "SELECT id, task_id, seq, turn, generation, \
     candidate_index, candidate_id, provider_id, model, ordinal, max_tokens, probe, \
     after_circuit_wait, started_at_ms, finished_at_ms, outcome, class, code, confidence, \
     catalogue, rule, safe_cause, reset_at_ms, decision_json, evidence_json FROM attempts \
     WHERE evidence_json IS NOT NULL AND finished_at_ms IS NOT NULL \
     AND ($1 = 0 OR code = 'unknown' OR confidence IN ('low', 'medium')) \
     ORDER BY finished_at_ms DESC, id LIMIT $2";

/// The shared reads and statements on the database `DB`: `Sql::<Sqlite>` and
/// `Sql::<Postgres>`.
pub(super) struct Sql<DB>(PhantomData<DB>);

impl<DB> Sql<DB>
where
    DB: Database + HasStatementCache,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Decode<'q, DB> + Type<DB>,
    for<'q> Option<String>: Encode<'q, DB> + Type<DB>,
    for<'q> Option<i64>: Encode<'q, DB> + Type<DB>,
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    for<'r> ProviderRow: FromRow<'r, DB::Row>,
    for<'r> ProfileRow: FromRow<'r, DB::Row>,
    for<'r> CandidateRow: FromRow<'r, DB::Row>,
    usize: sqlx::ColumnIndex<DB::Row>,
{
    /// After a fenced UPDATE changed no row: the row is gone (`NotFound`) or it
    /// has moved past `sent` (`Stale`).
    pub(super) async fn stale_or_missing(
        table: Revisioned,
        conn: &mut DB::Connection,
        id: &str,
        sent: Revision,
    ) -> StoreError {
        let query = match table {
            Revisioned::Providers => "SELECT revision FROM providers WHERE id = $1",
            Revisioned::Profiles => "SELECT revision FROM profiles WHERE id = $1",
        };
        match sqlx::query_scalar::<DB, i64>(query)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await
        {
            Ok(current) => rows::stale_or_missing(table, id, sent, current),
            Err(error) => error.into(),
        }
    }

    /// The provider `id`, or `NotFound`.
    pub(super) async fn provider(
        conn: &mut DB::Connection,
        id: &str,
    ) -> Result<Provider, StoreError> {
        let row: Option<ProviderRow> = sqlx::query_as(concat!(
            "SELECT ",
            provider_columns!(),
            " FROM providers WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        row.ok_or_else(|| Revisioned::Providers.not_found(id))?
            .into_domain()
    }

    /// Insert the provider `write` describes, at revision 1.
    pub(super) async fn insert_provider(
        conn: &mut DB::Connection,
        write: &ProviderWrite,
    ) -> Result<Provider, StoreError> {
        sqlx::query::<DB>(
            "INSERT INTO providers (id, name, name_key, kind, family, base_url, api_key_env, \
             timeouts_json, script_json, cli_json, revision, created_at_ms, updated_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $11, 1, $10, $10)",
        )
        .bind(write.id.as_str())
        .bind(write.name.as_str())
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(write.base_url.as_str())
        .bind(write.api_key_env.clone())
        .bind(timeouts_json(write))
        .bind(script_json(write))
        .bind(write.now.as_millis())
        .bind(cli_json(write))
        .execute(&mut *conn)
        .await
        .map_err(Revisioned::Providers.name_race())?;
        Self::provider(conn, write.id.as_str()).await
    }

    /// Update the provider `write` names if it is still at `expected`; its
    /// timeouts, script and CLI settings are kept where `write` has none, and a
    /// script or CLI settings are dropped when the kind is no longer theirs.
    pub(super) async fn update_provider(
        conn: &mut DB::Connection,
        write: &ProviderWrite,
        expected: Revision,
    ) -> Result<Provider, StoreError> {
        let table = Revisioned::Providers;
        let updated: Option<String> = sqlx::query_scalar(
            "UPDATE providers SET name = $1, name_key = $2, kind = $3, family = $4, base_url = $5, \
             api_key_env = $6, timeouts_json = COALESCE($7, timeouts_json), \
             script_json = CASE WHEN $3 = 'simulated' THEN COALESCE($8, script_json) ELSE NULL END, \
             cli_json = CASE WHEN $3 = 'cli' THEN COALESCE($12, cli_json) ELSE NULL END, \
             revision = revision + 1, updated_at_ms = $9 WHERE id = $10 AND revision = $11 \
             RETURNING id",
        )
        .bind(write.name.as_str())
        .bind(write.name.to_lowercase())
        .bind(enum_name(&write.kind))
        .bind(enum_name(&write.family))
        .bind(write.base_url.as_str())
        .bind(write.api_key_env.clone())
        .bind(timeouts_json(write))
        .bind(script_json(write))
        .bind(write.now.as_millis())
        .bind(write.id.as_str())
        .bind(expected.get())
        .bind(cli_json(write))
        .fetch_optional(&mut *conn)
        .await
        .map_err(table.name_race())?;
        if updated.is_none() {
            return Err(Self::stale_or_missing(table, conn, write.id.as_str(), expected).await);
        }
        Self::provider(conn, write.id.as_str()).await
    }

    /// Every provider, by name.
    pub(super) async fn providers(pool: &Pool<DB>) -> Result<Vec<Provider>, StoreError> {
        let rows: Vec<ProviderRow> = sqlx::query_as(concat!(
            "SELECT ",
            provider_columns!(),
            " FROM providers ORDER BY name_key, id"
        ))
        .fetch_all(pool)
        .await?;
        rows.into_iter().map(ProviderRow::into_domain).collect()
    }

    /// `InUse` while a profile names `provider` among its candidates or an
    /// unfinished task does; the profiles are named, the tasks counted.
    pub(super) async fn refuse_if_provider_used(
        conn: &mut DB::Connection,
        provider: &Provider,
    ) -> Result<(), StoreError> {
        let in_use = |users| StoreError::InUse {
            entity: Revisioned::Providers.entity(),
            name: provider.name.clone(),
            users,
        };
        let profiles: Vec<String> = sqlx::query_scalar(
            "SELECT DISTINCT profiles.name FROM candidates \
             JOIN profiles ON profiles.id = candidates.profile_id \
             WHERE candidates.provider_id = $1 ORDER BY profiles.name",
        )
        .bind(provider.id.as_str())
        .fetch_all(&mut *conn)
        .await?;
        if !profiles.is_empty() {
            return Err(in_use(format!("the profiles {}", profiles.join(", "))));
        }
        let unfinished: i64 = sqlx::query_scalar(concat!(
            "SELECT COUNT(DISTINCT task_candidates.task_id) FROM task_candidates \
             JOIN routes ON routes.task_id = task_candidates.task_id \
             WHERE task_candidates.provider_id = $1 AND routes.state IN ",
            unfinished!()
        ))
        .bind(provider.id.as_str())
        .fetch_one(&mut *conn)
        .await?;
        if unfinished > 0 {
            return Err(in_use(unfinished_users(unfinished)));
        }
        Ok(())
    }

    /// `InUse` while an unfinished task runs on the profile `id`, named `name`.
    pub(super) async fn refuse_if_profile_used(
        conn: &mut DB::Connection,
        id: &str,
        name: String,
    ) -> Result<(), StoreError> {
        let unfinished: i64 = sqlx::query_scalar(concat!(
            "SELECT COUNT(*) FROM tasks JOIN routes ON routes.task_id = tasks.id \
             WHERE tasks.profile_id = $1 AND routes.state IN ",
            unfinished!()
        ))
        .bind(id)
        .fetch_one(&mut *conn)
        .await?;
        if unfinished > 0 {
            return Err(StoreError::InUse {
                entity: Revisioned::Profiles.entity(),
                name,
                users: unfinished_users(unfinished),
            });
        }
        Ok(())
    }

    /// Delete the row `id` of `table` (its candidates go with a profile).
    pub(super) async fn delete(
        table: Revisioned,
        conn: &mut DB::Connection,
        id: &str,
    ) -> Result<(), StoreError> {
        let statement = match table {
            Revisioned::Providers => "DELETE FROM providers WHERE id = $1 RETURNING id",
            Revisioned::Profiles => "DELETE FROM profiles WHERE id = $1 RETURNING id",
        };
        let deleted: Option<String> = sqlx::query_scalar(statement)
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?;
        deleted.map(drop).ok_or_else(|| table.not_found(id))
    }

    /// The profile `id` with its candidates in order, or `NotFound`.
    pub(super) async fn profile(
        conn: &mut DB::Connection,
        id: &str,
    ) -> Result<Profile, StoreError> {
        let row: Option<ProfileRow> = sqlx::query_as(concat!(
            "SELECT ",
            profile_columns!(),
            " FROM profiles WHERE id = $1"
        ))
        .bind(id)
        .fetch_optional(&mut *conn)
        .await?;
        let row = row.ok_or_else(|| Revisioned::Profiles.not_found(id))?;
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

    /// Refuse a profile write whose name another profile has, with a
    /// candidate id not among `known` (this profile's candidates now) or a
    /// provider not among `present`: every refusal at once, in candidate order.
    async fn refuse_bad_profile(
        conn: &mut DB::Connection,
        write: &ProfileWrite,
        known: &HashSet<String>,
        present: &HashSet<String>,
    ) -> Result<(), StoreError> {
        let others: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM profiles WHERE name_key = $1 AND id <> $2")
                .bind(write.name.to_lowercase())
                .bind(write.id.as_str())
                .fetch_one(&mut *conn)
                .await?;
        let mut errors = Vec::new();
        if others > 0 {
            errors.push(refusals::name_taken(Revisioned::Profiles.entity()));
        }
        for (index, (candidate, origin)) in write.candidates.iter().enumerate() {
            if *origin == IdOrigin::Client && !known.contains(candidate.id.as_str()) {
                errors.push(refusals::not_a_candidate_of_this_profile(index));
            }
            if !present.contains(candidate.provider_id.as_str()) {
                errors.push(refusals::no_such_provider(index));
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(StoreError::Invalid(errors))
        }
    }

    /// Insert the profile `write` describes, at revision 1, with its
    /// candidates; `present` are the providers it names that exist.
    pub(super) async fn insert_profile(
        conn: &mut DB::Connection,
        write: &ProfileWrite,
        present: &HashSet<String>,
    ) -> Result<Profile, StoreError> {
        Self::refuse_bad_profile(conn, write, &HashSet::new(), present).await?;
        sqlx::query::<DB>(
            "INSERT INTO profiles (id, name, name_key, revision, created_at_ms, updated_at_ms, \
             gateway_deadline_s) VALUES ($1, $2, $3, 1, $4, $4, $5)",
        )
        .bind(write.id.as_str())
        .bind(write.name.as_str())
        .bind(write.name.to_lowercase())
        .bind(write.now.as_millis())
        .bind(write.gateway_deadline_s.map(i64::from))
        .execute(&mut *conn)
        .await
        .map_err(Revisioned::Profiles.name_race())?;
        Self::replace_candidates(conn, write).await?;
        Self::profile(conn, write.id.as_str()).await
    }

    /// Update the profile `write` names if it is still at `expected`: its
    /// name, and its candidates replaced by `write`'s; `present` are the
    /// providers it names that exist.
    pub(super) async fn update_profile(
        conn: &mut DB::Connection,
        write: &ProfileWrite,
        expected: Revision,
        present: &HashSet<String>,
    ) -> Result<Profile, StoreError> {
        let table = Revisioned::Profiles;
        // The fence first: on PostgreSQL it locks the row, so what is checked
        // below holds until the commit.
        let fenced: Option<String> = sqlx::query_scalar(
            "UPDATE profiles SET revision = revision + 1, updated_at_ms = $1 \
             WHERE id = $2 AND revision = $3 RETURNING id",
        )
        .bind(write.now.as_millis())
        .bind(write.id.as_str())
        .bind(expected.get())
        .fetch_optional(&mut *conn)
        .await?;
        if fenced.is_none() {
            return Err(Self::stale_or_missing(table, conn, write.id.as_str(), expected).await);
        }
        let known = Self::candidate_ids(conn, write.id.as_str()).await?;
        Self::refuse_bad_profile(conn, write, &known, present).await?;
        sqlx::query::<DB>(
            "UPDATE profiles SET name = $1, name_key = $2, gateway_deadline_s = $3 WHERE id = $4",
        )
        .bind(write.name.as_str())
        .bind(write.name.to_lowercase())
        .bind(write.gateway_deadline_s.map(i64::from))
        .bind(write.id.as_str())
        .execute(&mut *conn)
        .await
        .map_err(table.name_race())?;
        Self::replace_candidates(conn, write).await?;
        Self::profile(conn, write.id.as_str()).await
    }

    /// The profile named `name` in any case, or `NotFound`.
    pub(super) async fn profile_by_name(
        conn: &mut DB::Connection,
        name: &str,
    ) -> Result<Profile, StoreError> {
        let id: Option<String> = sqlx::query_scalar("SELECT id FROM profiles WHERE name_key = $1")
            .bind(name.to_lowercase())
            .fetch_optional(&mut *conn)
            .await?;
        match id {
            Some(id) => Self::profile(conn, &id).await,
            None => Err(Revisioned::Profiles.not_found(name)),
        }
    }

    /// Every profile by name, each with its candidates; inside one transaction
    /// so the two reads see one state.
    pub(super) async fn profiles(conn: &mut DB::Connection) -> Result<Vec<Profile>, StoreError> {
        let rows: Vec<ProfileRow> = sqlx::query_as(concat!(
            "SELECT ",
            profile_columns!(),
            " FROM profiles ORDER BY name_key, id"
        ))
        .fetch_all(&mut *conn)
        .await?;
        let candidates: Vec<CandidateRow> = sqlx::query_as(concat!(
            "SELECT ",
            candidate_columns!(),
            " FROM candidates ORDER BY profile_id, position"
        ))
        .fetch_all(&mut *conn)
        .await?;
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

    /// The ids of the candidates the profile `id` has now.
    async fn candidate_ids(
        conn: &mut DB::Connection,
        id: &str,
    ) -> Result<HashSet<String>, StoreError> {
        let ids: Vec<String> =
            sqlx::query_scalar("SELECT id FROM candidates WHERE profile_id = $1")
                .bind(id)
                .fetch_all(&mut *conn)
                .await?;
        Ok(ids.into_iter().collect())
    }

    /// Replace the candidates of the profile `write` names with its own, in order.
    async fn replace_candidates(
        conn: &mut DB::Connection,
        write: &ProfileWrite,
    ) -> Result<(), StoreError> {
        sqlx::query::<DB>("DELETE FROM candidates WHERE profile_id = $1")
            .bind(write.id.as_str())
            .execute(&mut *conn)
            .await?;
        for (position, (candidate, _)) in write.candidates.iter().enumerate() {
            sqlx::query::<DB>(
                "INSERT INTO candidates (id, profile_id, position, provider_id, model, enabled, \
                 max_tokens, escalation_json, policy_json) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            )
            .bind(candidate.id.as_str())
            .bind(write.id.as_str())
            .bind(i64::try_from(position).unwrap_or(i64::MAX))
            .bind(candidate.provider_id.as_str())
            .bind(candidate.model.as_str())
            .bind(candidate.enabled)
            .bind(i64::from(candidate.max_tokens))
            .bind(serde_json::to_string(&candidate.escalation).expect("escalation serializes"))
            .bind(serde_json::to_string(&candidate.policy).expect("policy serializes"))
            .execute(&mut *conn)
            .await?;
        }
        Ok(())
    }
}
