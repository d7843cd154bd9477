//! The server's one error: either a refusal the caller can act on (an
//! [`ApiError`], answered as it is) or a failure inside the server (kept
//! with its source chain for the log, answered as `internal`). The JSON
//! API, the server functions and the plain-form posts all turn it into an
//! [`ApiError`] here, and [`ApiError::status`] is the one place an error
//! meets its HTTP status.

use std::error::Error as StdError;
use std::fmt;

use api::ApiError;
use axum::Json;
use axum::extract::rejection::{FormRejection, JsonRejection};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use crate::http::api::MAX_BODY_BYTES;
use crate::store::StoreError;

/// Every way an operation can end without its result.
#[derive(Debug)]
pub enum AppError {
    /// The caller's request was refused; nothing changed.
    Refused(ApiError),
    /// Something failed inside the server.
    Internal(Box<dyn StdError + Send + Sync>),
}

impl fmt::Display for AppError {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Refused(error) => write!(formatter, "refused: {error}"),
            Self::Internal(error) => write!(formatter, "internal error: {}", chain(error.as_ref())),
        }
    }
}

impl StdError for AppError {
    fn source(&self) -> Option<&(dyn StdError + 'static)> {
        match self {
            Self::Refused(error) => Some(error),
            Self::Internal(error) => Some(error.as_ref()),
        }
    }
}

impl AppError {
    /// The error as the caller sees it. An internal failure is logged here,
    /// once, with its whole source chain, and answered without any of it.
    pub fn into_api_error(self) -> ApiError {
        match self {
            Self::Refused(error) => error,
            Self::Internal(error) => {
                tracing::error!(error = %chain(error.as_ref()), "internal error");
                ApiError::internal()
            }
        }
    }
}

/// `error: cause: cause's cause`.
pub(crate) fn chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

impl From<ApiError> for AppError {
    fn from(error: ApiError) -> Self {
        Self::Refused(error)
    }
}

impl From<Vec<api::FieldError>> for AppError {
    fn from(errors: Vec<api::FieldError>) -> Self {
        Self::Refused(ApiError::invalid(errors))
    }
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound { entity, id } => Self::Refused(ApiError::not_found(entity, id)),
            StoreError::Stale { current, .. } => Self::Refused(ApiError::stale_revision(current)),
            StoreError::Invalid(errors) => Self::Refused(ApiError::invalid(errors)),
            StoreError::InUse {
                entity,
                name,
                users,
            } => Self::Refused(ApiError::in_use(entity, &name, &users)),
            other => Self::Internal(Box::new(other)),
        }
    }
}

impl From<JsonRejection> for AppError {
    fn from(rejection: JsonRejection) -> Self {
        Self::Refused(match rejection {
            JsonRejection::MissingJsonContentType(_) => ApiError::unsupported_media_type(),
            rejection if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => {
                ApiError::payload_too_large(MAX_BODY_BYTES)
            }
            rejection => ApiError::malformed_json(rejection.body_text()),
        })
    }
}

impl From<FormRejection> for AppError {
    fn from(rejection: FormRejection) -> Self {
        Self::Refused(match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => ApiError::payload_too_large(MAX_BODY_BYTES),
            StatusCode::UNSUPPORTED_MEDIA_TYPE => ApiError::form_media_type(),
            _ => ApiError::unreadable_form(rejection.body_text()),
        })
    }
}

/// The status of an [`ApiError`], for axum.
pub fn status_of(error: &ApiError) -> StatusCode {
    StatusCode::from_u16(error.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR)
}

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let error = self.into_api_error();
        let mut response = (status_of(&error), Json(&error)).into_response();
        // What a client library reads before the body: when to send again,
        // and which credential is wanted.
        let headers = response.headers_mut();
        match &error {
            ApiError::RateLimited { retry_after_s, .. } => {
                headers.insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_s));
            }
            ApiError::Unauthorized { .. } => {
                headers.insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"switchback\""),
                );
            }
            _ => {}
        }
        response
    }
}
