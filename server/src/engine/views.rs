//! Domain to wire: the route, attempt, turn and task views the API answers and
//! the live events carry.

use api::{
    AttemptView, CandidateId, Generation, PassedOverView, RouteView, TaskCandidateView, TaskKind,
    TaskSummary, TaskView, Timestamp, TurnView,
};

use crate::domain::{Attempt, RouteRecord, Task, TaskDetail, TaskListing, Turn};

fn index(position: usize) -> u32 {
    u32::try_from(position).unwrap_or(u32::MAX)
}

/// The route as clients see it; `task` names its candidate and policy.
pub fn route_view(task: &Task, record: &RouteRecord) -> RouteView {
    let route = &record.route;
    let candidate = task.candidates.get(route.candidate);
    let max_retries = route.failure.as_ref().and_then(|failure| {
        candidate
            .and_then(|candidate| candidate.policy.section(failure.class))
            .filter(|section| section.retry.enabled)
            .map(|section| section.retry.max_retries)
    });
    RouteView {
        task_id: record.task_id.clone(),
        state: route.state,
        generation: Generation::new(route.generation),
        candidate_index: index(route.candidate),
        candidate_id: candidate.map_or_else(
            || CandidateId::new("missing"),
            |candidate| candidate.id.clone(),
        ),
        model: candidate.map_or_else(String::new, |candidate| candidate.model.clone()),
        deadline: route.deadline_ms.map(Timestamp::from_millis),
        circuit_wait: route.circuit_wait,
        class: route.failure.as_ref().map(|failure| failure.class),
        code: route.failure.as_ref().map(|failure| failure.code),
        catalogue: route
            .failure
            .as_ref()
            .map(|failure| failure.catalogue.clone()),
        safe_cause: route
            .failure
            .as_ref()
            .map(|failure| failure.safe_cause.clone()),
        retry_ordinal: route.retry_ordinal,
        max_retries,
        pending_outcome: route.pending_outcome,
        decision: route.decision.map(|decision| decision.name().to_owned()),
        cause: route.cause,
        turn: route.turn,
        actions: route.state.actions().to_vec(),
        updated_at: record.updated_at,
    }
}

/// One attempt as clients see it.
pub fn attempt_view(attempt: &Attempt) -> AttemptView {
    let end = attempt.end.as_ref();
    let verdict = end.and_then(|end| end.verdict.as_ref());
    AttemptView {
        id: attempt.id.clone(),
        turn: attempt.turn,
        candidate_index: index(attempt.candidate_index),
        candidate_id: attempt.candidate_id.clone(),
        model: attempt.model.clone(),
        ordinal: attempt.ordinal,
        max_tokens: attempt.max_tokens,
        probe: attempt.probe,
        after_circuit_wait: attempt.after_circuit_wait,
        started_at: attempt.started_at,
        finished_at: end.map(|end| end.finished_at),
        outcome: end.map(|end| end.outcome.as_str().to_owned()),
        class: verdict.map(|verdict| verdict.class),
        code: verdict.map(|verdict| verdict.code),
        confidence: verdict.map(|verdict| verdict.confidence),
        catalogue: verdict.map(|verdict| verdict.catalogue.clone()),
        safe_cause: verdict.map(|verdict| verdict.safe_cause.clone()),
        reset_at: verdict
            .and_then(|verdict| verdict.reset_at_ms)
            .map(Timestamp::from_millis),
        decision: end
            .and_then(|end| end.decision)
            .map(|decision| decision.name().to_owned()),
    }
}

/// One turn as clients see it.
pub fn turn_view(turn: &Turn) -> TurnView {
    TurnView {
        number: turn.number,
        prompt: turn.prompt.clone(),
        answer: turn.answer.clone(),
        truncated: turn.truncated,
        tool_calls: turn
            .tool_calls
            .iter()
            .map(|call| api::ToolCallView {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: call.arguments.clone(),
            })
            .collect(),
        candidate_index: turn
            .producer
            .as_ref()
            .map(|producer| index(producer.candidate_index)),
        candidate_id: turn
            .producer
            .as_ref()
            .map(|producer| producer.candidate_id.clone()),
        model: turn
            .producer
            .as_ref()
            .map(|producer| producer.model.clone()),
        created_at: turn.created_at,
        completed_at: turn.completed_at,
    }
}

/// How the task was started.
fn task_kind(task: &Task) -> TaskKind {
    if task.gateway.is_some() {
        TaskKind::Gateway
    } else {
        TaskKind::Task
    }
}

/// A task with its route, attempts and turns, as clients see it.
pub fn task_view(detail: &TaskDetail) -> TaskView {
    let task = &detail.task;
    TaskView {
        id: task.id.clone(),
        kind: task_kind(task),
        profile_id: task.profile_id.clone(),
        profile_name: task.profile_name.clone(),
        created_at: task.created_at,
        candidates: task
            .candidates
            .iter()
            .map(|candidate| TaskCandidateView {
                id: candidate.id.clone(),
                provider_id: candidate.provider_id.clone(),
                // Named by the services, which read the providers.
                provider: candidate.provider_id.to_string(),
                time_zone: None,
                model: candidate.model.clone(),
                enabled: candidate.enabled,
            })
            .collect(),
        route: route_view(task, &detail.route),
        attempts: detail.attempts.iter().map(attempt_view).collect(),
        passed_over: detail
            .passed_over
            .iter()
            .map(|passed| PassedOverView {
                turn: passed.turn,
                candidate_index: index(passed.candidate_index),
                candidate_id: passed.candidate_id.clone(),
                model: passed.model.clone(),
                at: passed.at,
                code: passed.code,
                safe_cause: passed.safe_cause.clone(),
                decision: passed.decision.name().to_owned(),
            })
            .collect(),
        turns: detail.turns.iter().map(turn_view).collect(),
    }
}

/// The most characters of a prompt a list shows.
const LISTED_PROMPT_CHARS: usize = 200;

/// A task in a list.
pub fn task_summary(listing: &TaskListing) -> TaskSummary {
    TaskSummary {
        id: listing.task.id.clone(),
        kind: task_kind(&listing.task),
        profile_id: listing.task.profile_id.clone(),
        profile_name: listing.task.profile_name.clone(),
        created_at: listing.task.created_at,
        prompt: listing.prompt.chars().take(LISTED_PROMPT_CHARS).collect(),
        route: route_view(&listing.task, &listing.route),
    }
}
