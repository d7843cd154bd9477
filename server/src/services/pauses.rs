//! A person's pause of automatic recovery, everywhere or on one provider.

use api::{PauseNotice, PauseRequest, PausesView, ProviderPauseView, Timestamp, read::Read};

use super::Services;
use crate::error::AppError;

impl Services {
    /// What is paused: everything, and each provider.
    pub async fn pauses(&self) -> Result<PausesView, AppError> {
        let pauses = self.store.list_pauses().await?;
        let since = |provider_id: Option<&api::ProviderId>| {
            pauses
                .iter()
                .find(|pause| pause.provider_id.as_ref() == provider_id)
                .map(|pause| Timestamp::from_millis(pause.paused_at_ms))
        };
        let mut providers: Vec<ProviderPauseView> = self
            .store
            .list_providers()
            .await?
            .into_iter()
            .map(|provider| ProviderPauseView {
                paused_since: since(Some(&provider.id)),
                provider_id: provider.id,
                provider: provider.name,
            })
            .collect();
        // A provider deleted while paused: listed by its id, so it can be resumed.
        for pause in &pauses {
            if let Some(id) = &pause.provider_id
                && !providers.iter().any(|provider| &provider.provider_id == id)
            {
                providers.push(ProviderPauseView {
                    provider_id: id.clone(),
                    provider: id.to_string(),
                    paused_since: Some(Timestamp::from_millis(pause.paused_at_ms)),
                });
            }
        }
        Ok(PausesView {
            everywhere: since(None),
            providers,
        })
    }

    /// Pause or resume automatic recovery, recorded; answers what is paused
    /// then. Pausing a provider that does not exist is a 404, and nothing
    /// changes; resuming one deleted since it was paused is allowed.
    pub async fn set_pause(&self, request: Read<PauseRequest>) -> Result<PausesView, AppError> {
        let request = request.check(PauseRequest::check)?;
        if let Some(id) = &request.provider_id
            && request.paused
        {
            self.store.get_provider(id).await?;
        }
        self.engine
            .set_pause(request.provider_id.as_ref(), request.paused)
            .await?;
        self.pauses().await
    }

    /// What every page's top bar says is paused, from what the engine keeps
    /// (no read of the store).
    pub fn pause_notice(&self) -> PauseNotice {
        let pauses = self.engine.pauses();
        PauseNotice {
            everywhere: pauses.iter().any(|pause| pause.provider_id.is_none()),
            providers: pauses
                .into_iter()
                .filter_map(|pause| {
                    let id = pause.provider_id?;
                    Some(pause.provider_name.unwrap_or_else(|| id.to_string()))
                })
                .collect(),
        }
    }
}
