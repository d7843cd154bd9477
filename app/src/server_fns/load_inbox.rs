use api::{ApiError, InboxView, ReclassifyView};
use leptos::prelude::*;
use serde::{Deserialize, Serialize};

/// The inbox page's data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InboxData {
    /// What the catalogue was unsure of, grouped.
    pub inbox: InboxView,
    /// When asked for: what the current catalogue reads differently in the
    /// evidence stored with past attempts.
    pub reclassified: Option<ReclassifyView>,
}

/// The catalogue's inbox and, when `reclassify` asks, the stored evidence read
/// again (nothing changes).
#[server(prefix = "/fn", endpoint = "load_inbox", output = api::JsonAnswer)]
pub async fn load_inbox(reclassify: bool) -> Result<InboxData, ApiError> {
    let backend = crate::backend::backend()?;
    Ok(InboxData {
        inbox: backend.catalogue_inbox().await?,
        reclassified: match reclassify {
            true => Some(backend.reclassify().await?),
            false => None,
        },
    })
}
