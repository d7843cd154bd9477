use api::{
    ApiError, CircuitClosedView, CircuitsView, CloseCircuitRequest, OpenCircuitView, PauseRequest,
    PausesView, ProviderHistoryView, ProviderId, Timestamp,
};
use leptos::prelude::*;
use leptos_meta::Title;
use serde::{Deserialize, Serialize};

use crate::components::{CircuitReopens, CircuitTitle, ErrorNotice};
use crate::server_fns::{close_circuit, load_circuits, set_pause};
use crate::tasks::live::{use_reread_on_route_events, use_server_clock};
use crate::tasks::words::{clock_time, relative};

/// "Close now", sent from the page.
type CloseAction = Action<CloseCircuitRequest, Result<CircuitClosedView, ApiError>>;

/// A pause or a resume, sent from the page.
type SwitchAction = Action<PauseRequest, Result<PausesView, ApiError>>;

/// Provided by the server when it renders this page in answer to a plain form
/// post of "Close now": what became of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CircuitSubmission {
    /// What happened, for people: closed (and how many routes went), or why not.
    pub notice: String,
}

/// `/circuits`: every open or half-open circuit (over what, the failure that
/// opened it, its reset, the routes waiting on it, the route probing it), with
/// "Close now" for a person who knows the window reset early, and the last
/// day's openings by provider. Live: every route event reads it again.
#[component]
pub fn CircuitsPage() -> impl IntoView {
    // Only on the server, answering a plain form post; it reaches the browser
    // inside the resource, so both render the same page.
    let submission = use_context::<CircuitSubmission>();
    let data = Resource::new(
        || (),
        move |()| {
            let submission = submission.clone();
            async move { Ok::<_, ApiError>((load_circuits().await?, submission)) }
        },
    );
    let notice = RwSignal::new(None::<String>);
    let connection = use_reread_on_route_events(move || data.refetch());
    // The page's actions, outside what a read of the page rebuilds: a read that
    // lands while one is on its way (a route event's) does not drop its answer.
    let close = Action::new(|request: &CloseCircuitRequest| close_circuit(request.clone()));
    Effect::new(move |_| {
        let Some(result) = close.value().get() else {
            return;
        };
        notice.set(Some(match result {
            Ok(CircuitClosedView { released }) => closed_words(released.len()),
            Err(error) => error.to_string(),
        }));
        data.refetch();
    });
    let switch = Action::new(|request: &PauseRequest| set_pause(request.clone()));
    let banner = use_context::<crate::layout::PauseBanner>();
    Effect::new(move |_| {
        let Some(result) = switch.value().get() else {
            return;
        };
        match result {
            Ok(pauses) => {
                notice.set(None);
                // Every page's top bar says what is paused now.
                if let Some(banner) = banner {
                    banner.0.set(api::PauseNotice::of(&pauses).sentence());
                }
            }
            Err(error) => notice.set(Some(error.to_string())),
        }
        data.refetch();
    });
    view! {
        <Title text="Circuits" />
        <div class="page-heading">
            <h1>"Circuits"</h1>
            <span class="live-status" aria-hidden="true">
                {move || if connection.0.get() { "Live" } else { "Not live" }}
            </span>
        </div>
        <p class="lede">
            "A failure that says when a limit resets (a usage window, a quota, a rate limit) "
            "opens a circuit over its provider or model: no route sends there until the reset, "
            "and each waits for it within its own policy's wait or moves on."
        </p>
        {move || notice.get().map(|notice| view! { <p class="notice" role="status">{notice}</p> })}
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result| match result {
                        Ok(((circuits, pauses), submission)) => {
                            let sent = submission.map(|submission| {
                                view! { <p class="notice" role="status">{submission.notice}</p> }
                            });
                            view! {
                                {sent}
                                <Circuits circuits close />
                                <PauseSwitches pauses switch />
                            }
                            .into_any()
                        }
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Transition>
    }
}

#[component]
fn Circuits(circuits: CircuitsView, close: CloseAction) -> impl IntoView {
    let now = use_server_clock(circuits.now).now;
    let CircuitsView {
        circuits, history, ..
    } = circuits;
    view! {
        <section class="card" aria-labelledby="open-heading">
            <h2 id="open-heading">{format!("Open now ({})", circuits.len())}</h2>
            {if circuits.is_empty() {
                view! { <p class="empty">"Every provider and model is open to requests."</p> }.into_any()
            } else {
                view! {
                    <ul class="overview-list" aria-label="Open circuits">
                        {circuits.into_iter().map(|circuit| view! { <OpenCircuit circuit now close /> }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </section>
        <section class="card" aria-labelledby="history-heading">
            <h2 id="history-heading">"Last 24 hours"</h2>
            {if history.is_empty() {
                view! { <p class="empty">"No circuit opened in the last day."</p> }.into_any()
            } else {
                view! {
                    <ul class="overview-list" aria-label="Circuits of the last 24 hours">
                        {history.into_iter().map(|provider| view! { <ProviderHistory provider now /> }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </section>
    }
}

/// One open or half-open circuit, with its waiting routes and "Close now".
#[component]
fn OpenCircuit(
    circuit: OpenCircuitView,
    now: Signal<Timestamp>,
    close: CloseAction,
) -> impl IntoView {
    let OpenCircuitView {
        circuit,
        opened_at,
        waiting,
        waiting_total,
    } = circuit;
    let until = circuit.until;
    let probe = circuit.probe_task_id.clone().map(|id| {
        view! { <p class="task-facts"><a href=format!("/tasks/{id}")>"The task probing it"</a></p> }
    });
    let waiting_view = if waiting_total == 0 {
        view! { <p class="task-facts">"No route waits on it."</p> }.into_any()
    } else {
        let shown = waiting.len();
        view! {
            <p class="task-facts">
                {format!("{waiting_total} waiting: ")}
                {waiting.into_iter().enumerate().map(|(index, id)| view! {
                    {(index > 0).then_some(", ")}
                    <a href=format!("/tasks/{id}")>{format!("task {}", index + 1)}</a>
                }).collect_view()}
                {(waiting_total as usize > shown).then(|| format!(" and {} more", waiting_total as usize - shown))}
            </p>
        }
        .into_any()
    };
    let request = CloseCircuitRequest {
        provider_id: circuit.provider_id.clone(),
        model: circuit.model.clone(),
        until,
    };
    let label = format!(
        "circuit-{}-{}",
        circuit.provider_id,
        circuit.model.clone().unwrap_or_default()
    );
    let labelled_by = label.clone();
    view! {
        <li class="overview-item" aria-labelledby=labelled_by>
            <CircuitTitle circuit=circuit.clone() now id=label />
            <p class="task-facts">
                "Opened by " <span class="code">{circuit.code.as_str()}</span>
                " at " <time datetime=opened_at.to_string()>{clock_time(opened_at)}</time>
                " · " <CircuitReopens until now />
            </p>
            {waiting_view}
            {probe}
            <form class="action" method="post" action="/circuits/close"
                on:submit=move |event| {
                    event.prevent_default();
                    close.dispatch(request.clone());
                }>
                <input type="hidden" name="provider_id" value=circuit.provider_id.to_string() />
                <input type="hidden" name="model" value=circuit.model.clone().unwrap_or_default() />
                <input type="hidden" name="until" value=until.to_string() />
                <button type="submit" disabled=move || close.pending().get()>"Close now"</button>
                <span class="hint">" if you know its limit reset early: the routes waiting on it are sent now."</span>
            </form>
        </li>
    }
}

/// What a person's "Close now" did, for people.
fn closed_words(released: usize) -> String {
    match released {
        0 => "Closed. No route was waiting on it.".to_owned(),
        1 => "Closed: the route waiting on it was sent.".to_owned(),
        many => format!("Closed: the {many} routes waiting on it were sent."),
    }
}

/// A provider's last day: how many failures opened its circuits, and each
/// opening and closing.
#[component]
fn ProviderHistory(provider: ProviderHistoryView, now: Signal<Timestamp>) -> impl IntoView {
    let ProviderHistoryView {
        provider,
        openings,
        entries,
        ..
    } = provider;
    let times = if openings == 1 { "time" } else { "times" };
    view! {
        <li class="overview-item">
            <p class="task-title">{format!("{provider}: opened {openings} {times}")}</p>
            <ol class="circuit-history">
                {entries.into_iter().map(|entry| {
                    let over = entry.model.clone().unwrap_or_else(|| "every model".to_owned());
                    let at = entry.at;
                    let what = if entry.kind == "closed_by_person" {
                        "closed by a person".to_owned()
                    } else {
                        format!("opened by {} until {}", entry.code.as_str(), clock_time(entry.until))
                    };
                    view! {
                        <li>
                            <time datetime=at.to_string()>{clock_time(at)}</time>
                            {move || format!(" ({}) ", relative(at, now.get()))}
                            {over} ": " {what}
                            {entry.task_id.map(|id| view! { " · " <a href=format!("/tasks/{id}")>"its task"</a> })}
                        </li>
                    }
                }).collect_view()}
            </ol>
        </li>
    }
}

/// Pause automatic recovery everywhere or on one provider, and resume it: while
/// paused, no deadline fires and no attempt starts there.
#[component]
fn PauseSwitches(pauses: PausesView, switch: SwitchAction) -> impl IntoView {
    // A button that posts the switch: as a form without JavaScript.
    let button = move |provider_id: Option<ProviderId>, paused: bool, label: String| {
        let request = PauseRequest {
            provider_id: provider_id.clone(),
            paused,
        };
        view! {
            <form class="action" method="post" action="/pauses"
                on:submit=move |event| {
                    event.prevent_default();
                    switch.dispatch(request.clone());
                }>
                <input type="hidden" name="provider_id" value=provider_id.map(|id| id.to_string()).unwrap_or_default() />
                <input type="hidden" name="paused" value=paused.to_string() />
                <button type="submit" disabled=move || switch.pending().get()>{label}</button>
            </form>
        }
    };
    let everywhere = match pauses.everywhere {
        Some(since) => view! {
            <p>
                <span class="badge state-held">"Paused"</span>
                " everywhere since " <time datetime=since.to_string()>{clock_time(since)}</time>
            </p>
            {button(None, false, "Resume everywhere".to_owned())}
        }
        .into_any(),
        None => view! {
            <p>"Recovery runs everywhere."</p>
            {button(None, true, "Pause everywhere".to_owned())}
        }
        .into_any(),
    };
    view! {
        <section class="card" aria-labelledby="pause-heading">
            <h2 id="pause-heading">"Pause automatic recovery"</h2>
            <p class="hint">
                "While paused, no deadline fires and no attempt starts on what is paused: routes keep their states and deadlines. "
                "Resuming fires what came due, earliest first. A pause holds across restarts and on every replica."
            </p>
            {everywhere}
            {(!pauses.providers.is_empty()).then(|| view! {
                <ul class="overview-list" aria-label="Pauses by provider">
                    {pauses.providers.into_iter().map(|provider| {
                        let paused = provider.paused_since.is_some();
                        let label = format!("{} {}", if paused { "Resume" } else { "Pause" }, provider.provider);
                        view! {
                            <li class="overview-item pause-item">
                                <p class="task-title">
                                    {provider.paused_since.map(|since| view! {
                                        <span class="badge state-held">"Paused"</span> " "
                                        <time datetime=since.to_string()>{clock_time(since)}</time> " "
                                    })}
                                    {provider.provider.clone()}
                                </p>
                                {button(Some(provider.provider_id.clone()), !paused, label)}
                            </li>
                        }
                    }).collect_view()}
                </ul>
            })}
        </section>
    }
}
