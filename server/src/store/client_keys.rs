//! Client keys, written once for both drivers: the same statements, with `$n`
//! parameters, on SQLite and PostgreSQL.

use api::{ClientKeyId, ProfileId, Timestamp};
use sqlx::{Database, Encode, Executor, FromRow, Type};

use super::StoreError;
use crate::domain::{ClientKey, ClientKeyWrite};

/// The columns of a [`ClientKeyRow`], for `concat!` (sqlx takes only literal SQL).
macro_rules! columns {
    () => {
        "id, name, prefix, profile_ids_json, created_at_ms, revoked_at_ms"
    };
}

#[derive(FromRow)]
pub(super) struct ClientKeyRow {
    id: String,
    name: String,
    prefix: String,
    profile_ids_json: String,
    created_at_ms: i64,
    revoked_at_ms: Option<i64>,
}

impl ClientKeyRow {
    fn into_domain(self) -> Result<ClientKey, StoreError> {
        let profile_ids: Vec<String> =
            serde_json::from_str(&self.profile_ids_json).map_err(|error| StoreError::Corrupt {
                what: "client key profiles",
                message: error.to_string(),
            })?;
        Ok(ClientKey {
            id: ClientKeyId::new(self.id),
            name: self.name,
            prefix: self.prefix,
            profile_ids: profile_ids.into_iter().map(ProfileId::new).collect(),
            created_at: Timestamp::from_millis(self.created_at_ms),
            revoked_at: self.revoked_at_ms.map(Timestamp::from_millis),
        })
    }
}

/// The statements, on a connection of the database `DB` (each driver says
/// which: SQLite's writes hold its write gate).
pub(super) struct ClientKeySql<DB>(std::marker::PhantomData<DB>);

impl<DB> ClientKeySql<DB>
where
    DB: Database,
    DB::Arguments: sqlx::IntoArguments<DB>,
    for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    for<'q> &'q str: Encode<'q, DB> + Type<DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    for<'r> ClientKeyRow: FromRow<'r, DB::Row>,
{
    pub(super) async fn create(
        conn: &mut DB::Connection,
        write: ClientKeyWrite,
    ) -> Result<ClientKey, StoreError> {
        let key = write.key;
        let profile_ids: Vec<&str> = key.profile_ids.iter().map(ProfileId::as_str).collect();
        sqlx::query::<DB>(
            "INSERT INTO client_keys (id, name, digest, prefix, profile_ids_json, created_at_ms) \
             VALUES ($1, $2, $3, $4, $5, $6)",
        )
        .bind(key.id.as_str())
        .bind(key.name.as_str())
        .bind(write.digest.as_str())
        .bind(key.prefix.as_str())
        .bind(
            serde_json::to_string(&profile_ids)
                .unwrap_or_else(|_| unreachable!("strings serialize")),
        )
        .bind(key.created_at.as_millis())
        .execute(&mut *conn)
        .await?;
        Ok(key)
    }

    pub(super) async fn list(conn: &mut DB::Connection) -> Result<Vec<ClientKey>, StoreError> {
        let rows: Vec<ClientKeyRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM client_keys ORDER BY created_at_ms DESC, id DESC"
        ))
        .fetch_all(&mut *conn)
        .await?;
        rows.into_iter().map(ClientKeyRow::into_domain).collect()
    }

    pub(super) async fn by_digest(
        conn: &mut DB::Connection,
        digest: &str,
    ) -> Result<Option<ClientKey>, StoreError> {
        let row: Option<ClientKeyRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM client_keys WHERE digest = $1 AND revoked_at_ms IS NULL"
        ))
        .bind(digest)
        .fetch_optional(&mut *conn)
        .await?;
        row.map(ClientKeyRow::into_domain).transpose()
    }

    pub(super) async fn revoke(
        conn: &mut DB::Connection,
        id: &ClientKeyId,
        now: Timestamp,
    ) -> Result<ClientKey, StoreError> {
        sqlx::query::<DB>(
            "UPDATE client_keys SET revoked_at_ms = $1 WHERE id = $2 AND revoked_at_ms IS NULL",
        )
        .bind(now.as_millis())
        .bind(id.as_str())
        .execute(&mut *conn)
        .await?;
        let row: Option<ClientKeyRow> = sqlx::query_as(concat!(
            "SELECT ",
            columns!(),
            " FROM client_keys WHERE id = $1"
        ))
        .bind(id.as_str())
        .fetch_optional(&mut *conn)
        .await?;
        row.ok_or_else(|| StoreError::NotFound {
            entity: "client key",
            id: id.as_str().to_owned(),
        })?
        .into_domain()
    }
}
