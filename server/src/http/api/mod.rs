//! The JSON API under `/api`, described by the OpenAPI document that the
//! same route table generates (`/api/openapi.json`).

mod body;
mod classify;
mod profiles;
mod providers;

use std::sync::Arc;

use axum::extract::DefaultBodyLimit;
use axum::routing::{any, get};
use axum::{Json, Router};
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use super::AppState;
use crate::error::AppError;

/// The largest request body the API reads.
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
        (name = "catalogue", description = "Deterministic classification of provider errors")
    )
)]
struct ApiDoc;

/// The API routes and the OpenAPI document generated from them.
pub fn router() -> (Router<AppState>, utoipa::openapi::OpenApi) {
    let (router, openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
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
        .split_for_parts();
    let document = Arc::new(openapi.clone());
    let router = router
        .route(
            "/api/openapi.json",
            get(move || async move { Json(document.as_ref().clone()) }),
        )
        .route("/api", any(no_such_route))
        .route("/api/{*rest}", any(no_such_route))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES));
    (router, openapi)
}

async fn no_such_route() -> AppError {
    AppError::NoSuchRoute
}
