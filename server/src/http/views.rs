//! Domain types to the wire shapes the app defines (`app::model`).

use app::model::{CandidateView, ProfileView, ProviderView};

use crate::clock::rfc3339;
use crate::domain::{Candidate, Profile, Provider};

/// A provider as answered: whether its key variable is set, never its value.
pub fn provider_view(provider: Provider) -> ProviderView {
    let api_key_env_set = provider
        .api_key_env
        .as_deref()
        .and_then(std::env::var_os)
        .is_some_and(|value| !value.is_empty());
    ProviderView {
        id: provider.id,
        name: provider.name,
        kind: provider.kind.as_str().to_owned(),
        family: provider.family.as_str().to_owned(),
        base_url: provider.base_url,
        api_key_env: provider.api_key_env,
        api_key_env_set,
        revision: provider.revision,
        created_at: rfc3339(provider.created_at_ms),
        updated_at: rfc3339(provider.updated_at_ms),
    }
}

/// A profile as answered, candidates in order.
pub fn profile_view(profile: Profile) -> ProfileView {
    ProfileView {
        id: profile.id,
        name: profile.name,
        revision: profile.revision,
        candidates: profile.candidates.into_iter().map(candidate_view).collect(),
        created_at: rfc3339(profile.created_at_ms),
        updated_at: rfc3339(profile.updated_at_ms),
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
