use leptos::prelude::*;
use leptos_meta::Title;

/// Shown for any path the router does not know; the server answers 404.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    crate::page_status::set_page_status(404);
    view! {
        <Title text="Not found" />
        <h1>"Page not found"</h1>
        <p><a href="/">"Back to the start"</a></p>
    }
}
