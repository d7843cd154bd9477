//! The route view's history: the attempts as a timeline, waits as gaps, and the
//! candidates passed over without a call in their place among them.

use api::{AttemptView, PassedOverView, RouteView, Timestamp};
use leptos::prelude::*;

use super::words::{
    candidate_label, circuit_owner, clock_time, duration, failure_words, gap_words,
};

/// One row of the history, in the order it happened.
enum Entry<'a> {
    Attempt(&'a AttemptView),
    PassedOver(&'a PassedOverView),
}

impl Entry<'_> {
    fn at(&self) -> Timestamp {
        match self {
            Self::Attempt(attempt) => attempt.started_at,
            Self::PassedOver(passed) => passed.at,
        }
    }

    fn candidate_index(&self) -> u32 {
        match self {
            Self::Attempt(attempt) => attempt.candidate_index,
            Self::PassedOver(passed) => passed.candidate_index,
        }
    }
}

/// The attempts and the candidates passed over, oldest first, one row each;
/// waits drawn as gaps between them.
#[component]
pub(crate) fn Timeline(
    attempts: Vec<AttemptView>,
    passed_over: Vec<PassedOverView>,
    route: RouteView,
    created_at: Timestamp,
) -> impl IntoView {
    if attempts.is_empty() && passed_over.is_empty() && !route.state.has_deadline() {
        return view! { <p class="empty">"No attempt yet."</p> }.into_any();
    }
    let mut entries: Vec<Entry> = attempts
        .iter()
        .map(Entry::Attempt)
        .chain(passed_over.iter().map(Entry::PassedOver))
        .collect();
    // Within a turn a route only moves on to later candidates: of an attempt and
    // a candidate passed over at the same millisecond, the earlier candidate's
    // came first.
    entries.sort_by_key(|entry| (entry.at(), entry.candidate_index()));
    let mut rows = Vec::new();
    let mut previous: Option<&AttemptView> = None;
    // When the row before ended (the task's start before the first), and
    // whether it was a candidate skipped without a call.
    let mut since = Some(created_at);
    let mut after_skip = false;
    let mut number = 0;
    for entry in entries {
        let attempt = match entry {
            Entry::PassedOver(passed) => {
                rows.push(passed_over_row(passed));
                since = Some(passed.at);
                after_skip = passed.decision == "skip";
                continue;
            }
            Entry::Attempt(attempt) => attempt,
        };
        number += 1;
        // From the end of the row before (or the task's start) to this one.
        if let Some(since) = since {
            let waited = attempt.started_at.as_millis() - since.as_millis();
            let what = if after_skip {
                Some("skipped to the next candidate".to_owned())
            } else {
                gap_words(previous, attempt)
            };
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
        since = attempt.finished_at;
        after_skip = false;
        rows.push(attempt_row(number, attempt));
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

/// An attempt's row: the candidate, how it ended, when, and what was decided.
fn attempt_row(number: usize, attempt: &AttemptView) -> AnyView {
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
    view! {
        <li class="attempt">
            <p class="attempt-line">
                <strong>{format!("#{number} ")}{candidate_label(attempt.candidate_index, &attempt.model)}</strong>
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
    }
    .into_any()
}

/// A candidate passed over: no request was sent, and why.
fn passed_over_row(passed: &PassedOverView) -> AnyView {
    view! {
        <li class="attempt passed-over">
            <p class="attempt-line">
                <strong>{candidate_label(passed.candidate_index, &passed.model)}</strong>
                " · "
                <span class="outcome outcome-not-sent">"not sent"</span>
            </p>
            <p class="attempt-times">
                <time datetime=passed.at.to_string()>{clock_time(passed.at)}</time>
            </p>
            <p class="attempt-failure">{passed.code.as_str()} " (" {passed.code.class().as_str()} ")"</p>
            <p class="safe-cause">{passed.safe_cause.clone()}</p>
            <p class="decision">"Decision: " {passed.decision.clone()}</p>
        </li>
    }
    .into_any()
}
