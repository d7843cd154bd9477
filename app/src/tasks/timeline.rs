//! The route view's history: the attempts as a timeline, waits as gaps.

use api::{AttemptView, RouteView, Timestamp};
use leptos::prelude::*;

use super::words::{
    candidate_label, circuit_owner, clock_time, duration, failure_words, gap_words,
};

/// The attempts, oldest first, one row each; waits drawn as gaps between them.
#[component]
pub(crate) fn Timeline(
    attempts: Vec<AttemptView>,
    route: RouteView,
    created_at: Timestamp,
) -> impl IntoView {
    if attempts.is_empty() && !route.state.has_deadline() {
        return view! { <p class="empty">"No attempt yet."</p> }.into_any();
    }
    let mut rows = Vec::new();
    let mut previous: Option<&AttemptView> = None;
    for (number, attempt) in attempts.iter().enumerate() {
        // From the end of the attempt before (or the task's start) to this one.
        let since = match previous {
            Some(before) => before.finished_at,
            None => Some(created_at),
        };
        if let Some(since) = since {
            let waited = attempt.started_at.as_millis() - since.as_millis();
            let what = gap_words(previous, attempt);
            if what.is_some() || waited >= 1_000 {
                let what = what.unwrap_or_else(|| {
                    if previous.is_some() { "then" } else { "queued" }.to_owned()
                });
                rows.push(
                    view! {
                        <li class="gap"><span>{format!("{what}: {}", duration(waited))}</span></li>
                    }
                    .into_any(),
                );
            }
        }
        previous = Some(attempt);
        let outcome = attempt
            .outcome
            .clone()
            .unwrap_or_else(|| "in flight".to_owned());
        let outcome_class = format!("outcome outcome-{}", outcome.replace(' ', "-"));
        let took = attempt
            .finished_at
            .map(|end| duration(end.as_millis() - attempt.started_at.as_millis()));
        let failure = failure_words(attempt);
        let ordinal = attempt.ordinal.map(|ordinal| format!(", retry {ordinal}"));
        rows.push(view! {
            <li class="attempt">
                <p class="attempt-line">
                    <strong>{format!("#{} ", number + 1)}{candidate_label(attempt.candidate_index, &attempt.model)}</strong>
                    {ordinal}
                    {attempt.probe.then_some(" (probe)")}
                    " · "
                    <span class=outcome_class>{outcome}</span>
                </p>
                <p class="attempt-times">
                    <time datetime=attempt.started_at.to_string()>{clock_time(attempt.started_at)}</time>
                    {attempt.finished_at.map(|end| view! {
                        " to " <time datetime=end.to_string()>{clock_time(end)}</time>
                    })}
                    {took.map(|took| format!(" · took {took}"))}
                </p>
                {failure.map(|failure| view! { <p class="attempt-failure">{failure}
                    {attempt.catalogue.clone().map(|version| format!(" · catalogue {version}"))}</p> })}
                {attempt.safe_cause.clone().map(|cause| view! { <p class="safe-cause">{cause}</p> })}
                {attempt.decision.clone().map(|decision| view! { <p class="decision">"Decision: " {decision}</p> })}
            </li>
        }.into_any());
    }
    if route.state.has_deadline() {
        let what = if route.circuit_wait {
            format!("waiting on the {} circuit", circuit_owner(&route))
        } else {
            "waiting".to_owned()
        };
        rows.push(view! { <li class="gap current"><span>{what}</span></li> }.into_any());
    }
    view! { <ol class="timeline">{rows}</ol> }.into_any()
}
