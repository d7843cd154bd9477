//! The HTTP surface: the JSON API, the health check, the server-rendered app,
//! its plain-form posts and the embedded static files, all in one axum router
//! behind one guard (foreign host names, cross-site writes).

pub mod api;
mod backend;
mod forms;
mod guard;
mod health;
pub mod metrics;
mod web;

use std::sync::Arc;

use app::backend::SharedBackend;
use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::middleware::from_fn_with_state;
use axum::routing::{get, post};
use leptos::prelude::{LeptosOptions, provide_context};
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

pub use guard::HostGuard;

use crate::services::Services;

/// What every handler can reach.
#[derive(Clone, FromRef)]
pub struct AppState {
    /// Leptos rendering options (bundle name, paths).
    pub leptos_options: LeptosOptions,
    /// The operations behind the API and the pages.
    pub services: Services,
    /// The host names this server answers to.
    pub host_guard: HostGuard,
}

/// The whole application router, ready to serve or to test with `oneshot`.
pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(app::App);
    let leptos_options = state.leptos_options.clone();
    let backend: SharedBackend = Arc::new(state.services.clone());
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/metrics", get(metrics::metrics))
        .merge(api::router(&state.services.key_envs))
        .route("/profiles/new", post(forms::new_profile))
        .route("/profiles/{id}", post(forms::edit_profile))
        .route("/providers", post(forms::new_provider))
        .route("/providers/{id}", post(forms::edit_provider))
        .route("/tasks", post(forms::new_task))
        .route("/tasks/{id}/actions", post(forms::act))
        .leptos_routes_with_context(
            &state,
            routes,
            move || provide_context(backend.clone()),
            move || app::shell(leptos_options.clone()),
        )
        .fallback(web::static_file_or_not_found)
        .layer(DefaultBodyLimit::max(api::MAX_BODY_BYTES))
        .layer(from_fn_with_state(state.host_guard.clone(), guard::guard))
        .layer(CompressionLayer::new())
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Leptos options for the embedded bundle. Nothing is read from disk at run
/// time: files come from [`crate::site`].
pub fn leptos_options(bind: std::net::SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(app::OUTPUT_NAME)
        .site_pkg_dir("pkg")
        .site_addr(bind)
        .build()
}
