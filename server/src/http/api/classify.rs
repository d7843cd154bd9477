//! `POST /api/classify`: the catalogue over HTTP.

use axum::extract::State;
use axum::Json;
use catalogue::CatalogueClassification;
use utoipa::ToSchema;

use super::body::JsonBody;
use crate::error::AppError;
use crate::services::Services;
use app::model::openapi::{ErrorBody, FieldErrorsBody};

/// Classify one piece of evidence from a failed attempt.
#[utoipa::path(post, path = "/api/classify", tag = "catalogue", request_body = EvidenceSchema,
    responses(
        (status = 200, description = "The classification (SPEC 2.5)", body = ClassificationSchema),
        (status = 400, description = "Not JSON", body = ErrorBody),
        (status = 422, description = "Not evidence", body = FieldErrorsBody),
    ))]
pub async fn classify(
    State(services): State<Services>,
    JsonBody(body): JsonBody,
) -> Result<Json<CatalogueClassification>, AppError> {
    Ok(Json(services.classify(&body)?))
}

/// What a failed attempt left behind. Unknown fields are ignored.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct EvidenceSchema {
    /// Provider family or agent CLI: `anthropic`, `openai`, `gemini`, `claude_code`, ...
    provider: String,
    /// HTTP status.
    status: Option<u16>,
    /// Response headers; names are case-insensitive.
    #[schema(value_type = Option<Object>)]
    headers: Option<serde_json::Value>,
    /// The raw response body, or the data of an SSE `error` event.
    body: Option<String>,
    /// CLI stdout/stderr text.
    output: Option<String>,
    /// `connection_refused`, `connection_reset`, `timeout`, `dns`, `tls`, `closed_early`.
    transport: Option<String>,
    /// RFC 3339; default now.
    observed_at: Option<String>,
}

/// The catalogue's verdict.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct ClassificationSchema {
    /// Semantic code, e.g. `rate_limited`.
    code: String,
    /// `transient`, `hard` or `outside`.
    class: String,
    /// `high` or `low`.
    confidence: String,
    /// A relative timing hint.
    retry_after_ms: Option<u64>,
    /// When the limit resets (RFC 3339).
    reset_at: Option<String>,
    /// The rule that matched.
    rule: String,
    /// The catalogue version.
    catalogue: String,
    /// The provider's message with secrets removed, at most 300 characters.
    safe_cause: Option<String>,
}
