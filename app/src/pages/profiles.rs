use leptos::prelude::*;
use leptos_meta::Title;

/// The dynamic profiles list.
#[component]
pub fn ProfilesPage() -> impl IntoView {
    view! {
        <Title text="Dynamic profiles" />
        <h1>"Dynamic profiles"</h1>
        <p>"A dynamic profile is an ordered list of candidate models, each with its own recovery policy."</p>
        <p class="empty">"No dynamic profiles yet."</p>
    }
}
