use api::read::{Read, Request as ApiRequest};
use axum::Json;
use axum::extract::{FromRequest, Request};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::AppError;

/// A JSON request body, read into its request type with every field error
/// at once ([`Read`]). Not JSON, the wrong content type or too large: a
/// clear 4xx from [`AppError`].
pub struct Body<T>(pub Read<T>);

impl<S: Send + Sync, T: ApiRequest + DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = AppError;

    async fn from_request(request: Request, state: &S) -> Result<Self, Self::Rejection> {
        let Json(value) = Json::<Value>::from_request(request, state).await?;
        Ok(Self(Read::from_json(&value)))
    }
}
