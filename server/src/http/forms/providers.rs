use api::ProviderId;
use app::providers::{ProviderForm, ProviderSubmission};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Redirect, Response};

use super::{Pairs, pairs, render};
use crate::error::status_of;
use crate::http::AppState;

/// `POST /providers`.
pub async fn new_provider(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    submit(state, None, headers, form).await
}

/// `POST /providers/{id}`.
pub async fn edit_provider(
    State(state): State<AppState>,
    Path(id): Path<ProviderId>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    submit(state, Some(id), headers, form).await
}

async fn submit(
    state: AppState,
    id: Option<ProviderId>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let (mut form, unread) = ProviderForm::from_pairs(&pairs);
    form.id = id.clone();
    let request = form.to_request_with(unread);
    let saved = match &id {
        Some(id) => state.services.update_provider(id, request).await,
        None => state.services.create_provider(request).await,
    };
    let error = match saved {
        Ok(_) => return Redirect::to("/providers").into_response(),
        Err(error) => error.into_api_error(),
    };
    let status = status_of(&error);
    form.forget_refused_secrets(error.field_errors());
    let submission = ProviderSubmission {
        form,
        errors: error.field_errors().to_vec(),
        // Field errors show at their fields; anything else needs a sentence.
        notice: error.field_errors().is_empty().then(|| error.to_string()),
    };
    // Every provider form is on one page.
    let uri = Uri::from_static("/providers");
    render(&state, uri, headers, status, submission).await
}
