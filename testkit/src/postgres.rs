//! The test PostgreSQL (`SWITCHBACK_TEST_POSTGRES_URL`, else the local `test`
//! database that `scripts/setup` makes sure of), and a schema of a test's own
//! in it, so runs and tests never see each other's rows.

use sqlx::PgConnection;

/// How long a test schema is kept before a later run drops it: longer than
/// any run of the suite, the full soak included.
const KEPT_HOURS: i32 = 6;

/// A database for tests: `SWITCHBACK_TEST_POSTGRES_URL`, or the local
/// PostgreSQL's `test` database over loopback TCP without TLS (TLS on loopback
/// only costs CPU on both ends).
pub fn url() -> String {
    std::env::var("SWITCHBACK_TEST_POSTGRES_URL")
        .unwrap_or_else(|_| "postgres://root@127.0.0.1:5432/test?sslmode=disable".to_owned())
}

/// A new, empty schema in the test database, and a URL whose connections use
/// it: each test sees its own rows and no other's.
pub async fn schema(prefix: &str) -> Result<(String, String), sqlx::Error> {
    let base = url();
    let schema = format!(
        "{prefix}_{}",
        uuid::Uuid::now_v7()
            .simple()
            .to_string()
            .get(20..)
            .unwrap_or_default()
    );
    let mut conn = <PgConnection as sqlx::Connection>::connect(&base).await?;
    // Each schema is registered, and one registered longer ago than any run
    // lasts is dropped, so the test database does not fill with old runs'
    // schemas. Under a lock: two tests starting at once must not race to
    // create the register or drop the same schema.
    let mut transaction = sqlx::Connection::begin(&mut conn).await?;
    sqlx::query("SELECT pg_advisory_xact_lock(hashtext('switchback test schemas'))")
        .execute(&mut *transaction)
        .await?;
    sqlx::query(
        "CREATE TABLE IF NOT EXISTS public.switchback_test_schemas \
         (name text PRIMARY KEY, created_at timestamptz NOT NULL DEFAULT now())",
    )
    .execute(&mut *transaction)
    .await?;
    let stale: Vec<String> = sqlx::query_scalar(
        "DELETE FROM public.switchback_test_schemas \
         WHERE created_at < now() - make_interval(hours => $1) RETURNING name",
    )
    .bind(KEPT_HOURS)
    .fetch_all(&mut *transaction)
    .await?;
    for name in stale {
        // Names in the register were made here of a prefix and hex digits.
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA IF EXISTS \"{}\" CASCADE",
            name.replace('"', "")
        )))
        .execute(&mut *transaction)
        .await?;
    }
    sqlx::query("INSERT INTO public.switchback_test_schemas (name) VALUES ($1)")
        .bind(&schema)
        .execute(&mut *transaction)
        .await?;
    // The name is made here of a prefix and hex digits.
    sqlx::query(sqlx::AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut *transaction)
        .await?;
    transaction.commit().await?;
    let separator = if base.contains('?') { '&' } else { '?' };
    let url = format!("{base}{separator}options=-c%20search_path%3D{schema}");
    Ok((schema, url))
}
