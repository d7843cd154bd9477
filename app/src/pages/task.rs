use api::{ApiError, TaskId};
use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::components::ErrorNotice;
use crate::server_fns::load_task;
pub use crate::tasks::route_view::ActionSubmission;
use crate::tasks::route_view::RouteViewer;

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
