//! The store conformance suite: every driver runs these against a real
//! database, one module per aggregate, one function per behaviour, each on an
//! empty store of its own. [`conformance_tests!`] makes one named test of each
//! for a driver, so one failure never hides another.

mod batch;
mod profiles;
mod providers;
mod tasks;

use api::{CandidateId, FieldError, ProviderId, Timestamp};
use policy::{EscalationSettings, PolicyDocument, ProviderFamily, ProviderKind};

use super::StoreError;
use crate::domain::{Candidate, ProviderWrite};

pub use batch::{
    a_batch_commit_carries_any_transition, a_batch_commit_fences_each_route_on_its_own,
    a_batch_reads_snapshots_and_unfinished_attempts,
};
pub use profiles::{
    a_deleted_profile_is_gone, a_profile_is_found_by_its_name_in_any_case,
    a_profile_keeps_its_candidates_as_written, a_profile_update_reorders_keeps_ids_and_adds,
    a_taken_profile_name_does_not_hide_other_errors, concurrent_updates_exactly_one_wins,
    profile_references_are_checked_and_a_refusal_writes_nothing, seed_profile,
    stale_unknown_and_missing_profile_updates_change_nothing,
};
pub use providers::{
    a_provider_in_use_cannot_go_and_an_unused_one_can,
    provider_names_are_unique_regardless_of_case, provider_updates_are_fenced_by_revision,
    providers_are_created_read_and_listed_by_name,
};
pub use tasks::{
    a_commit_is_fenced_by_its_generation, a_finished_attempt_never_changes,
    a_gateway_call_keeps_its_request_and_deadline, a_new_task_comes_with_its_first_start,
    a_task_keeps_its_snapshot, an_idempotency_key_answers_the_first_task,
    an_unfinished_task_keeps_its_profile, attempts_with_evidence_are_read_newest_first,
    circuits_are_listed_closed_by_a_person_and_kept_in_history, circuits_open_probe_once_and_close,
    client_keys_are_found_by_digest_until_revoked, concurrent_commits_exactly_one_wins,
    concurrent_commits_exactly_one_wins_across, concurrent_commits_keep_their_order,
    deadlines_are_due_once_they_pass, firings, overview_reads_held_waiting_circuits_and_counts,
    paused_routes_are_not_due_and_pauses_are_kept, route_events_are_read_after_an_id_and_pruned,
    routes_are_read_a_page_at_a_time, tasks_are_listed_by_state,
    turns_are_answered_and_added_and_progress_agrees,
};
pub(crate) use tasks::{firing, refused_at, waiting_until};

/// The whole suite as tests, one `#[tokio::test]` per behaviour, each named
/// after it, on a store `$open` makes: an expression (it may `.await`) giving a
/// fresh, empty store and whatever must live as long as it, as a pair.
macro_rules! conformance_tests {
    ($open:expr) => {
        $crate::store::conformance::conformance_tests!(@each $open;
            providers_are_created_read_and_listed_by_name,
            provider_names_are_unique_regardless_of_case,
            provider_updates_are_fenced_by_revision,
            a_provider_in_use_cannot_go_and_an_unused_one_can,
            a_profile_keeps_its_candidates_as_written,
            a_profile_is_found_by_its_name_in_any_case,
            profile_references_are_checked_and_a_refusal_writes_nothing,
            a_taken_profile_name_does_not_hide_other_errors,
            a_profile_update_reorders_keeps_ids_and_adds,
            stale_unknown_and_missing_profile_updates_change_nothing,
            a_deleted_profile_is_gone,
            concurrent_updates_exactly_one_wins,
            a_task_keeps_its_snapshot,
            a_new_task_comes_with_its_first_start,
            a_gateway_call_keeps_its_request_and_deadline,
            client_keys_are_found_by_digest_until_revoked,
            a_commit_is_fenced_by_its_generation,
            a_finished_attempt_never_changes,
            attempts_with_evidence_are_read_newest_first,
            turns_are_answered_and_added_and_progress_agrees,
            an_unfinished_task_keeps_its_profile,
            an_idempotency_key_answers_the_first_task,
            deadlines_are_due_once_they_pass,
            routes_are_read_a_page_at_a_time,
            circuits_open_probe_once_and_close,
            circuits_are_listed_closed_by_a_person_and_kept_in_history,
            overview_reads_held_waiting_circuits_and_counts,
            paused_routes_are_not_due_and_pauses_are_kept,
            route_events_are_read_after_an_id_and_pruned,
            tasks_are_listed_by_state,
            firings,
            concurrent_commits_exactly_one_wins,
            concurrent_commits_keep_their_order,
            a_batch_reads_snapshots_and_unfinished_attempts,
            a_batch_commit_fences_each_route_on_its_own,
            a_batch_commit_carries_any_transition,
        );
    };
    (@each $open:expr; $($behaviour:ident),* $(,)?) => {
        $(
            #[tokio::test]
            async fn $behaviour() {
                let (store, _kept) = $open;
                $crate::store::conformance::$behaviour(&store).await;
            }
        )*
    };
}
pub(crate) use conformance_tests;

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
        cli: None,
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
