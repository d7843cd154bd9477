use leptos::server_fn::codec::JsonEncoding;
use leptos::server_fn::error::{FromServerFnError, ServerFnErrorErr};
use policy::FieldError;
use serde::{Deserialize, Serialize};

/// What a server function can fail with, typed all the way to the browser so
/// field errors land on their fields.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
pub enum ApiError {
    /// Field errors; nothing was stored.
    #[error("{} field errors", .0.len())]
    Invalid(Vec<FieldError>),
    /// The thing does not exist (any more).
    #[error("{0}")]
    NotFound(String),
    /// Someone saved first: the current revision is given.
    #[error(
        "someone else saved this first (revision {current_revision}): reload to see their changes"
    )]
    Stale {
        /// The revision now stored.
        current_revision: i64,
    },
    /// Still in use.
    #[error("{0}")]
    InUse(String),
    /// The server failed; details are in its log.
    #[error("the server failed: {0}")]
    Internal(String),
    /// The call itself failed (network, encoding).
    #[error("the request failed: {0}")]
    Transport(String),
}

impl FromServerFnError for ApiError {
    type Encoder = JsonEncoding;

    fn from_server_fn_error(value: ServerFnErrorErr) -> Self {
        Self::Transport(value.to_string())
    }
}
