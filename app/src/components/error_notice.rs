use leptos::prelude::*;

use api::ApiError;

/// A failed load, said plainly.
#[component]
pub fn ErrorNotice(error: ApiError) -> impl IntoView {
    #[cfg(feature = "ssr")]
    if let Some(response) = use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(
            http::StatusCode::from_u16(error.status())
                .unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR),
        );
    }
    view! { <p class="notice" role="alert">{error.to_string()}</p> }
}
