//! The stored calls a draft policy is played against in the editor's dry run.

use api::{
    REPLAY_TASKS_DEFAULT, ReplayCallView, ReplayQuery, ReplayTaskView, ReplayView, TaskId,
    Timestamp,
};
use policy::{Decision, HoldCause};

use super::Services;
use crate::domain::{AttemptOutcome, TaskDetail};
use crate::error::AppError;

/// The most stored failures read to find the tasks (newest first).
const FAILURES_READ: u32 = 2_000;

/// The most characters of a prompt shown.
const PROMPT_CHARS: usize = 200;

impl Services {
    /// The last tasks whose calls to the query's model of its provider failed,
    /// each with its first turn's calls on that candidate.
    pub async fn replay_calls(&self, query: ReplayQuery) -> Result<ReplayView, AppError> {
        let query = query.check().map_err(AppError::from)?;
        let limit = query.limit.unwrap_or(REPLAY_TASKS_DEFAULT) as usize;
        let mut ids: Vec<TaskId> = Vec::new();
        for attempt in self
            .store
            .attempts_with_evidence(false, FAILURES_READ)
            .await?
        {
            let failed = attempt
                .end
                .as_ref()
                .is_some_and(|end| end.outcome == AttemptOutcome::Failed);
            if failed
                && attempt.provider_id == query.provider_id
                && attempt.model == query.model
                && !ids.contains(&attempt.task_id)
            {
                ids.push(attempt.task_id);
                if ids.len() == limit {
                    break;
                }
            }
        }
        let mut tasks = Vec::with_capacity(ids.len());
        for id in ids {
            let detail = self.store.get_task(&id).await?;
            if let Some(task) = replay_task(&detail, &query) {
                tasks.push(task);
            }
        }
        Ok(ReplayView { tasks })
    }
}

/// The task's first-turn calls on its first candidate of that provider and
/// model, up to the one after which the route left it.
fn replay_task(detail: &TaskDetail, query: &ReplayQuery) -> Option<ReplayTaskView> {
    let first = detail.attempts.iter().find(|attempt| {
        attempt.turn == 1
            && attempt.provider_id == query.provider_id
            && attempt.model == query.model
    })?;
    let candidate_index = first.candidate_index;
    let mut calls = Vec::new();
    for attempt in detail
        .attempts
        .iter()
        .filter(|attempt| attempt.turn == 1 && attempt.candidate_index == candidate_index)
    {
        let Some(end) = &attempt.end else { break };
        let outcome = match end.outcome {
            AttemptOutcome::Answered => "answered",
            AttemptOutcome::Truncated => "truncated",
            AttemptOutcome::Failed => "failed",
            // Sent again with a larger token budget: not a failure a policy
            // judges, so not played.
            AttemptOutcome::Escalated => continue,
            // Ended by a person, a restart or a later attempt: nothing to play.
            _ => break,
        };
        let verdict = end.verdict.as_ref();
        let (next_at, moved_on) = match end.decision {
            Some(Decision::Retry { at_ms, .. }) => (Some(at_ms), false),
            Some(Decision::WaitForReset { until_ms }) => (Some(until_ms), false),
            Some(_) | None => (None, true),
        };
        calls.push(ReplayCallView {
            started_at: attempt.started_at,
            finished_at: end.finished_at,
            outcome: outcome.to_owned(),
            code: verdict.map(|verdict| verdict.code),
            confidence: verdict.map(|verdict| verdict.confidence),
            reset_at: verdict
                .and_then(|verdict| verdict.reset_at_ms)
                .map(Timestamp::from_millis),
            unsafe_effect: matches!(
                end.decision,
                Some(Decision::Hold {
                    cause: HoldCause::UnsafeEffect
                })
            ),
            decision: end.decision.map(|decision| decision.name().to_owned()),
            next_at: next_at.map(Timestamp::from_millis),
        });
        if moved_on {
            break;
        }
    }
    let task = &detail.task;
    Some(ReplayTaskView {
        task_id: task.id.clone(),
        profile_name: task.profile_name.clone(),
        prompt: detail
            .turns
            .first()
            .map(|turn| turn.prompt.chars().take(PROMPT_CHARS).collect())
            .unwrap_or_default(),
        created_at: task.created_at,
        candidate_index: u32::try_from(candidate_index).unwrap_or(u32::MAX),
        has_next_candidate: task.next_enabled_after(candidate_index).is_some(),
        respond_by: task.respond_by_ms().map(Timestamp::from_millis),
        calls,
    })
}
