//! The route view's heading: the state first, then what happens next, then why.

use api::{RouteView, TaskView, Timestamp};
use leptos::prelude::*;
use policy::route::RouteState;

use super::live::Connection;
use super::words::{
    candidate_label, clock_time, countdown, countdown_spoken, deadline_words, relative, retry_line,
    state_label, then_line, zoned_time,
};

/// State first, then what happens next, then why.
#[component]
pub(crate) fn RouteHeader(
    task: RwSignal<TaskView>,
    route: Memo<RouteView>,
    now: Signal<Timestamp>,
    connection: Connection,
) -> impl IntoView {
    let state = move || route.with(|route| route.state);
    let badge_class = move || format!("badge state-{}", state().as_str());
    let candidate =
        move || route.with(|route| candidate_label(route.candidate_index, &route.model));
    let next = move || {
        task.with(|task| {
            let route = &task.route;
            let mut parts = Vec::new();
            if let Some(retry) = retry_line(route) {
                parts.push(retry);
            }
            if let Some(then) = then_line(route, &task.candidates) {
                parts.push(then);
            }
            parts.join(" · ")
        })
    };
    // A time in an agent CLI's zone comes from the browser's zone data, once
    // hydrated (the server's page shows UTC, and hydration keeps its text).
    let hydrated = RwSignal::new(false);
    Effect::new(move |_| hydrated.set(true));
    // The countdown for screen readers: announced politely, once a minute.
    let spoken = move |what: String, deadline: Timestamp, time: Signal<String>| {
        let words = Memo::new(move |_| countdown_spoken(deadline, now.get()));
        move || format!("{what}{}: {}", time.get(), words.get())
    };
    // When the wait ends, what it is called, and the zone to show it in.
    let deadline = Memo::new(move |_| {
        task.with(|task| {
            let route = &task.route;
            let candidate = task.candidates.get(route.candidate_index as usize);
            route.deadline.map(|deadline| {
                let words = deadline_words(
                    route,
                    candidate.map(|candidate| candidate.provider.as_str()),
                );
                let zone = candidate.and_then(|candidate| candidate.time_zone.clone());
                (deadline, words, zone)
            })
        })
    });
    let failure = move || {
        route.with(|route| match (route.code, route.class) {
            (Some(code), Some(class)) => Some(format!(
                "{} ({}){}",
                code.as_str(),
                class.as_str(),
                route
                    .catalogue
                    .as_ref()
                    .map(|version| format!(", catalogue {version}"))
                    .unwrap_or_default()
            )),
            _ => None,
        })
    };
    let cause = move || {
        route.with(|route| match (route.state, route.cause) {
            (RouteState::Held | RouteState::Stopped, Some(cause)) => Some(cause.describe()),
            _ => None,
        })
    };
    view! {
        <section class="card route-header" aria-labelledby="route-state">
            <p class="live-status" aria-hidden="true">
                {move || if connection.0.get() { "Live" } else { "Not live: showing the page as it was read" }}
            </p>
            <h2 id="route-state" aria-live="polite">
                <span class=badge_class>{move || state_label(state())}</span>
                " on " <span class="route-candidate">{candidate}</span>
            </h2>
            <p class="next" hidden=move || next().is_empty()>{next}</p>
            {move || deadline.get().map(|(deadline, what, zone)| {
                let time = Signal::derive(move || {
                    zone.as_deref()
                        .filter(|_| hydrated.get())
                        .and_then(|zone| zoned_time(deadline, zone))
                        .unwrap_or_else(|| clock_time(deadline))
                });
                view! {
                    <p class="deadline">
                        {what.clone()}
                        <time datetime=deadline.to_string()>{time}</time>
                        " ("
                        <span role="timer" class="countdown">{move || countdown(deadline, now.get())}</span>
                        ")"
                    </p>
                    <p class="visually-hidden" aria-live="polite">{spoken(what, deadline, time)}</p>
                }
            })}
            <dl class="facts">
                <dt>"Last failure"</dt>
                <dd>{move || failure().unwrap_or_else(|| "none".to_owned())}</dd>
                {move || route.with(|route| route.safe_cause.clone()).map(|safe_cause| view! {
                    <dt>{move || if route.with(|route| route.circuit_wait) { "Why it waits" } else { "Provider said" }}</dt>
                    <dd class="safe-cause">{safe_cause}</dd>
                })}
                {move || cause().map(|cause| view! { <dt>"Why"</dt><dd class="cause">{cause}</dd> })}
                <dt>"Generation"</dt>
                <dd class="generation">{move || route.with(|route| route.generation.get())}</dd>
                <dt>"Changed"</dt>
                <dd>{move || route.with(|route| relative(route.updated_at, now.get()))}</dd>
            </dl>
        </section>
    }
}
