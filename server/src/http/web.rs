use axum::body::Body;
use axum::extract::State;
use axum::http::{Method, Request, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use leptos::prelude::LeptosOptions;

use crate::site;

/// Anything the app's routes do not claim: an address with a trailing slash
/// sent to the same address without it (`/tasks/` to the page `/tasks`), an
/// embedded file if there is one, else the app's own "Page not found" (status
/// 404, rendered by the app).
pub async fn static_file_or_not_found(
    State(options): State<LeptosOptions>,
    State(access): State<super::AccessControl>,
    request: Request<Body>,
) -> Response {
    if request.method() == Method::GET || request.method() == Method::HEAD {
        if let Some(page) = without_trailing_slash(request.uri()) {
            return Redirect::permanent(&page).into_response();
        }
        let path = request.uri().path().trim_start_matches('/');
        if let Some(response) = site::file(path, request.headers()) {
            return response;
        }
    }
    let access_mode = app::layout::AccessMode {
        guarded: access.is_guarded(),
    };
    let render = leptos_axum::render_app_to_stream_with_context(
        move || {
            leptos::prelude::provide_context(access_mode);
            super::page_policy_header();
        },
        move || app::shell(options.clone()),
    );
    render(request).await.into_response()
}

/// `/tasks/` as `/tasks` (with its query): the server's routes do not claim a
/// trailing slash, but the app's router reads one as a page with an empty id.
/// Never an address that would leave the site (`//host/`).
fn without_trailing_slash(uri: &Uri) -> Option<String> {
    let page = uri.path().strip_suffix('/')?.trim_end_matches('/');
    if page.is_empty() || page.starts_with("//") {
        return None;
    }
    Some(match uri.query() {
        Some(query) => format!("{page}?{query}"),
        None => page.to_owned(),
    })
}
