use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde::Serialize;

use crate::services::Services;

/// What `/healthz` answers.
#[derive(Debug, Serialize)]
pub struct Health {
    /// `ok` or `unavailable`.
    status: &'static str,
    /// The latest applied migration, when the database answers.
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_version: Option<i64>,
}

/// `GET /healthz`: 200 with the schema version when the database answers, 503
/// otherwise (the cause goes to the log, with its source chain).
pub async fn healthz(State(services): State<Services>) -> (StatusCode, Json<Health>) {
    match services.store.schema_version().await {
        Ok(schema_version) => (
            StatusCode::OK,
            Json(Health {
                status: "ok",
                schema_version: Some(schema_version),
            }),
        ),
        Err(error) => {
            tracing::error!(error = %crate::error::chain(&error), "health check: database unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(Health {
                    status: "unavailable",
                    schema_version: None,
                }),
            )
        }
    }
}
