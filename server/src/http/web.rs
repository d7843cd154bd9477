use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request};
use axum::response::{IntoResponse, Response};
use leptos::prelude::LeptosOptions;

use crate::site;

/// Anything the app's routes do not claim: an embedded file if there is one,
/// else the app's own "Page not found" (status 404, rendered by the app).
pub async fn static_file_or_not_found(
    State(options): State<LeptosOptions>,
    request: Request<Body>,
) -> Response {
    if request.method() == Method::GET || request.method() == Method::HEAD {
        let path = request.uri().path().trim_start_matches('/');
        if let Some(response) = site::file(path, request.headers()) {
            return response;
        }
    }
    let render =
        leptos_axum::render_app_to_stream_with_context(super::page_policy_header, move || {
            app::shell(options.clone())
        });
    render(request).await.into_response()
}
