use api::{ActionRequest, ApiError, AttemptView, RouteView, TaskId, TaskView, Timestamp};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;
use policy::route::{ManualAction, RouteState};

use crate::components::ErrorNotice;
use crate::server_fns::{act_on_task, load_task};
use crate::tasks::focus::{focus_soon, left_on_purpose};
use crate::tasks::live::{Connection, Live, use_route_events, use_server_clock};
use crate::tasks::words::{
    action_hint, action_label, candidate_label, circuit_owner, clock_time, countdown,
    countdown_spoken, duration, gap_words, relative, retry_line, state_label, then_line,
};

/// Provided by the server when it renders the route view in answer to a plain
/// form post: what became of the action. It travels with the page's data, so
/// the browser hydrates what the server rendered.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ActionSubmission {
    /// Why the action was refused (a stale generation, a state that does not
    /// allow it).
    pub notice: Option<String>,
    /// A `Stop` was posted without its confirmation, at this generation: ask,
    /// and confirm at the same generation.
    pub confirm_stop: Option<i64>,
}

/// `/tasks/{id}`: the route view. The state, then what happens next, then why;
/// the actions valid now; the attempts as a timeline; the turns. Live.
#[component]
pub fn TaskPage() -> impl IntoView {
    let params = use_params_map();
    let id =
        Memo::new(move |_| params.with(|params| TaskId::new(params.get("id").unwrap_or_default())));
    // Only on the server, answering a plain form post; it reaches the browser
    // inside the resource, so both render the same page.
    let submission = use_context::<ActionSubmission>();
    let data = Resource::new(
        move || id.get(),
        move |id| {
            let submission = submission.clone();
            async move {
                let (task, read_at) = load_task(id).await?;
                Ok::<_, ApiError>((task, read_at, submission.unwrap_or_default()))
            }
        },
    );
    view! {
        <Title text="Task" />
        <div class="page-heading">
            <h1>"Task"</h1>
            <a href="/tasks">"All tasks"</a>
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result| match result {
                        Ok((task, read_at, submission)) => {
                            view! { <RouteViewer task read_at submission /> }.into_any()
                        }
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Suspense>
    }
    .into_any()
}

/// One task, kept current by the events stream.
#[component]
fn RouteViewer(task: TaskView, read_at: Timestamp, submission: ActionSubmission) -> impl IntoView {
    let task = RwSignal::new(task);
    let clock = use_server_clock(read_at);
    let now = clock.now;
    let notice = RwSignal::new(submission.notice.clone());
    // Read the whole task again, unless something newer arrived meanwhile.
    let reload = move || {
        let id = task.with_untracked(|task| task.id.clone());
        leptos::task::spawn_local(async move {
            if let Ok((fresh, read_at)) = load_task(id).await {
                // Counting from a fresher reading of the server's clock.
                clock.anchor(read_at);
                task.update(|shown| {
                    if fresh.route.generation >= shown.route.generation {
                        *shown = fresh;
                    }
                });
            }
        });
    };
    let connection = use_route_events(move |live| match live {
        Live::Route(route) => {
            let ours = task.with_untracked(|task| {
                task.id == route.task_id && route.generation > task.route.generation
            });
            if ours {
                // The route at once (within the second); its history right after.
                task.update(|task| task.route = *route);
                reload();
            }
        }
        Live::Resync => reload(),
    });
    let route = Memo::new(move |_| task.with(|task| task.route.clone()));
    view! {
        <RouteHeader task route now connection />
        <p class="notice" role="status" hidden=move || notice.with(Option::is_none)>
            {move || notice.get()}
        </p>
        <Actions task route notice confirm_first=submission.confirm_stop reload=Callback::new(move |()| reload()) />
        <section class="card" aria-labelledby="history">
            <h2 id="history">"Attempts"</h2>
            {move || task.with(|task| view! { <Timeline attempts=task.attempts.clone() route=task.route.clone() created_at=task.created_at /> })}
        </section>
        <section class="card" aria-labelledby="turns">
            <h2 id="turns">"Turns"</h2>
            {move || task.with(|task| {
                task.turns
                    .iter()
                    .map(|turn| {
                        let producer = match (turn.candidate_index, &turn.model) {
                            (Some(index), Some(model)) => format!("Answered by {}", candidate_label(index, model)),
                            _ => "No answer yet".to_owned(),
                        };
                        let truncated = turn.truncated.then_some(" (truncated at its token budget)");
                        view! {
                            <article class="turn">
                                <h3>"Turn " {turn.number}</h3>
                                <p class="prompt">{turn.prompt.clone()}</p>
                                <p class="producer">{producer}{truncated}</p>
                                {turn.answer.clone().map(|answer| view! { <p class="answer">{answer}</p> })}
                            </article>
                        }
                    })
                    .collect_view()
            })}
        </section>
    }
    .into_any()
}

/// State first, then what happens next, then why.
#[component]
fn RouteHeader(
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
    // The countdown for screen readers: announced politely, once a minute.
    let spoken = move |what: String, deadline: Timestamp| {
        let words = Memo::new(move |_| countdown_spoken(deadline, now.get()));
        move || format!("{what}{}: {}", clock_time(deadline), words.get())
    };
    let deadline = move || {
        route.with(|route| {
            route
                .deadline
                .map(|deadline| (deadline, route.circuit_wait.then(|| circuit_owner(route))))
        })
    };
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
            {move || deadline().map(|(deadline, circuit)| {
                let what = match circuit {
                    Some(owner) => format!("The {owner} circuit reopens at "),
                    None => "Deadline ".to_owned(),
                };
                view! {
                    <p class="deadline">
                        {what.clone()}
                        <time datetime=deadline.to_string()>{clock_time(deadline)}</time>
                        " ("
                        <span role="timer" class="countdown">{move || countdown(deadline, now.get())}</span>
                        ")"
                    </p>
                    <p class="visually-hidden" aria-live="polite">{spoken(what, deadline)}</p>
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

/// The actions valid now (the route machine's, as the server runs it), each
/// sending the generation on screen. Plain form posts before hydration.
#[component]
fn Actions(
    task: RwSignal<TaskView>,
    route: Memo<RouteView>,
    notice: RwSignal<Option<String>>,
    confirm_first: Option<i64>,
    reload: Callback<()>,
) -> impl IntoView {
    let sending = RwSignal::new(None::<ManualAction>);
    // The generation Stop was clicked at, while its question is open.
    let confirming = RwSignal::new(confirm_first);
    let act = Action::new(move |(id, request): &(TaskId, ActionRequest)| {
        act_on_task(id.clone(), *request)
    });
    Effect::new(move |_| {
        let Some(result) = act.value().get() else {
            return;
        };
        sending.set(None);
        match result {
            Ok(fresh) => {
                notice.set(None);
                task.update(|shown| {
                    if fresh.route.generation >= shown.route.generation {
                        *shown = fresh;
                    }
                });
            }
            Err(ApiError::StaleGeneration { route, .. }) => {
                notice.set(Some(format!(
                    "The route changed before your click arrived: it is now {} (generation {}). Nothing was done.",
                    state_label(route.state).to_ascii_lowercase(),
                    route.generation
                )));
                task.update(|shown| {
                    if route.generation > shown.route.generation {
                        shown.route = *route;
                    }
                });
                // Its history too.
                reload.run(());
            }
            Err(other) => notice.set(Some(other.to_string())),
        }
    });
    // Each action carries the generation its button was shown with.
    let send = move |action: ManualAction, generation: i64| {
        let id = route.with_untracked(|route| route.task_id.clone());
        sending.set(Some(action));
        confirming.set(None);
        act.dispatch((id, ActionRequest { action, generation }));
    };
    // The action a keyboard is on: when the page changes under it (its button
    // goes, or is disabled while its request is out), focus comes back to it, or
    // to the section's heading once it is no longer valid.
    let focused = StoredValue::new(None::<ManualAction>);
    Effect::new(move |was_asking: Option<bool>| {
        route.track();
        let asking = confirming.get().is_some();
        if sending.get().is_some() {
            return asking;
        }
        if asking && was_asking != Some(true) {
            // The question just opened: the keyboard goes to its answer.
            if focused.get_value() == Some(ManualAction::Stop) {
                focus_soon(vec!["confirm-stop-button".to_owned()], false);
            }
        } else if let Some(action) = focused.get_value() {
            focus_soon(
                vec![
                    "confirm-stop-button".to_owned(),
                    action_button_id(action),
                    "actions-heading".to_owned(),
                ],
                true,
            );
        }
        asking
    });
    let post_to = route.with_untracked(|route| format!("/tasks/{}/actions", route.task_id));
    view! {
        <section class="card actions" aria-labelledby="actions-heading">
            <h2 id="actions-heading" tabindex="-1">"Actions"</h2>
            <Show when=move || route.with(|route| route.state.actions().is_empty())>
                <p class="empty">"Nothing can be done now: the route has ended its turn."</p>
            </Show>
            // Every action's form is always there, in one order, hidden while the
            // route does not allow it: a button still valid after a change is the
            // same element in the same place (focus stays on it), and it sends the
            // generation now on screen.
            {ManualAction::ALL
                .into_iter()
                .map(|action| {
                    let hint_id = format!("hint-{}", action.as_str());
                    let stop = action == ManualAction::Stop;
                    let valid = move || route.with(|route| route.state.actions().contains(&action));
                    let hint = move || {
                        route.with(|route| {
                            task.with_untracked(|task| action_hint(action, route, &task.candidates))
                        })
                    };
                    let shown_at = move || route.with(|route| route.generation.get());
                    view! {
                        <form class="action" method="post" action=post_to.clone() hidden=move || !valid()
                            on:submit=move |event| {
                                event.prevent_default();
                                let generation = route.with_untracked(|route| route.generation.get());
                                if stop {
                                    confirming.set(Some(generation));
                                } else {
                                    send(action, generation);
                                }
                            }>
                            <input type="hidden" name="action" value=action.as_str() />
                            <input type="hidden" name="generation" value=move || shown_at().to_string() />
                            <button type="submit" class=if stop { "danger" } else { "" }
                                id=action_button_id(action)
                                aria-describedby=hint_id.clone()
                                disabled=move || sending.get().is_some()
                                on:focusin=move |_| focused.set_value(Some(action))
                                on:focusout=move |event| {
                                    if left_on_purpose(&event) {
                                        focused.set_value(None);
                                    }
                                }>
                                {action_label(action)}
                            </button>
                            <span class="hint" id=hint_id>{hint}</span>
                        </form>
                    }
                })
                .collect_view()}
            {move || {
                // Asked only while Stop is still valid, and confirmed at the generation
                // it was clicked at: a route that moved on meanwhile is refused (409),
                // never stopped at a generation nobody saw.
                let asked_at = confirming.get()?;
                let route = route.get();
                if !route.state.actions().contains(&ManualAction::Stop) {
                    return None;
                }
                Some(view! {
                    <form class="confirm" method="post" action=format!("/tasks/{}/actions", route.task_id)
                        role="alertdialog" aria-labelledby="confirm-stop"
                        on:focusin=move |_| focused.set_value(Some(ManualAction::Stop))
                        on:submit=move |event| {
                            event.prevent_default();
                            send(ManualAction::Stop, asked_at);
                        }>
                        <p id="confirm-stop">"Stop this route for good? Nothing more will be tried, and a call in flight is cancelled."</p>
                        <input type="hidden" name="action" value="stop" />
                        <input type="hidden" name="generation" value=asked_at.to_string() />
                        <input type="hidden" name="confirmed" value="yes" />
                        <button type="submit" class="danger" id="confirm-stop-button"
                            disabled=move || sending.get().is_some()>"Confirm stop"</button>
                        <a class="button" href=format!("/tasks/{}", route.task_id)
                            on:click=move |event| {
                                event.prevent_default();
                                confirming.set(None);
                            }>"Keep it"</a>
                    </form>
                })
            }}
        </section>
    }
}

/// The id of an action's button, for focus to come back to.
fn action_button_id(action: ManualAction) -> String {
    format!("action-{}", action.as_str())
}

/// The attempts, oldest first, one row each; waits drawn as gaps between them.
#[component]
fn Timeline(attempts: Vec<AttemptView>, route: RouteView, created_at: Timestamp) -> impl IntoView {
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
        let failure = match (attempt.code, attempt.class) {
            (Some(code), Some(class)) => Some(format!("{} ({})", code.as_str(), class.as_str())),
            _ => None,
        };
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
