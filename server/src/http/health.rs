use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use crate::services::Services;

/// What `/healthz` answers.
#[derive(Debug, Serialize)]
pub struct Health {
    /// `ok`, or `unavailable` when the database does not answer or the scheduler
    /// does not run.
    status: &'static str,
    /// The latest applied migration, when the database answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<i64>,
    /// `sqlite` or `postgres`.
    database: &'static str,
    /// This replica's name, on a database replicas share.
    #[serde(skip_serializing_if = "Option::is_none")]
    replica: Option<String>,
    /// `running`, or `stopped` (the route engine fires no deadline).
    scheduler: &'static str,
}

/// `GET /healthz`: 200 with the schema version, the driver, the replica's name
/// and its scheduler when all is well; 503 when the database does not answer
/// (the cause goes to the log, with its source chain) or the scheduler stopped.
pub async fn healthz(State(services): State<Services>) -> (StatusCode, Json<Health>) {
    let schema_version = match services.store.schema_version().await {
        Ok(version) => Some(version),
        Err(error) => {
            tracing::error!(error = %crate::error::chain(&error), "health check: database unavailable");
            None
        }
    };
    let scheduling = services.engine.is_scheduling();
    let healthy = schema_version.is_some() && scheduling;
    (
        if healthy {
            StatusCode::OK
        } else {
            StatusCode::SERVICE_UNAVAILABLE
        },
        Json(Health {
            status: if healthy { "ok" } else { "unavailable" },
            schema_version,
            database: services.store.driver(),
            replica: services.store.replica().map(str::to_owned),
            scheduler: if scheduling { "running" } else { "stopped" },
        }),
    )
}
