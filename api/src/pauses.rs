//! A person's pause of automatic recovery (`GET /api/pauses`, `POST /api/pauses`):
//! everywhere, or on one provider. While paused, no deadline fires and no
//! attempt starts on what is paused; routes keep their states and deadlines,
//! and a resume fires what came due, earliest first.

use serde::{Deserialize, Serialize};

use crate::checks::ID_MAX;
use crate::ids::ProviderId;
use crate::time::Timestamp;

/// What is paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct PausesView {
    /// Since when everything is paused; absent when it is not.
    pub everywhere: Option<Timestamp>,
    /// Every provider, by name, each with since when it is paused (absent: it
    /// is not).
    pub providers: Vec<ProviderPauseView>,
}

/// One provider's pause.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderPauseView {
    /// The provider.
    pub provider_id: ProviderId,
    /// Its name.
    pub provider: String,
    /// Since when it is paused; absent when it is not.
    pub paused_since: Option<Timestamp>,
}

/// Pause or resume automatic recovery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, validator::Validate)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    /// The provider; absent or null: everywhere.
    #[serde(default)]
    #[validate(length(
        min = 1,
        max = ID_MAX,
        message = "names a provider; leave it out to pause or resume everywhere"
    ))]
    pub provider_id: Option<ProviderId>,
    /// `true` to pause, `false` to resume.
    pub paused: bool,
}

impl crate::read::Request for PauseRequest {}

impl PauseRequest {
    /// Every error at once, or the request as sent. Only what the document
    /// states is refused: pausing a provider id that names nothing stored is
    /// the 404 of a missing provider.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        crate::checks::checked(self.clone())
    }
}

/// What the top bar of every page says while anything is paused:
/// `everywhere`, or the paused providers' names.
///
/// ```
/// let paused = api::PauseNotice { everywhere: false, providers: vec!["Claude Code".into()] };
/// assert_eq!(paused.sentence().as_deref(), Some("Automatic recovery is paused for Claude Code."));
/// assert_eq!(api::PauseNotice::default().sentence(), None);
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PauseNotice {
    /// Everything is paused.
    pub everywhere: bool,
    /// The providers paused on their own, by name.
    pub providers: Vec<String>,
}

impl PauseNotice {
    /// What `pauses` says is paused.
    pub fn of(pauses: &PausesView) -> Self {
        Self {
            everywhere: pauses.everywhere.is_some(),
            providers: pauses
                .providers
                .iter()
                .filter(|provider| provider.paused_since.is_some())
                .map(|provider| provider.provider.clone())
                .collect(),
        }
    }

    /// The sentence, when anything is paused.
    pub fn sentence(&self) -> Option<String> {
        if self.everywhere {
            Some("Automatic recovery is paused everywhere.".to_owned())
        } else if self.providers.is_empty() {
            None
        } else {
            Some(format!(
                "Automatic recovery is paused for {}.",
                self.providers.join(", ")
            ))
        }
    }
}
