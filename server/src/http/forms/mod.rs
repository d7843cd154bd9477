//! Plain HTML form posts, for browsers without JavaScript (or before the
//! wasm arrives): a shell over the same services as the JSON API. Save and
//! redirect; or render the same page again, with the submitted values, the
//! refusal's field errors and its sentence, and the refusal's status.

mod circuits;
mod client_keys;
mod profiles;
mod providers;
mod tasks;

use std::sync::Arc;

use app::backend::SharedBackend;
use axum::Form;
use axum::body::Body;
use axum::extract::rejection::FormRejection;
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use leptos::prelude::provide_context;

pub use circuits::{close_circuit, set_pause};
pub use client_keys::{new_client_key, revoke_client_key};
pub use profiles::{edit_profile, new_profile};
pub use providers::{edit_provider, new_provider};
pub use tasks::{act, new_task};

use super::AppState;
use crate::error::AppError;

/// The pairs of a posted form, in order; or why the body is not a form.
type Pairs = Result<Form<Vec<(String, String)>>, FormRejection>;

/// The pairs, or the refusal to answer with.
fn pairs(form: Pairs) -> Result<Vec<(String, String)>, AppError> {
    form.map(|Form(pairs)| pairs).map_err(AppError::from)
}

/// Render the page at `uri` (as a GET would) with `context` provided (what
/// the form sent and why it was refused), complete in one answer, with `status`.
async fn render(
    state: &AppState,
    uri: Uri,
    headers: HeaderMap,
    status: StatusCode,
    context: impl Clone + Send + Sync + 'static,
) -> Response {
    let options = state.leptos_options.clone();
    let backend: SharedBackend = Arc::new(state.services.clone());
    let access_mode = app::layout::AccessMode {
        guarded: state.access.is_guarded(),
    };
    let render = leptos_axum::render_app_async_with_context(
        move || {
            provide_context(backend.clone());
            provide_context(context.clone());
            provide_context(access_mode);
            // The page's own policy (its inline scripts' nonce), as for a GET:
            // without it the page would get the policy that allows nothing, and
            // neither its styles nor its bundle would load.
            super::page_policy_header();
        },
        move || app::shell(options.clone()),
    );
    let mut request = Request::builder()
        .method(Method::GET)
        .uri(uri)
        .body(Body::empty())
        .expect("a GET request builds");
    *request.headers_mut() = headers;
    let mut response = render(request).await.into_response();
    *response.status_mut() = status;
    response
}
