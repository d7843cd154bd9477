use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::services::Services;

/// `GET /healthz`: 200 with the schema version when the database answers, 503 otherwise.
pub async fn healthz(State(services): State<Services>) -> (StatusCode, Json<Value>) {
    match services.store.schema_version().await {
        Ok(schema_version) => (
            StatusCode::OK,
            Json(json!({"status": "ok", "schema_version": schema_version})),
        ),
        Err(error) => {
            tracing::error!(%error, "health check: database unavailable");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                Json(json!({"status": "unavailable"})),
            )
        }
    }
}
