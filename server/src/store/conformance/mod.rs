//! The store conformance suite: every driver runs these against a real
//! database, one module per aggregate. Each function sets up what it needs
//! with fresh names.

mod batch;
mod profiles;
mod providers;
mod tasks;

use api::{CandidateId, FieldError, ProviderId, Timestamp};
use policy::{EscalationSettings, PolicyDocument, ProviderFamily, ProviderKind};

use super::{Store, StoreError};
use crate::domain::{Candidate, ProviderWrite};

pub use profiles::{concurrent_updates_exactly_one_wins, seed_profile};
pub use tasks::{
    concurrent_commits_exactly_one_wins, concurrent_commits_exactly_one_wins_across,
    concurrent_commits_keep_their_order,
};
pub(crate) use tasks::{firing, refused_at, waiting_until};

/// Every conformance check but the concurrent one.
pub async fn run_all(store: &dyn Store) {
    providers::providers(store).await;
    profiles::profiles(store).await;
    tasks::tasks(store).await;
    tasks::firings(store).await;
    batch::batches(store).await;
}

fn at(millis: i64) -> Timestamp {
    Timestamp::from_millis(millis)
}

fn provider_write(id: &str, name: &str) -> ProviderWrite {
    ProviderWrite {
        id: ProviderId::new(id),
        name: name.to_owned(),
        kind: ProviderKind::Anthropic,
        family: ProviderFamily::Anthropic,
        base_url: "https://api.anthropic.com".to_owned(),
        api_key_env: Some("ANTHROPIC_API_KEY".to_owned()),
        timeouts: None,
        script: None,
        now: at(1_000),
    }
}

fn candidate(id: &str, provider_id: &str, model: &str) -> Candidate {
    Candidate {
        id: CandidateId::new(id),
        provider_id: ProviderId::new(provider_id),
        model: model.to_owned(),
        enabled: true,
        max_tokens: 4_096,
        escalation: EscalationSettings::default(),
        policy: PolicyDocument::default(),
    }
}

fn field_codes(error: StoreError) -> Vec<(String, &'static str)> {
    match error {
        StoreError::Invalid(errors) => errors
            .into_iter()
            .map(|error: FieldError| (error.field, error.code.as_str()))
            .collect(),
        other => panic!("expected field errors, got {other:?}"),
    }
}
