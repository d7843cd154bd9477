use policy::normalize_profile;
use serde_json::Value;

use super::providers::revision_of;
use super::{new_id, Services};
use crate::domain::{Candidate, IdOrigin, Profile, ProfileWrite};
use crate::error::AppError;

impl Services {
    /// Every dynamic profile, by name.
    pub async fn list_profiles(&self) -> Result<Vec<Profile>, AppError> {
        Ok(self.store.list_profiles().await?)
    }

    /// One dynamic profile.
    pub async fn get_profile(&self, id: &str) -> Result<Profile, AppError> {
        Ok(self.store.get_profile(id).await?)
    }

    /// Create a profile from a request body (policies of version 1, 2 or none).
    pub async fn create_profile(&self, body: &Value) -> Result<Profile, AppError> {
        let write = self.profile_write(new_id(), body, false)?.0;
        Ok(self.store.create_profile(write).await?)
    }

    /// Replace a profile from a request body carrying the revision it was read at.
    pub async fn update_profile(&self, id: &str, body: &Value) -> Result<Profile, AppError> {
        let (write, revision) = self.profile_write(id.to_owned(), body, true)?;
        Ok(self.store.update_profile(write, revision).await?)
    }

    /// Delete a profile.
    pub async fn delete_profile(&self, id: &str) -> Result<(), AppError> {
        Ok(self.store.delete_profile(id).await?)
    }

    fn profile_write(
        &self,
        id: String,
        body: &Value,
        revision_required: bool,
    ) -> Result<(ProfileWrite, i64), AppError> {
        let draft = normalize_profile(body, revision_required).map_err(AppError::Invalid)?;
        let candidates = draft
            .candidates
            .into_iter()
            .map(|candidate| {
                let (id, origin) = match candidate.id {
                    Some(id) => (id, IdOrigin::Client),
                    None => (new_id(), IdOrigin::New),
                };
                let stored = Candidate {
                    id,
                    provider_id: candidate.provider_id,
                    model: candidate.model,
                    enabled: candidate.enabled,
                    max_tokens: candidate.max_tokens,
                    escalation: candidate.escalation,
                    policy: candidate.policy,
                };
                (stored, origin)
            })
            .collect();
        let write = ProfileWrite {
            id,
            name: draft.name,
            candidates,
            now_ms: self.clock.now_ms(),
        };
        Ok((write, revision_of(draft.revision)))
    }
}
