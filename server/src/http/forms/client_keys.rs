use api::read::Read;
use api::{ClientKeyId, ClientKeyRequest, ProfileId};
use app::pages::{ClientKeySubmission, unplaced};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Redirect, Response};

use super::{Pairs, pairs, render};
use crate::error::status_of;
use crate::http::AppState;

/// `POST /client-keys`: make a key, and answer with the page showing it (the
/// only time it is shown), or the form again with why it was refused.
pub async fn new_client_key(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let mut request = ClientKeyRequest::default();
    for (name, value) in pairs {
        match name.as_str() {
            "name" => request.name = value,
            "profile_ids" => request.profile_ids.push(ProfileId::from(value)),
            _ => {}
        }
    }
    let (status, submission) = match state
        .services
        .create_client_key(Read::clean(&request))
        .await
    {
        Ok(created) => (
            StatusCode::CREATED,
            ClientKeySubmission {
                request,
                errors: Vec::new(),
                notice: None,
                created: Some(created),
            },
        ),
        Err(error) => {
            let error = error.into_api_error();
            let errors = error.field_errors().to_vec();
            // Field errors show at their fields; anything else needs a sentence.
            let notice = if errors.is_empty() {
                Some(error.to_string())
            } else {
                unplaced(&errors)
            };
            (
                status_of(&error),
                ClientKeySubmission {
                    request,
                    errors,
                    notice,
                    created: None,
                },
            )
        }
    };
    let uri = Uri::from_static("/client-keys");
    let mut page = render(&state, uri, headers, status, submission).await;
    // The page may hold a key: no cache keeps it.
    page.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    page
}

/// `POST /client-keys/{id}/revoke`.
pub async fn revoke_client_key(
    State(state): State<AppState>,
    Path(id): Path<ClientKeyId>,
    headers: HeaderMap,
) -> Response {
    match state.services.revoke_client_key(&id).await {
        Ok(_) => Redirect::to("/client-keys").into_response(),
        Err(error) => {
            let error = error.into_api_error();
            let submission = ClientKeySubmission {
                request: ClientKeyRequest::default(),
                errors: Vec::new(),
                notice: Some(error.to_string()),
                created: None,
            };
            let uri = Uri::from_static("/client-keys");
            render(&state, uri, headers, status_of(&error), submission).await
        }
    }
}
