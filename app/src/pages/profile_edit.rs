use leptos::prelude::*;
use leptos_meta::Title;
use leptos_router::hooks::use_params_map;

use crate::components::ErrorNotice;
use crate::editor::{EditorSubmission, ProfileEditor};
use crate::server_fns::load_profile_editor;

/// `/profiles/new` (one draft) and `/profiles/{id}`: the editor.
#[component]
pub fn ProfileEditPage() -> impl IntoView {
    let params = use_params_map();
    let id = Memo::new(move |_| params.with(|params| params.get("id").map(api::ProfileId::new)));
    // Only on the server, answering a plain form post: show what was sent.
    let submission = use_context::<EditorSubmission>();
    let data = Resource::new(
        move || id.get(),
        move |id| {
            let submission = submission.clone();
            async move {
                match submission {
                    Some(EditorSubmission(data)) => Ok(data),
                    None => load_profile_editor(id).await,
                }
            }
        },
    );
    let heading = move || {
        if id.with(Option::is_some) {
            "Edit dynamic profile"
        } else {
            "New dynamic profile"
        }
    };
    view! {
        <Title text=heading />
        <div class="page-heading">
            <h1>{heading}</h1>
            <a href="/profiles">"All profiles"</a>
        </div>
        <Suspense fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                data.get()
                    .map(|result| match result {
                        Ok(data) => view! { <ProfileEditor data /> }.into_any(),
                        Err(error) => view! { <ErrorNotice error /> }.into_any(),
                    })
            }}
        </Suspense>
    }
    .into_any()
}
