use leptos::prelude::*;
use leptos_meta::Title;

/// Shown for any path the router does not know; the server answers 404.
#[component]
pub fn NotFoundPage() -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! {
        <Title text="Not found" />
        <h1>"Page not found"</h1>
        <p><a href="/">"Back to the start"</a></p>
    }
}
