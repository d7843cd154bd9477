use api::{ActionRequest, ApiError, CircuitView, OverviewView, TaskSummary, Timestamp};
use leptos::prelude::*;
use leptos_meta::Title;
use policy::route::{ManualAction, RouteState};

use crate::components::{BackoffInputs, BackoffPreview, CircuitReopens, CircuitTitle, ErrorNotice};
use crate::server_fns::{act_on_task, load_overview};
use crate::tasks::live::{use_reread_on_route_events, use_server_clock};
use crate::tasks::words::{action_label, candidate_label, countdown, relative, state_label};

/// `/`: what needs a person. Tasks held for one (why, and what can be done),
/// tasks waiting (until when), open circuits (until when), the catalogue's
/// inbox, and how the last day's tasks stand; each item links to its page. An
/// install with no task yet shows how to start. Live: every committed
/// transition reads the overview again (a burst once).
#[component]
pub fn HomePage() -> impl IntoView {
    let data = Resource::new(|| (), |()| load_overview());
    // Outside what is read again: an action's refusal stays on screen when the
    // overview it caused to be read again arrives.
    let notice = RwSignal::new(None::<String>);
    // Outside it too: what a person typed into the schedule's preview stays when
    // the overview is read again (each time the live stream opens, and after each
    // burst of route events).
    let preview = BackoffInputs::default();
    let connection = use_reread_on_route_events(move || data.refetch());
    view! {
        <Title text="Home" />
        {notice_view(notice)}
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result| match result {
                        Ok(overview) if !overview.setup.any_task => {
                            view! { <GettingStarted overview preview /> }.into_any()
                        }
                        Ok(overview) => view! {
                            <div class="page-heading">
                                <h1>"What needs you"</h1>
                                <span class="live-status" aria-hidden="true">
                                    {move || if connection.0.get() { "Live" } else { "Not live" }}
                                </span>
                            </div>
                            <Overview overview notice reread=Callback::new(move |()| data.refetch()) />
                        }
                        .into_any(),
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Transition>
    }
}

/// An install where no task ever ran: what Switchback does, the three steps to a
/// first task (each marked once done), and a taste of a policy's schedule.
#[component]
fn GettingStarted(overview: OverviewView, preview: BackoffInputs) -> impl IntoView {
    let setup = overview.setup;
    let step = |done: bool| if done { "step done" } else { "step" };
    let done_word = |done: bool| {
        done.then_some(view! { <span class="badge state-completed">"Done"</span> " " })
    };
    view! {
        <h1>"Recover from provider failures by a policy you can read"</h1>
        <p class="lede">
            "Switchback routes each task through an ordered list of candidate models. "
            "When a provider overloads, throttles or cuts you off, it retries, waits for the "
            "reset, or moves to the next candidate, exactly as the profile says."
        </p>
        <section class="card" aria-labelledby="start-heading">
            <h2 id="start-heading">"Start here"</h2>
            <ol class="steps">
                <li class=step(setup.providers > 0)>
                    {done_word(setup.providers > 0)}
                    <a href="/providers">"Add a provider"</a>
                    ": where requests go (an API base URL and the name of the variable that holds its key), or an agent CLI."
                </li>
                <li class=step(setup.profiles > 0)>
                    {done_word(setup.profiles > 0)}
                    <a href="/profiles/new">"Create a profile"</a>
                    ": the candidates in order, each with what to do on a transient and on a hard failure."
                </li>
                <li class="step">
                    <a href="/tasks">"Start a task"</a>
                    " and watch its route live. To see recovery first, start a server on a new database with "
                    <code>"switchback serve --demo"</code>
                    ": simulated providers that overload, throttle and recover, and tasks that run through them."
                </li>
            </ol>
        </section>
        <BackoffPreview inputs=preview />
    }
}

/// The sections of a working install.
#[component]
fn Overview(
    overview: OverviewView,
    notice: RwSignal<Option<String>>,
    reread: Callback<()>,
) -> impl IntoView {
    let now = use_server_clock(overview.now).now;
    let OverviewView {
        held,
        held_total,
        waiting,
        waiting_total,
        circuits,
        inbox,
        recent,
        ..
    } = overview;
    view! {
        <section class="card" aria-labelledby="held-heading">
            <h2 id="held-heading">{format!("Held for you ({held_total})")}</h2>
            {if held.is_empty() {
                view! { <p class="empty">"Nothing is held: every route is moving by its policy."</p> }.into_any()
            } else {
                view! {
                    <ul class="overview-list" aria-label="Held tasks">
                        {held.into_iter().map(|task| view! { <HeldTask task now notice reread /> }).collect_view()}
                    </ul>
                    {more_link(held_total, "/tasks?state=held", "held tasks")}
                }
                .into_any()
            }}
        </section>
        <section class="card" aria-labelledby="waiting-heading">
            <h2 id="waiting-heading">{format!("Waiting ({waiting_total})")}</h2>
            {if waiting.is_empty() {
                view! { <p class="empty">"No task is waiting for a retry or a reset."</p> }.into_any()
            } else {
                view! {
                    <ul class="overview-list" aria-label="Waiting tasks">
                        {waiting.into_iter().map(|task| view! { <WaitingTask task now /> }).collect_view()}
                    </ul>
                    {more_link(waiting_total, "/tasks", "tasks")}
                }
                .into_any()
            }}
        </section>
        <section class="card" aria-labelledby="circuits-heading">
            <h2 id="circuits-heading">{format!("Open circuits ({})", circuits.len())}</h2>
            {if circuits.is_empty() {
                view! { <p class="empty">"Every provider and model is open to requests."</p> }.into_any()
            } else {
                view! {
                    <ul class="overview-list" aria-label="Open circuits">
                        {circuits.into_iter().map(|circuit| view! { <CircuitItem circuit now /> }).collect_view()}
                    </ul>
                }
                .into_any()
            }}
        </section>
        <section class="card" aria-labelledby="inbox-heading">
            <h2 id="inbox-heading">"Catalogue inbox"</h2>
            {if inbox.groups == 0 {
                view! { <p class="empty">"Every failure so far was read with confidence."</p> }.into_any()
            } else {
                view! {
                    <p>
                        <a href="/inbox">{plural(inbox.groups, "kind of failure", "kinds of failure")}</a>
                        {format!(" the catalogue was unsure of ({}): read them, and export them as fixtures.",
                            plural(inbox.attempts, "attempt", "attempts"))}
                    </p>
                }
                .into_any()
            }}
        </section>
        <section class="card" aria-labelledby="recent-heading">
            <h2 id="recent-heading">"Last 24 hours"</h2>
            <p>"Tasks created in the last day, by how they stand now:"</p>
            <ul class="counts" aria-label="Tasks of the last 24 hours">
                <li><a href="/tasks?state=completed">{format!("{} completed", recent.completed)}</a></li>
                <li><a href="/tasks?state=stopped">{format!("{} stopped", recent.stopped)}</a></li>
                <li><a href="/tasks?state=held">{format!("{} held", recent.held)}</a></li>
                <li><a href="/tasks">{format!("{} in progress", recent.in_progress)}</a></li>
            </ul>
        </section>
    }
}

/// "1 attempt", "3 attempts".
fn plural(count: u32, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

/// "All 31 held tasks" when the list shows only some.
fn more_link(total: u32, href: &'static str, what: &'static str) -> Option<impl IntoView> {
    (total > api::OVERVIEW_TASKS_MAX).then(|| {
        view! { <p><a href=href>{format!("All {total} {what}")}</a></p> }
    })
}

fn notice_view(notice: RwSignal<Option<String>>) -> impl IntoView {
    move || {
        notice
            .get()
            .map(|notice| view! { <p class="notice" role="alert">{notice}</p> })
    }
}

/// A held task: what it was doing, why it is held, and the actions it allows
/// (Stop asks first, on the task's page).
#[component]
fn HeldTask(
    task: TaskSummary,
    now: Signal<Timestamp>,
    notice: RwSignal<Option<String>>,
    reread: Callback<()>,
) -> impl IntoView {
    let route = task.route.clone();
    let href = format!("/tasks/{}", task.id);
    let why = route
        .cause
        .map(|cause| cause.describe().to_owned())
        .unwrap_or_else(|| "held for a person".to_owned());
    let last_error = route.code.map(|code| {
        let message = route.safe_cause.clone().unwrap_or_default();
        view! {
            <p class="task-facts">
                "Last failure: " <span class="code">{code.as_str()}</span>
                {(!message.is_empty()).then(|| view! { ", “" <span class="safe-cause">{message}</span> "”" })}
            </p>
        }
    });
    let act = Action::new(move |(id, request): &(api::TaskId, ActionRequest)| {
        act_on_task(id.clone(), *request)
    });
    Effect::new(move |_| {
        let Some(result) = act.value().get() else {
            return;
        };
        match result {
            Ok(_) => notice.set(None),
            Err(ApiError::StaleGeneration { route, .. }) => notice.set(Some(format!(
                "A task changed before your click arrived: it is now {} (generation {}). Nothing was done.",
                state_label(route.state).to_ascii_lowercase(),
                route.generation
            ))),
            Err(other) => notice.set(Some(other.to_string())),
        }
        reread.run(());
    });
    let post_to = format!("/tasks/{}/actions", task.id);
    let generation = route.generation.get();
    let task_id = task.id.clone();
    let actions = route
        .actions
        .iter()
        .copied()
        .filter(|action| *action != ManualAction::Stop)
        .map(|action| {
            let task_id = task_id.clone();
            view! {
                <form class="action" method="post" action=post_to.clone()
                    on:submit=move |event| {
                        event.prevent_default();
                        act.dispatch((task_id.clone(), ActionRequest { action, generation }));
                    }>
                    <input type="hidden" name="action" value=action.as_str() />
                    <input type="hidden" name="generation" value=generation.to_string() />
                    <button type="submit" disabled=move || act.pending().get()>{action_label(action)}</button>
                </form>
            }
        })
        .collect_view();
    let label = format!("held-{}", task.id);
    let labelled_by = label.clone();
    view! {
        <li class="overview-item" aria-labelledby=labelled_by>
            <p class="task-title" id=label>
                <span class="badge state-held">"Held"</span>
                " "
                <a href=href.clone()>{task.prompt.clone()}</a>
            </p>
            <p class="task-facts">
                {task.profile_name.clone()} " · " {candidate_label(route.candidate_index, &route.model)}
                " · held " {move || relative(route.updated_at, now.get())}
            </p>
            <p class="cause">"Why: " {why}</p>
            {last_error}
            <div class="actions-row">
                {actions}
                <a href=href>"Open to stop or read its attempts"</a>
            </div>
        </li>
    }
}

/// A task waiting for a deadline: until when, and on what.
#[component]
fn WaitingTask(task: TaskSummary, now: Signal<Timestamp>) -> impl IntoView {
    let route = task.route;
    let href = format!("/tasks/{}", task.id);
    let waiting_on = match (route.state, route.circuit_wait) {
        (_, true) => "an open circuit",
        (RouteState::WaitingForReset, false) => "the provider's reset",
        _ => "its next retry",
    };
    let deadline = route.deadline;
    view! {
        <li class="overview-item">
            <p class="task-title">
                <span class=format!("badge state-{}", route.state.as_str())>{state_label(route.state)}</span>
                " "
                <a href=href>{task.prompt.clone()}</a>
            </p>
            <p class="task-facts">
                {task.profile_name.clone()} " · " {candidate_label(route.candidate_index, &route.model)}
                {route.code.map(|code| view! { " · " <span class="code">{code.as_str()}</span> })}
                " · waits for " {waiting_on}
                {deadline.map(|deadline| view! {
                    ", " <time datetime=deadline.to_string()>{move || countdown(deadline, now.get())}</time>
                })}
            </p>
        </li>
    }
}

/// An open or half-open circuit: over what, why, and until when.
#[component]
fn CircuitItem(circuit: CircuitView, now: Signal<Timestamp>) -> impl IntoView {
    let until = circuit.until;
    let code = circuit.code;
    let probe = circuit.probe_task_id.clone().map(|id| {
        view! { " · " <a href=format!("/tasks/{id}")>"the task probing it"</a> }
    });
    view! {
        <li class="overview-item">
            <CircuitTitle circuit now />
            <p class="task-facts">
                "Opened by " <span class="code">{code.as_str()}</span>
                " · " <CircuitReopens until now />
                {probe}
            </p>
        </li>
    }
}
