use axum::extract::{FromRequest, Request};
use axum::Json;
use serde_json::Value;

use crate::error::AppError;

/// A JSON request body, kept as a value so validation can report every
/// field error at once. Not JSON, the wrong content type or too large: a
/// clear 4xx from [`AppError`].
pub struct JsonBody(pub Value);

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(value) = Json::<Value>::from_request(request, state).await?;
        Ok(Self(value))
    }
}
