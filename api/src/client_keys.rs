//! Client keys: what a gateway caller presents (`Authorization: Bearer` or
//! `x-api-key`) on a server with an admin token. Each may use a list of
//! profiles; the server keeps only its SHA-256 digest and shows the key once,
//! when it is made.

use serde::{Deserialize, Serialize};
use validator::Validate;

use crate::{ProfileId, Timestamp};

/// The longest name of a client key, in characters.
pub const CLIENT_KEY_NAME_MAX: u64 = 100;
/// The most profiles one key may use.
pub const CLIENT_KEY_PROFILES_MAX: u64 = 100;

use crate::ids::ClientKeyId;

/// Make a client key.
///
/// ```
/// let request: api::ClientKeyRequest = serde_json::from_value(serde_json::json!({
///     "name": " aider on the laptop ", "profile_ids": ["p-1"],
/// })).unwrap();
/// assert_eq!(request.check().unwrap().name, "aider on the laptop");
/// let empty: api::ClientKeyRequest = serde_json::from_value(serde_json::json!({
///     "name": "x", "profile_ids": [],
/// })).unwrap();
/// assert_eq!(empty.check().unwrap_err()[0].field.to_string(), "profile_ids");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientKeyRequest {
    /// Who or what uses it, for people; not blank.
    #[validate(length(min = 1, max = CLIENT_KEY_NAME_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// The profiles it may name as `model`: at least one.
    #[validate(length(min = 1, max = CLIENT_KEY_PROFILES_MAX))]
    #[cfg_attr(feature = "openapi", schema(min_items = 1, max_items = 100))]
    pub profile_ids: Vec<ProfileId>,
}

impl crate::read::Request for ClientKeyRequest {}

impl ClientKeyRequest {
    /// Every error at once, or the request with its name trimmed.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        // The name is checked as sent (blank is refused), then kept trimmed.
        let mut request = crate::checks::checked(self.clone())?;
        request.name = request.name.trim().to_owned();
        Ok(request)
    }
}

/// A client key as the server shows it: never the key itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientKeyView {
    /// Stable id.
    pub id: ClientKeyId,
    /// Who or what uses it.
    pub name: String,
    /// The key's first characters (`sbk_` and four more), to tell keys apart.
    pub prefix: String,
    /// The profiles it may use.
    pub profile_ids: Vec<ProfileId>,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it was revoked; absent while it works.
    pub revoked_at: Option<Timestamp>,
}

/// A client key just made: the only time its key is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ClientKeyCreated {
    /// The key, `sbk_` and 43 more characters: shown this once, never stored.
    pub key: String,
    /// The key as it is kept.
    pub client_key: ClientKeyView,
}
