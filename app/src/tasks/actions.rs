//! The route view's actions: the ones the route machine allows now, each sent
//! with the generation on screen.

use api::{ActionRequest, ApiError, RouteView, TaskId, TaskView};
use leptos::prelude::*;
use policy::route::ManualAction;

use super::focus::{focus_soon, left_on_purpose};
use super::words::{action_hint, action_label, state_label};
use crate::server_fns::act_on_task;

/// The actions valid now (the route machine's, as the server runs it), each
/// sending the generation on screen. Plain form posts before hydration.
#[component]
pub(crate) fn Actions(
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
