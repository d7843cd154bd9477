//! The route view: one task, kept current by the events stream, made of its
//! heading, its actions, its attempts and its turns.

use api::{TaskView, Timestamp};
use leptos::prelude::*;

use super::actions::Actions;
use super::header::RouteHeader;
use super::live::{Live, use_route_events, use_server_clock};
use super::timeline::Timeline;
use super::words::candidate_label;
use crate::server_fns::load_task;

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

/// One task, kept current by the events stream.
#[component]
pub(crate) fn RouteViewer(
    task: TaskView,
    read_at: Timestamp,
    submission: ActionSubmission,
) -> impl IntoView {
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
            {move || task.with(|task| view! { <Timeline attempts=task.attempts.clone() passed_over=task.passed_over.clone() route=task.route.clone() created_at=task.created_at /> })}
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
                                {turn.answer.clone().filter(|answer| !answer.is_empty() || turn.tool_calls.is_empty()).map(|answer| view! { <p class="answer">{answer}</p> })}
                                {(!turn.tool_calls.is_empty()).then(|| view! {
                                    <ul class="tool-calls" aria-label="Tool calls">
                                        {turn.tool_calls.iter().map(|call| view! {
                                            <li>"Tool call " <code>{call.name.clone()}</code> " " <code class="arguments">{call.arguments.clone()}</code></li>
                                        }).collect_view()}
                                    </ul>
                                })}
                            </article>
                        }
                    })
                    .collect_view()
            })}
        </section>
    }
    .into_any()
}
