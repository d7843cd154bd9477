use api::{
    ApiError, FieldError, ProfileId, RouteView, TaskId, TaskRequest, TaskSummary, Timestamp,
};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::{use_navigate, use_query_map};
use policy::route::RouteState;

use crate::components::ErrorNotice;
use crate::server_fns::{ProfileChoice, TasksData, create_task, list_profile_choices, list_tasks};
use crate::tasks::live::{Live, use_route_events, use_server_clock};
use crate::tasks::words::{candidate_label, countdown, relative, state_label};

/// Every state, in SPEC 5's order: the list's filters.
const STATES: [RouteState; 8] = [
    RouteState::Queued,
    RouteState::Running,
    RouteState::RetryWait,
    RouteState::WaitingForReset,
    RouteState::Retrying,
    RouteState::Held,
    RouteState::Completed,
    RouteState::Stopped,
];

/// Provided by the server when it renders the list in answer to a plain form
/// post of **New task**: what was sent and why it was refused.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskSubmission {
    /// The profile chosen.
    pub profile_id: String,
    /// The prompt written.
    pub prompt: String,
    /// Why it was refused, by field.
    pub errors: Vec<FieldError>,
    /// A refusal that belongs to no field.
    pub notice: Option<String>,
}

/// `/tasks`: what waits, until when, and why, one line per task; filter by
/// state; start a task. Live: a committed transition updates its row; a task
/// the page has not seen reads the list again.
#[component]
pub fn TasksPage() -> impl IntoView {
    let query = use_query_map();
    let filter = Memo::new(move |_| {
        query.with(|query| {
            query
                .get("state")
                .and_then(|state| STATES.iter().copied().find(|known| known.as_str() == state))
        })
    });
    let data = Resource::new(move || filter.get(), list_tasks);
    // Routes from the events stream, newer than what the list was read with.
    let updates = RwSignal::new(std::collections::HashMap::<TaskId, RouteView>::new());
    let shown = RwSignal::new(std::collections::HashSet::<TaskId>::new());
    // What changed last, for screen readers (the rows themselves count down
    // every second, so they are not announced).
    let announced = RwSignal::new(String::new());
    let connection = use_route_events(move |live| match live {
        Live::Route(route) => {
            if shown.with_untracked(|shown| shown.contains(&route.task_id)) {
                updates.update(|updates| {
                    let newer = updates
                        .get(&route.task_id)
                        .is_none_or(|kept| kept.generation < route.generation);
                    if newer {
                        announced.set(format!(
                            "A task is now {} on {}.",
                            state_label(route.state).to_ascii_lowercase(),
                            candidate_label(route.candidate_index, &route.model)
                        ));
                        updates.insert(route.task_id.clone(), *route);
                    }
                });
            } else if filter
                .get_untracked()
                .is_none_or(|state| state == route.state)
            {
                // A task this page has not shown, that belongs on it: read the list
                // again (the rows stay up meanwhile).
                data.refetch();
            }
        }
        Live::Resync => data.refetch(),
    });
    view! {
        <Title text="Tasks" />
        <div class="page-heading">
            <h1>"Tasks"</h1>
            <span class="live-status" aria-hidden="true">
                {move || if connection.0.get() { "Live" } else { "Not live" }}
            </span>
        </div>
        <p class="lede">"Each task runs through its profile's candidates. Open one to see its route and step in."</p>
        <NewTaskForm />
        <nav class="filters" aria-label="Filter by state">
            <ul>
                <li><a href="/tasks" aria-current=move || filter.get().is_none().then_some("page")>"All"</a></li>
                {STATES
                    .iter()
                    .map(|&each| view! {
                        <li>
                            <a href=format!("/tasks?state={}", each.as_str())
                                aria-current=move || (filter.get() == Some(each)).then_some("page")>
                                {state_label(each)}
                            </a>
                        </li>
                    })
                    .collect_view()}
            </ul>
        </nav>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result| match result {
                        Ok(data) => {
                            shown.set(data.page.tasks.iter().map(|task| task.id.clone()).collect());
                            view! { <TaskList data updates filter=filter.get_untracked() /> }.into_any()
                        }
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Transition>
        <p class="visually-hidden" role="status">{move || announced.get()}</p>
    }
    .into_any()
}

/// One line per task: state, profile, candidate, last error, next deadline.
#[component]
fn TaskList(
    data: TasksData,
    updates: RwSignal<std::collections::HashMap<TaskId, RouteView>>,
    filter: Option<RouteState>,
) -> impl IntoView {
    let now = use_server_clock(data.now).now;
    if data.page.tasks.is_empty() {
        return view! {
            <p class="empty">"No tasks here. Start one above, or through the API (POST /api/tasks)."</p>
        }
        .into_any();
    }
    view! {
        <ul class="task-list" aria-label="Tasks">
            {data
                .page
                .tasks
                .into_iter()
                .map(|task| view! { <TaskRow task updates now filter /> })
                .collect_view()}
        </ul>
    }
    .into_any()
}

#[component]
fn TaskRow(
    task: TaskSummary,
    updates: RwSignal<std::collections::HashMap<TaskId, RouteView>>,
    now: Signal<Timestamp>,
    filter: Option<RouteState>,
) -> impl IntoView {
    let read = task.route.clone();
    let route = Memo::new(move |_| {
        updates.with(|updates| match updates.get(&read.task_id) {
            Some(newer) if newer.generation > read.generation => newer.clone(),
            _ => read.clone(),
        })
    });
    let href = format!("/tasks/{}", task.id);
    let label = format!("task-{}", task.id);
    let labelled_by = label.clone();
    view! {
        // A task that has left the filtered state leaves the list (and comes back
        // if it returns to it).
        <li class="card task-row" aria-labelledby=labelled_by
            hidden=move || filter.is_some_and(|state| route.with(|route| route.state != state))>
            <p class="task-title" id=label>
                <span class=move || format!("badge state-{}", route.with(|route| route.state.as_str()))>
                    {move || state_label(route.with(|route| route.state))}
                </span>
                " "
                <a href=href>{task.prompt.clone()}</a>
            </p>
            <p class="task-facts">
                <span>{task.profile_name.clone()}</span>
                " · "
                <span>{move || route.with(|route| candidate_label(route.candidate_index, &route.model))}</span>
                {move || route.with(|route| route.code).map(|code| view! { " · " <span class="code">{code.as_str()}</span> })}
                {move || route.with(|route| route.deadline).map(|deadline| view! {
                    " · next "
                    <time datetime=deadline.to_string()>{move || countdown(deadline, now.get())}</time>
                })}
                " · created " {move || relative(task.created_at, now.get())}
            </p>
        </li>
    }
}

/// **New task**: a profile and a prompt, checked as the API checks them. Posts
/// as a plain form before hydration.
#[component]
fn NewTaskForm() -> impl IntoView {
    // Only on the server, answering a plain form post; it reaches the browser
    // inside the resource, so both render the same form.
    let submission = use_context::<TaskSubmission>();
    let profiles = Resource::new(
        || (),
        move |()| {
            let submission = submission.clone();
            async move {
                list_profile_choices()
                    .await
                    .map(|profiles| (profiles, submission))
            }
        },
    );
    view! {
        <section class="card new-task" aria-labelledby="new-task">
            <h2 id="new-task">"New task"</h2>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || profiles.get().map(|result| match result {
                    Ok((profiles, _)) if profiles.is_empty() => view! {
                        <p class="empty">"A task runs on a dynamic profile: "<a href="/profiles/new">"create one first"</a>"."</p>
                    }.into_any(),
                    Ok((profiles, submission)) => view! { <TaskForm profiles submission /> }.into_any(),
                    Err(error) => view! { <ErrorNotice error /> }.into_any(),
                })}
            </Suspense>
        </section>
    }
}

#[component]
fn TaskForm(profiles: Vec<ProfileChoice>, submission: Option<TaskSubmission>) -> impl IntoView {
    let (first_profile, first_prompt, first_errors, first_notice) = match submission {
        Some(sent) => (sent.profile_id, sent.prompt, sent.errors, sent.notice),
        None => (String::new(), String::new(), Vec::new(), None),
    };
    let profile_id = RwSignal::new(first_profile);
    let prompt = RwSignal::new(first_prompt);
    let tried = RwSignal::new(!first_errors.is_empty());
    let refused = RwSignal::new(first_errors);
    let notice = RwSignal::new(first_notice);
    let request = move || TaskRequest {
        profile_id: ProfileId::new(profile_id.get()),
        prompt: prompt.get(),
    };
    // Checked once a Save was tried, then on every keystroke; the server's
    // refusal shows until the fields change.
    let errors = Memo::new(move |_| {
        if !tried.get() {
            return Vec::new();
        }
        match request().check() {
            Ok(_) => refused.get(),
            Err(errors) => errors,
        }
    });
    let error_of = move |field: &'static str| {
        move || {
            errors.with(|errors| {
                errors
                    .iter()
                    .find(|error| error.field == field)
                    .map(|error| error.message.clone())
            })
        }
    };
    let create = Action::new(move |request: &TaskRequest| create_task(request.clone()));
    let navigate = use_navigate();
    Effect::new(move |_| {
        let Some(result) = create.value().get() else {
            return;
        };
        match result {
            Ok(id) => navigate(&format!("/tasks/{id}"), Default::default()),
            Err(ApiError::Invalid { errors }) => refused.set(errors),
            Err(other) => notice.set(Some(other.to_string())),
        }
    });
    view! {
                        <form method="post" action="/tasks" novalidate
                            on:submit=move |event| {
                                event.prevent_default();
                                tried.set(true);
                                refused.set(Vec::new());
                                notice.set(None);
                                if let Ok(request) = request().check() {
                                    create.dispatch(request);
                                }
                            }>
                            <div class="field">
                                <label for="task-profile">"Profile"</label>
                                <select id="task-profile" name="profile_id"
                                    aria-invalid=move || error_of("profile_id")().is_some().then_some("true")
                                    aria-describedby="task-profile-error"
                                    on:change=move |event| profile_id.set(event_target_value(&event))>
                                    <option value="" selected=move || profile_id.with(String::is_empty)>"Choose a profile"</option>
                                    {profiles.into_iter().map(|profile| {
                                        let value = profile.id.as_str().to_owned();
                                        let chosen = value.clone();
                                        view! {
                                            <option value=value selected=move || profile_id.with(|id| *id == chosen)>{profile.name}</option>
                                        }
                                    }).collect_view()}
                                </select>
                                <p class="field-error" id="task-profile-error">{error_of("profile_id")}</p>
                            </div>
                            <div class="field">
                                <label for="task-prompt">"Prompt"</label>
                                <textarea id="task-prompt" name="prompt" rows="3"
                                    aria-invalid=move || error_of("prompt")().is_some().then_some("true")
                                    aria-describedby="task-prompt-error"
                                    prop:value=move || prompt.get()
                                    on:input=move |event| prompt.set(event_target_value(&event))>
                                    {prompt.get_untracked()}
                                </textarea>
                                <p class="field-error" id="task-prompt-error">{error_of("prompt")}</p>
                            </div>
                            <p class="notice" role="status" hidden=move || notice.with(Option::is_none)>{move || notice.get()}</p>
                            <button type="submit" class="primary" disabled=move || create.pending().get()>"Start task"</button>
                        </form>
    }
}
