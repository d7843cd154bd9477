use api::read::Read;
use api::{ActionRequest, ApiError, ErrorCode, FieldError, ProfileId, TaskId, TaskRequest};
use app::pages::{ActionSubmission, TaskSubmission};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Redirect, Response};
use policy::route::ManualAction;

use super::{Pairs, pairs, render};
use crate::error::status_of;
use crate::http::AppState;

/// The value of the first pair named `name`.
fn value<'a>(pairs: &'a [(String, String)], name: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

/// `POST /tasks`: **New task** without JavaScript. Started: to its route view.
/// Refused: the list again, with what was sent and why.
pub async fn new_task(State(state): State<AppState>, headers: HeaderMap, form: Pairs) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let profile_id = value(&pairs, "profile_id").unwrap_or_default().to_owned();
    let prompt = value(&pairs, "prompt").unwrap_or_default().to_owned();
    let request = TaskRequest {
        profile_id: ProfileId::new(profile_id.clone()),
        prompt: prompt.clone(),
    };
    let error = match state
        .services
        .create_task(Read::clean(&request), None)
        .await
    {
        Ok((task, _)) => return Redirect::to(&format!("/tasks/{}", task.id)).into_response(),
        Err(error) => error.into_api_error(),
    };
    let status = status_of(&error);
    let submission = TaskSubmission {
        profile_id,
        prompt,
        errors: error.field_errors().to_vec(),
        notice: error.field_errors().is_empty().then(|| error.to_string()),
    };
    render(
        &state,
        Uri::from_static("/tasks"),
        headers,
        status,
        submission,
    )
    .await
}

/// `POST /tasks/{id}/actions`: an action without JavaScript, fenced by the
/// generation the page showed. `Stop` asks first (a post without
/// `confirmed=yes` shows the question). Done: back to the route view (303).
/// Refused: the route view as it is now, saying why, with the refusal's status.
pub async fn act(
    State(state): State<AppState>,
    Path(id): Path<TaskId>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let page = format!("/tasks/{id}");
    let uri: Uri = match page.parse() {
        Ok(uri) => uri,
        Err(_) => return StatusCode::NOT_FOUND.into_response(),
    };
    let action = value(&pairs, "action").unwrap_or_default();
    let generation = value(&pairs, "generation").unwrap_or_default();
    let submission = match (
        ManualAction::ALL
            .iter()
            .copied()
            .find(|known| known.as_str() == action),
        generation.parse::<i64>(),
    ) {
        (Some(ManualAction::Stop), Ok(generation)) if value(&pairs, "confirmed") != Some("yes") => {
            // Asked only when the stop could go through now, with the same checks
            // as the action itself; confirmed later at this same generation.
            let refused = match state.services.get_task(&id).await {
                Ok(task) if task.route.generation.get() != generation => {
                    Some(ApiError::stale_generation(generation, task.route))
                }
                Ok(task) if !task.route.state.actions().contains(&ManualAction::Stop) => Some(
                    ApiError::not_allowed_now(ManualAction::Stop.as_str(), task.route.state),
                ),
                Ok(_) => None,
                Err(error) => Some(error.into_api_error()),
            };
            match refused {
                None => (
                    StatusCode::OK,
                    ActionSubmission {
                        notice: None,
                        confirm_stop: Some(generation),
                    },
                ),
                Some(error) => (
                    status_of(&error),
                    ActionSubmission {
                        notice: Some(refusal(&error)),
                        confirm_stop: None,
                    },
                ),
            }
        }
        (Some(action), Ok(generation)) => {
            let request = ActionRequest { action, generation };
            match state.services.act(&id, Read::clean(&request)).await {
                Ok(_) => return Redirect::to(&page).into_response(),
                Err(error) => {
                    let error = error.into_api_error();
                    (
                        status_of(&error),
                        ActionSubmission {
                            notice: Some(refusal(&error)),
                            confirm_stop: None,
                        },
                    )
                }
            }
        }
        (action, generation) => {
            let mut errors = Vec::new();
            if action.is_none() {
                errors.push(FieldError::new(
                    &policy::FieldPath::root().field("action"),
                    ErrorCode::Enum,
                    "must be retry_now, skip_now, cancel_wait or stop",
                ));
            }
            if generation.is_err() {
                errors.push(FieldError::new(
                    &policy::FieldPath::root().field("generation"),
                    ErrorCode::Type,
                    "must be a whole number",
                ));
            }
            let error = ApiError::from(errors);
            (
                status_of(&error),
                ActionSubmission {
                    notice: Some(refusal(&error)),
                    confirm_stop: None,
                },
            )
        }
    };
    let (status, submission) = submission;
    render(&state, uri, headers, status, submission).await
}

/// A refused action in words: a stale click says what the route is now; a
/// malformed post names its fields (an action form has none to mark).
fn refusal(error: &ApiError) -> String {
    match error {
        ApiError::Invalid { errors } => errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.message))
            .collect::<Vec<_>>()
            .join("; "),
        ApiError::StaleGeneration { route, .. } => format!(
            "The route changed before your click arrived: it is now {} (generation {}). Nothing was done.",
            app::tasks::words::state_label(route.state).to_lowercase(),
            route.generation
        ),
        other => other.to_string(),
    }
}
