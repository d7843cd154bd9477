//! Plain HTML form posts, for browsers without JavaScript (or before the
//! wasm arrives): save and redirect, or render the same page again with the
//! submitted values, their field errors and a notice.

use std::sync::Arc;

use app::backend::SharedBackend;
use app::editor::{EditOp, EditorData, EditorSubmission, ProfileForm};
use app::providers::{ProviderForm, ProviderSubmission};
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, Request, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use axum::Form;
use leptos::prelude::provide_context;

use super::views::provider_view;
use super::AppState;
use crate::error::AppError;

/// The pairs of a posted form, in order.
type Pairs = Form<Vec<(String, String)>>;

/// `POST /profiles/new`.
pub async fn new_profile(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    Form(pairs): Pairs,
) -> Response {
    submit_profile(state, None, uri, headers, pairs).await
}

/// `POST /profiles/{id}`.
pub async fn edit_profile(
    State(state): State<AppState>,
    Path(id): Path<String>,
    uri: Uri,
    headers: HeaderMap,
    Form(pairs): Pairs,
) -> Response {
    submit_profile(state, Some(id), uri, headers, pairs).await
}

async fn submit_profile(
    state: AppState,
    id: Option<String>,
    uri: Uri,
    headers: HeaderMap,
    pairs: Vec<(String, String)>,
) -> Response {
    let services = &state.services;
    let mut form = ProfileForm::from_pairs(&pairs);
    form.id = id.clone();
    let providers: Vec<_> = match services.list_providers().await {
        Ok(providers) => providers.into_iter().map(provider_view).collect(),
        Err(error) => return error.into_response(),
    };
    // A structural button (add, move, remove) edits the form; it does not save.
    if let Some(op) = pairs
        .iter()
        .find(|(name, _)| name == "op")
        .and_then(|(_, value)| EditOp::parse(value))
    {
        form.apply(&op, &providers);
        let data = EditorData {
            form,
            providers,
            errors: Vec::new(),
            notice: None,
        };
        return render_editor(&state, uri, headers, data, StatusCode::OK).await;
    }
    let body = form.to_json();
    let saved = match &id {
        Some(id) => services.update_profile(id, &body).await,
        None => services.create_profile(&body).await,
    };
    let (errors, notice, status) = match saved {
        Ok(profile) => return Redirect::to(&format!("/profiles/{}", profile.id)).into_response(),
        Err(AppError::Invalid(errors)) => (
            errors,
            "Some values need attention: see the marked fields. Nothing was saved.".to_owned(),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Err(AppError::StaleRevision { current, .. }) => (
            Vec::new(),
            format!(
                "Someone else saved this profile first (it is now at revision {current}). Nothing was saved; open the profile again to see their changes."
            ),
            StatusCode::CONFLICT,
        ),
        Err(other) => return other.into_response(),
    };
    let data = EditorData {
        form,
        providers,
        errors,
        notice: Some(notice),
    };
    render_editor(&state, uri, headers, data, status).await
}

async fn render_editor(
    state: &AppState,
    uri: Uri,
    headers: HeaderMap,
    data: EditorData,
    status: StatusCode,
) -> Response {
    let submission = EditorSubmission(data);
    render(state, uri, headers, status, move || {
        provide_context(submission.clone())
    })
    .await
}

/// `POST /providers`.
pub async fn new_provider(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    Form(pairs): Pairs,
) -> Response {
    submit_provider(state, None, uri, headers, pairs).await
}

/// `POST /providers/{id}`.
pub async fn edit_provider(
    State(state): State<AppState>,
    Path(id): Path<String>,
    headers: HeaderMap,
    Form(pairs): Pairs,
) -> Response {
    submit_provider(
        state,
        Some(id),
        "/providers".parse().expect("a valid path"),
        headers,
        pairs,
    )
    .await
}

async fn submit_provider(
    state: AppState,
    id: Option<String>,
    uri: Uri,
    headers: HeaderMap,
    pairs: Vec<(String, String)>,
) -> Response {
    let mut form = ProviderForm::from_pairs(&pairs);
    form.id = id.clone();
    let body = form.to_json();
    let saved = match &id {
        Some(id) => state.services.update_provider(id, &body).await,
        None => state.services.create_provider(&body).await,
    };
    let (errors, notice, status) = match saved {
        Ok(_) => return Redirect::to("/providers").into_response(),
        Err(AppError::Invalid(errors)) => (errors, None, StatusCode::UNPROCESSABLE_ENTITY),
        Err(AppError::StaleRevision { current, .. }) => (
            Vec::new(),
            Some(format!(
                "Someone else saved this provider first (it is now at revision {current}). Nothing was saved; reload to see their changes."
            )),
            StatusCode::CONFLICT,
        ),
        Err(other) => return other.into_response(),
    };
    let submission = ProviderSubmission {
        form,
        errors,
        notice,
    };
    render(&state, uri, headers, status, move || {
        provide_context(submission.clone())
    })
    .await
}

/// Render the page at `uri` (as a GET would) with extra context, complete
/// in one answer, with `status`.
async fn render(
    state: &AppState,
    uri: Uri,
    headers: HeaderMap,
    status: StatusCode,
    context: impl Fn() + Clone + Send + Sync + 'static,
) -> Response {
    let options = state.leptos_options.clone();
    let backend: SharedBackend = Arc::new(state.services.clone());
    let render = leptos_axum::render_app_async_with_context(
        move || {
            provide_context(backend.clone());
            context();
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
