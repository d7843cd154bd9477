use leptos::prelude::*;

use api::ApiError;

/// A failed load, said plainly.
#[component]
pub fn ErrorNotice(error: ApiError) -> impl IntoView {
    crate::page_status::set_page_status(error.status());
    view! { <p class="notice" role="alert">{error.to_string()}</p> }
}
