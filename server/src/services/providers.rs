use api::read::Read;
use api::{ProviderId, ProviderRequest, ProviderSpec, ProviderView};
use policy::ProviderKind;

use super::{Services, new_id};
use crate::domain::ProviderWrite;
use crate::error::AppError;

impl Services {
    /// Every provider, by name.
    pub async fn list_providers(&self) -> Result<Vec<ProviderView>, AppError> {
        let providers = self.store.list_providers().await?;
        Ok(providers
            .into_iter()
            .map(|p| self.provider_view(p))
            .collect())
    }

    /// One provider.
    pub async fn get_provider(&self, id: &ProviderId) -> Result<ProviderView, AppError> {
        Ok(self.provider_view(self.store.get_provider(id).await?))
    }

    /// Create a provider.
    pub async fn create_provider(
        &self,
        request: Read<ProviderRequest>,
    ) -> Result<ProviderView, AppError> {
        let spec = request.check(|request| request.check(&self.key_envs))?;
        let write = self.provider_write(ProviderId::new(new_id()), spec)?;
        Ok(self.provider_view(self.store.create_provider(write).await?))
    }

    /// Replace a provider; the request carries the revision it was read at.
    pub async fn update_provider(
        &self,
        id: &ProviderId,
        request: Read<ProviderRequest>,
    ) -> Result<ProviderView, AppError> {
        let (mut spec, expected) = request.check(|request| request.check_update(&self.key_envs))?;
        // Left out, a cli provider's settings are kept: there must be some, and
        // their preset names the family.
        if spec.kind == ProviderKind::Cli && spec.cli.is_none() {
            let Some(stored) = self.store.get_provider(id).await?.cli else {
                // Whether there is one to keep is the stored provider's state.
                return Err(vec![api::FieldError::new(
                    &api::FieldPath::root().field("cli"),
                    api::ErrorCode::NotFound,
                    "names no settings to keep: this provider has none yet, so send them (at least the preset)",
                )]
                .into());
            };
            if let Some(family) = stored.preset.family() {
                spec.family = family;
            }
        }
        let write = self.provider_write(id.clone(), spec)?;
        Ok(self.provider_view(self.store.update_provider(write, expected).await?))
    }

    /// Delete a provider that no profile uses.
    pub async fn delete_provider(&self, id: &ProviderId) -> Result<(), AppError> {
        Ok(self.store.delete_provider(id).await?)
    }

    /// The write for a checked provider: its script read step by step (every bad
    /// step's error, at `script[N]...`).
    fn provider_write(
        &self,
        id: ProviderId,
        spec: ProviderSpec,
    ) -> Result<ProviderWrite, Vec<api::FieldError>> {
        // The browser checks a zone's form; only the server knows the zones.
        if let Some(zone) = spec.cli.as_ref().and_then(|cli| cli.time_zone.as_deref())
            && catalogue::time_zone(zone).is_none()
        {
            return Err(vec![api::FieldError::new(
                &api::FieldPath::root().field("cli").field("time_zone"),
                api::ErrorCode::NotFound,
                "names no time zone the server knows (an IANA name, such as Europe/Berlin)",
            )]);
        }
        // A key pasted into the command would be stored and shown: it goes
        // through an allowed variable instead.
        let pasted: Vec<api::FieldError> = spec
            .cli
            .iter()
            .flat_map(|cli| cli.command.iter().enumerate())
            .filter(|(_, word)| catalogue::redact_secrets(word) != **word)
            .map(|(index, _)| {
                api::FieldError::new(
                    &api::FieldPath::root().field("cli").field("command").index(index),
                    api::ErrorCode::Type,
                    "looks like a key or token: pass it in a variable the CLI may see, never in the command",
                )
            })
            .collect();
        if !pasted.is_empty() {
            return Err(pasted);
        }
        let script = match &spec.script {
            Some(script) => Some(providers::parse_script(script).map_err(|errors| {
                errors
                    .iter()
                    .map(|error| error.field_error("script"))
                    .collect::<Vec<_>>()
            })?),
            None => None,
        };
        Ok(ProviderWrite {
            id,
            name: spec.name,
            kind: spec.kind,
            family: spec.family,
            base_url: spec.base_url,
            api_key_env: spec.api_key_env,
            timeouts: spec.timeouts.map(|timeouts| providers::Timeouts {
                connect_ms: timeouts.connect_ms,
                first_byte_ms: timeouts.first_byte_ms,
                idle_ms: timeouts.idle_ms,
            }),
            script,
            cli: spec.cli,
            now: self.clock.now(),
        })
    }
}
