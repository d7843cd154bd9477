//! One error type for everything a request can run into, mapped to an HTTP
//! status in one place (`IntoResponse`). User errors are answered and not
//! logged; internal errors are logged once and hidden.

use axum::extract::rejection::JsonRejection;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use policy::FieldError;
use serde_json::json;

use crate::store::StoreError;

/// Every way a request can fail.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The body is well-formed JSON but not valid: every field error at once.
    #[error("invalid request: {} field errors", .0.len())]
    Invalid(Vec<FieldError>),
    /// The thing asked for does not exist.
    #[error("no {entity} with id {id}")]
    NotFound {
        /// "provider", "profile", ...
        entity: &'static str,
        /// The id asked for.
        id: String,
    },
    /// An update carried a revision that is no longer current.
    #[error("revision {sent} is stale: the current revision is {current}")]
    StaleRevision {
        /// The revision sent.
        sent: i64,
        /// The current revision.
        current: i64,
    },
    /// The thing is still in use and cannot be deleted.
    #[error("{0}")]
    InUse(String),
    /// The body is not JSON.
    #[error("the body is not valid JSON: {0}")]
    MalformedJson(String),
    /// The body is not declared as JSON.
    #[error("the body must be JSON, sent with content-type: application/json")]
    UnsupportedMediaType,
    /// The body is larger than the server accepts.
    #[error("the body is too large")]
    PayloadTooLarge,
    /// No such API route.
    #[error("no such API route")]
    NoSuchRoute,
    /// Something failed inside the server.
    #[error("internal error: {0}")]
    Internal(String),
}

impl AppError {
    /// The status this error is answered with.
    pub fn status(&self) -> StatusCode {
        match self {
            Self::Invalid(_) => StatusCode::UNPROCESSABLE_ENTITY,
            Self::NotFound { .. } | Self::NoSuchRoute => StatusCode::NOT_FOUND,
            Self::StaleRevision { .. } | Self::InUse(_) => StatusCode::CONFLICT,
            Self::MalformedJson(_) => StatusCode::BAD_REQUEST,
            Self::UnsupportedMediaType => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Self::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            Self::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// The machine-readable `error` of the answer.
    pub fn code(&self) -> &'static str {
        match self {
            Self::Invalid(_) => "invalid",
            Self::NotFound { .. } => "not_found",
            Self::StaleRevision { .. } => "stale_revision",
            Self::InUse(_) => "in_use",
            Self::MalformedJson(_) => "malformed_json",
            Self::UnsupportedMediaType => "unsupported_media_type",
            Self::PayloadTooLarge => "payload_too_large",
            Self::NoSuchRoute => "no_such_route",
            Self::Internal(_) => "internal",
        }
    }
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { entity, id } => Self::NotFound { entity, id },
            StoreError::Stale { sent, current } => Self::StaleRevision { sent, current },
            StoreError::Invalid(errors) => Self::Invalid(errors),
            StoreError::InUse { entity, id, users } => {
                Self::InUse(format!("{entity} {id} is used by {users}"))
            }
            other => Self::Internal(other.to_string()),
        }
    }
}

impl From<JsonRejection> for AppError {
    fn from(rejection: JsonRejection) -> Self {
        match rejection {
            JsonRejection::MissingJsonContentType(_) => Self::UnsupportedMediaType,
            rejection if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                Self::PayloadTooLarge
            }
            rejection => Self::MalformedJson(rejection.body_text()),
        }
    }
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let status = self.status();
        let body = match &self {
            Self::Invalid(errors) => json!({"error": self.code(), "errors": errors}),
            Self::StaleRevision { current, .. } => {
                json!({"error": self.code(), "message": self.to_string(), "revision": current})
            }
            Self::Internal(detail) => {
                tracing::error!(%detail, "internal error");
                json!({"error": self.code(), "message": "internal error: see the server log"})
            }
            _ => json!({"error": self.code(), "message": self.to_string()}),
        };
        (status, Json(body)).into_response()
    }
}
