use api::ProfileId;
use app::editor::{EditOp, EditorData, EditorSubmission, ProfileForm, ProviderChoice};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};

use super::{Pairs, pairs, render};
use crate::error::status_of;
use crate::http::AppState;

/// `POST /profiles/new`.
pub async fn new_profile(
    State(state): State<AppState>,
    uri: Uri,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    submit(state, None, uri, headers, form).await
}

/// `POST /profiles/{id}`.
pub async fn edit_profile(
    State(state): State<AppState>,
    Path(id): Path<ProfileId>,
    uri: Uri,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    submit(state, Some(id), uri, headers, form).await
}

async fn submit(
    state: AppState,
    id: Option<ProfileId>,
    uri: Uri,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let services = &state.services;
    let mut form = ProfileForm::from_pairs(&pairs);
    form.id = id.clone();
    let providers = match services.list_providers().await {
        Ok(providers) => providers
            .iter()
            .map(ProviderChoice::from)
            .collect::<Vec<_>>(),
        Err(error) => return error.into_response(),
    };
    // A structural button (add, move, remove) edits the form; it does not save.
    if let Some(op) = EditOp::from_pairs(&pairs) {
        form.apply(&op, &providers);
        let data = EditorData::new(form, providers, Vec::new(), None);
        return render_editor(&state, uri, headers, data, StatusCode::OK).await;
    }
    let request = form.to_request();
    let saved = match &id {
        Some(id) => services.update_profile(id, request).await,
        None => services.create_profile(request).await,
    };
    match saved {
        Ok(profile) => Redirect::to(&format!("/profiles/{}", profile.id)).into_response(),
        Err(error) => {
            let error = error.into_api_error();
            let data = EditorData::new(
                form,
                providers,
                error.field_errors().to_vec(),
                Some(error.to_string()),
            );
            render_editor(&state, uri, headers, data, status_of(&error)).await
        }
    }
}

async fn render_editor(
    state: &AppState,
    uri: Uri,
    headers: HeaderMap,
    data: EditorData,
    status: StatusCode,
) -> Response {
    let submission = EditorSubmission(data);
    render(state, uri, headers, status, submission).await
}
