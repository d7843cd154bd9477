use api::read::Read;
use api::{
    ApiError, CloseCircuitRequest, ErrorCode, FieldError, PauseRequest, ProviderId, Timestamp,
};
use app::pages::CircuitSubmission;
use axum::extract::State;
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Redirect, Response};

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

/// `POST /circuits/close`: "Close now" without JavaScript, fenced by the reset
/// the page showed. Closed: back to the circuits page (303). Refused: the page
/// as it is now, saying why, with the refusal's status.
pub async fn close_circuit(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Pairs,
) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let model = value(&pairs, "model").filter(|model| !model.is_empty());
    let until = value(&pairs, "until")
        .unwrap_or_default()
        .parse::<Timestamp>();
    let error = match until {
        Ok(until) => {
            let request = CloseCircuitRequest {
                provider_id: ProviderId::new(value(&pairs, "provider_id").unwrap_or_default()),
                model: model.map(str::to_owned),
                until,
            };
            match state.services.close_circuit(Read::clean(&request)).await {
                Ok(_) => return Redirect::to("/circuits").into_response(),
                Err(error) => error.into_api_error(),
            }
        }
        Err(_) => ApiError::from(vec![FieldError::new(
            &policy::FieldPath::root().field("until"),
            ErrorCode::Type,
            "must be a time as RFC 3339",
        )]),
    };
    refused(&state, headers, &error).await
}

/// `POST /pauses`: pause or resume without JavaScript. Done: back to the
/// circuits page (303). Refused: the page as it is now, saying why.
pub async fn set_pause(State(state): State<AppState>, headers: HeaderMap, form: Pairs) -> Response {
    let pairs = match pairs(form) {
        Ok(pairs) => pairs,
        Err(refused) => return refused.into_response(),
    };
    let provider_id = value(&pairs, "provider_id")
        .filter(|id| !id.is_empty())
        .map(ProviderId::new);
    let error = match value(&pairs, "paused") {
        Some(paused @ ("true" | "false")) => {
            let request = PauseRequest {
                provider_id,
                paused: paused == "true",
            };
            match state.services.set_pause(Read::clean(&request)).await {
                Ok(_) => return Redirect::to("/circuits").into_response(),
                Err(error) => error.into_api_error(),
            }
        }
        _ => ApiError::from(vec![FieldError::new(
            &policy::FieldPath::root().field("paused"),
            ErrorCode::Type,
            "must be true or false",
        )]),
    };
    refused(&state, headers, &error).await
}

/// The circuits page again, saying why a post was refused, with its status.
async fn refused(state: &AppState, headers: HeaderMap, error: &ApiError) -> Response {
    let notice = match error {
        ApiError::Invalid { errors } => errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.message))
            .collect::<Vec<_>>()
            .join("; "),
        other => other.to_string(),
    };
    render(
        state,
        Uri::from_static("/circuits"),
        headers,
        status_of(error),
        CircuitSubmission { notice },
    )
    .await
}
