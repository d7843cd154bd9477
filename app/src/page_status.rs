//! The status of a page rendered on the server: one place for the `ssr`
//! detail, so components stay the same on both sides.

/// Answer the page being rendered on the server with `status` (a failed
/// load, a page that is not there). In the browser there is no answer to
/// set, and nothing happens.
pub fn set_page_status(status: u16) {
    #[cfg(feature = "ssr")]
    if let Some(response) = leptos::prelude::use_context::<leptos_axum::ResponseOptions>() {
        response.set_status(
            http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::INTERNAL_SERVER_ERROR),
        );
    }
    #[cfg(not(feature = "ssr"))]
    let _ = status;
}
