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

/// A query string that does not read as its type: a 422 at the parameter the
/// reader names (axum's `Query` reads through `serde_path_to_error`): a missing
/// one is `required`, one the endpoint does not take `unknown_field`, a value
/// outside an enumeration `enum`, any other value `type`.
fn query_refused(rejection: axum::extract::rejection::QueryRejection) -> AppError {
    type Refusal = serde_path_to_error::Error<serde::de::value::Error>;
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&rejection);
    let refusal = std::iter::from_fn(|| {
        let error = source?;
        source = error.source();
        Some(error)
    })
    .find_map(|error| error.downcast_ref::<Refusal>());
    let Some(refusal) = refusal else {
        return AppError::from(vec![api::FieldError::new(
            &api::FieldPath::root(),
            api::ErrorCode::Type,
            rejection.body_text(),
        )]);
    };
    let message = refusal.inner().to_string();
    let root = api::FieldPath::root();
    // serde names a missing or an unknown field in its message, at the path of
    // the struct that holds it (the query's root): a missing one is ours, up to
    // its closing backtick; an unknown one is the caller's and may hold
    // backticks, so it ends at the last "`, expected " (the list of the names
    // expected holds none).
    let named = |prefix: &str, end: &str| {
        let rest = message.strip_prefix(prefix)?;
        Some(rest[..rest.rfind(end)?].to_owned())
    };
    let (path, code) = if let Some(name) = named("missing field `", "`") {
        (root.field(&name), api::ErrorCode::Required)
    } else if let Some(name) = named("unknown field `", "`, expected ")
        .or_else(|| named("unknown field `", "`, there are no fields"))
    {
        (root.field(&name), api::ErrorCode::UnknownField)
    } else {
        let path = refusal
            .path()
            .iter()
            .fold(root, |path, segment| match segment {
                serde_path_to_error::Segment::Seq { index } => path.index(*index),
                serde_path_to_error::Segment::Map { key } => path.field(key),
                serde_path_to_error::Segment::Enum { variant } => path.field(variant),
                serde_path_to_error::Segment::Unknown => path,
            });
        let code = if message.starts_with("unknown variant") {
            api::ErrorCode::Enum
        } else {
            api::ErrorCode::Type
        };
        (path, code)
    };
    AppError::from(vec![api::FieldError::new(&path, code, message)])
}

async fn no_such_route() -> AppError {
    AppError::from(ApiError::no_such_route())
}
