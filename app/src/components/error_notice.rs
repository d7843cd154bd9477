use leptos::prelude::*;

use crate::model::ApiError;

/// A failed load, said plainly.
#[component]
pub fn ErrorNotice(error: ApiError) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let (ApiError::NotFound(_), Some(response)) =
        (&error, use_context::<leptos_axum::ResponseOptions>())
    {
        response.set_status(http::StatusCode::NOT_FOUND);
    }
    view! { <p class="notice" role="alert">{error.to_string()}</p> }
}
