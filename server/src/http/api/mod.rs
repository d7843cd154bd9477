//! The JSON API under `/api`, described by the OpenAPI document that the
//! same route table generates (`/api/openapi.json`), refined by
//! [`api::openapi::refine`] with what a derive cannot state.

mod body;
mod circuits;
mod classify;
mod client_keys;
mod events;
mod overview;
mod pauses;
mod profiles;
mod providers;
mod replay;
mod tasks;

use std::sync::Arc;

use api::{ApiError, KeyEnvRules};
use axum::routing::{any, get};
use axum::{Json, Router};
use serde_json::Value;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use crate::error::AppError;

/// The largest request body the server reads.
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Switchback",
        description = "Route LLM work through candidate models and recover from provider errors by a policy you can read."
    ),
    tags(
        (name = "providers", description = "Connections to model providers (never their keys)"),
        (name = "profiles", description = "Dynamic profiles: ordered candidates with their recovery policies"),
        (name = "catalogue", description = "Deterministic classification of provider errors"),
        (name = "tasks", description = "Tasks routed through a profile's candidates, their routes, attempts and turns, actions on them, and live route events"),
        (name = "gateway", description = "Client keys for the OpenAI- and Anthropic-compatible gateway under /v1")
    ),
    components(schemas(ApiError))
)]
struct ApiDoc;

fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(
            providers::list_providers,
            providers::create_provider
        ))
        .routes(routes!(
            providers::get_provider,
            providers::update_provider,
            providers::delete_provider
        ))
        .routes(routes!(profiles::list_profiles, profiles::create_profile))
        .routes(routes!(
            profiles::get_profile,
            profiles::update_profile,
            profiles::delete_profile
        ))
        .routes(routes!(classify::classify))
        .routes(routes!(classify::inbox))
        .routes(routes!(classify::reclassify))
        .routes(routes!(tasks::list_tasks, tasks::create_task))
        .routes(routes!(tasks::get_task))
        .routes(routes!(tasks::new_turn))
        .routes(routes!(tasks::act))
        .routes(routes!(events::events))
        .routes(routes!(overview::overview))
        .routes(routes!(circuits::circuits))
        .routes(routes!(circuits::close_circuit))
        .routes(routes!(pauses::pauses, pauses::set_pause))
        .routes(routes!(replay::replay))
        .routes(routes!(
            client_keys::list_client_keys,
            client_keys::create_client_key
        ))
        .routes(routes!(client_keys::revoke_client_key))
}

/// The OpenAPI document of a server whose providers may read the key
/// variables `keys` allows.
pub fn document(keys: &KeyEnvRules) -> Value {
    let (_, openapi) = routes().split_for_parts();
    refined(&openapi, keys)
}

fn refined(openapi: &utoipa::openapi::OpenApi, keys: &KeyEnvRules) -> Value {
    let mut document = serde_json::to_value(openapi).expect("the document serializes");
    api::openapi::refine(&mut document, keys);
    // The zones evidence may name are those of the catalogue's bundled database, which
    // the contract crate (built for the browser too) does not carry.
    let zones: Vec<Value> = std::iter::once(Value::Null)
        .chain(catalogue::time_zone_names().into_iter().map(Value::String))
        .collect();
    let time_zone = document
        .pointer_mut("/components/schemas/EvidenceRequest/properties/time_zone")
        .and_then(Value::as_object_mut)
        .expect("the document describes evidence's time_zone");
    time_zone.insert("enum".to_owned(), Value::Array(zones));
    document
}

/// The API routes, with `/api/openapi.json` describing them.
pub fn router(keys: &KeyEnvRules) -> Router<AppState> {
    let (router, openapi) = routes().split_for_parts();
    let document = Arc::new(refined(&openapi, keys));
    router
        .route(
            "/api/openapi.json",
            get(move || async move { Json(document.as_ref().clone()) }),
        )
        .route("/api", any(no_such_route))
        .route("/api/{*rest}", any(no_such_route))
}

/// A query string that does not read as its type: a 422 that says why, at the
/// parameter when the reader names one (a missing or an unknown one).
fn query_refused(rejection: axum::extract::rejection::QueryRejection) -> AppError {
    let text = rejection.body_text();
    let named = |prefix: &str| {
        let rest = &text[text.find(prefix)? + prefix.len()..];
        Some(rest[..rest.find('`')?].to_owned())
    };
    let root = api::FieldPath::root();
    let (path, code) = if let Some(name) = named("missing field `") {
        (root.field(&name), api::ErrorCode::Required)
    } else if let Some(name) = named("unknown field `") {
        (root.field(&name), api::ErrorCode::UnknownField)
    } else {
        (root, api::ErrorCode::Type)
    };
    AppError::from(vec![api::FieldError::new(&path, code, text)])
}

async fn no_such_route() -> AppError {
    AppError::from(ApiError::no_such_route())
}
