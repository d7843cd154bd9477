//! Stored things as the API shows them.

use api::{CandidateView, ProfileView, ProviderView};

use super::Services;
use crate::domain::{Candidate, Profile, Provider};

impl Services {
    /// A provider as answered: whether its key variable is set, never its value.
    pub(super) fn provider_view(&self, provider: Provider) -> ProviderView {
        let api_key_env_set = provider
            .api_key_env
            .as_deref()
            .is_some_and(|name| self.secrets.is_set(name));
        ProviderView {
            id: provider.id,
            name: provider.name,
            kind: provider.kind,
            family: provider.family,
            base_url: provider.base_url,
            api_key_env: provider.api_key_env,
            api_key_env_set,
            timeouts: api::TimeoutsRequest {
                connect_ms: provider.timeouts.connect_ms,
                first_byte_ms: provider.timeouts.first_byte_ms,
                idle_ms: provider.timeouts.idle_ms,
            },
            script: (provider.kind == policy::ProviderKind::Simulated).then(|| {
                serde_json::Value::Array(
                    provider.script.iter().map(|step| step.to_json()).collect(),
                )
            }),
            cli: provider.cli.as_ref().map(api::CliRequest::from),
            revision: provider.revision,
            created_at: provider.created_at,
            updated_at: provider.updated_at,
        }
    }
}

/// A profile as answered, candidates in order.
pub(super) fn profile_view(profile: Profile) -> ProfileView {
    ProfileView {
        id: profile.id,
        name: profile.name,
        revision: profile.revision,
        candidates: profile.candidates.into_iter().map(candidate_view).collect(),
        gateway_deadline_s: profile.gateway_deadline_s,
        created_at: profile.created_at,
        updated_at: profile.updated_at,
    }
}

fn candidate_view(candidate: Candidate) -> CandidateView {
    CandidateView {
        id: candidate.id,
        provider_id: candidate.provider_id,
        model: candidate.model,
        enabled: candidate.enabled,
        max_tokens: candidate.max_tokens,
        escalation: candidate.escalation,
        policy: candidate.policy,
    }
}
