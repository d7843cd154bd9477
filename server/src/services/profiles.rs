use api::read::Read;
use api::{CandidateId, ProfileId, ProfileRequest, ProfileSpec, ProfileView};

use super::views::profile_view;
use super::{Services, new_id};
use crate::domain::{Candidate, IdOrigin, ProfileWrite};
use crate::error::AppError;

impl Services {
    /// Every dynamic profile, by name.
    pub async fn list_profiles(&self) -> Result<Vec<ProfileView>, AppError> {
        let profiles = self.store.list_profiles().await?;
        Ok(profiles.into_iter().map(profile_view).collect())
    }

    /// One dynamic profile.
    pub async fn get_profile(&self, id: &ProfileId) -> Result<ProfileView, AppError> {
        Ok(profile_view(self.store.get_profile(id).await?))
    }

    /// Create a profile (policies of version 1, 2 or none).
    pub async fn create_profile(
        &self,
        request: Read<ProfileRequest>,
    ) -> Result<ProfileView, AppError> {
        let spec = request.check(ProfileRequest::check)?;
        let write = self.profile_write(ProfileId::new(new_id()), spec);
        Ok(profile_view(self.store.create_profile(write).await?))
    }

    /// Replace a profile; the request carries the revision it was read at.
    pub async fn update_profile(
        &self,
        id: &ProfileId,
        request: Read<ProfileRequest>,
    ) -> Result<ProfileView, AppError> {
        let (spec, expected) = request.check(ProfileRequest::check_update)?;
        let write = self.profile_write(id.clone(), spec);
        Ok(profile_view(
            self.store.update_profile(write, expected).await?,
        ))
    }

    /// Delete a profile.
    pub async fn delete_profile(&self, id: &ProfileId) -> Result<(), AppError> {
        Ok(self.store.delete_profile(id).await?)
    }

    fn profile_write(&self, id: ProfileId, spec: ProfileSpec) -> ProfileWrite {
        let candidates = spec
            .candidates
            .into_iter()
            .map(|candidate| {
                let (id, origin) = match candidate.id {
                    Some(id) => (id, IdOrigin::Client),
                    None => (CandidateId::new(new_id()), IdOrigin::New),
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
        ProfileWrite {
            id,
            name: spec.name,
            candidates,
            gateway_deadline_s: spec.gateway_deadline_s,
            now: self.clock.now(),
        }
    }
}
