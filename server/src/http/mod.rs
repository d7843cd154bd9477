//! The HTTP surface: the JSON API, the health check, the server-rendered app,
//! its plain-form posts and the embedded static files, all in one axum router
//! behind the same layers, outermost first: security headers; the request
//! time limit; the guard (foreign host names, cross-site writes, oversized
//! bodies); the access rule (the admin token, sessions: [`access`]); the
//! per-client budget of changes ([`limits`]).

pub mod access;
pub mod api;
mod backend;
mod forms;
mod guard;
pub mod headers;
mod health;
pub mod limits;
pub mod metrics;
mod web;

use std::sync::Arc;

use app::backend::SharedBackend;
use axum::Router;
use axum::extract::{DefaultBodyLimit, FromRef};
use axum::middleware::{from_fn, from_fn_with_state};
use axum::routing::{get, post};
use leptos::prelude::{LeptosOptions, provide_context};
use leptos_axum::{LeptosRoutes, generate_route_list};
use tower_http::compression::CompressionLayer;
use tower_http::trace::TraceLayer;

pub use access::AccessControl;
pub use guard::HostGuard;
pub use limits::MutationLimit;

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
    /// Who may use the server.
    pub access: AccessControl,
    /// The per-client budget of changes.
    pub mutation_limit: MutationLimit,
}

/// The whole application router, ready to serve or to test with `oneshot`.
pub fn router(state: AppState) -> Router {
    let routes = generate_route_list(app::App);
    let leptos_options = state.leptos_options.clone();
    let backend: SharedBackend = Arc::new(state.services.clone());
    let access_mode = app::layout::AccessMode {
        guarded: state.access.is_guarded(),
    };
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/login", get(access::login_page).post(access::login))
        .route("/logout", post(access::logout))
        .route("/metrics", get(metrics::metrics))
        .merge(api::router(&state.services.key_envs))
        .merge(form_posts())
        .leptos_routes_with_context(
            &state,
            routes,
            move || {
                provide_context(backend.clone());
                provide_context(access_mode);
                page_policy_header();
            },
            move || app::shell(leptos_options.clone()),
        )
        .fallback(web::static_file_or_not_found)
        .layer(DefaultBodyLimit::max(api::MAX_BODY_BYTES))
        .layer(from_fn_with_state(
            state.mutation_limit.clone(),
            limits::budget,
        ))
        .layer(from_fn_with_state(
            state.access.clone(),
            access::require_access,
        ))
        .layer(from_fn_with_state(state.host_guard.clone(), guard::guard))
        .layer(from_fn(limits::timeout))
        .layer(from_fn(headers::security_headers))
        .layer(CompressionLayer::new())
        // The gateway's routes, after the layers above: they have their own.
        .merge(crate::gateway::router(&state))
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// The plain-form posts of the pages (each page's form works before the
/// bundle loads): their paths are [`FORM_POSTS`].
fn form_posts() -> Router<AppState> {
    let handlers = [
        post(forms::new_profile),
        post(forms::edit_profile),
        post(forms::new_provider),
        post(forms::edit_provider),
        post(forms::new_task),
        post(forms::act),
        post(forms::new_client_key),
        post(forms::revoke_client_key),
        post(forms::close_circuit),
        post(forms::set_pause),
    ];
    FORM_POSTS
        .iter()
        .zip(handlers)
        .fold(Router::new(), |router, (path, handler)| {
            router.route(path, handler)
        })
}

/// The paths the pages' plain forms post to, in [`form_posts`]' order.
pub const FORM_POSTS: [&str; 10] = [
    "/profiles/new",
    "/profiles/{id}",
    "/providers",
    "/providers/{id}",
    "/tasks",
    "/tasks/{id}/actions",
    "/client-keys",
    "/client-keys/{id}/revoke",
    "/circuits/close",
    "/pauses",
];

/// The paths of the sign-in page's posts.
pub const ACCESS_POSTS: [&str; 2] = ["/login", "/logout"];

/// Inside a page's rendering: answer it with the Content-Security-Policy
/// that admits the inline scripts the renderer marked with this response's
/// nonce.
pub(crate) fn page_policy_header() {
    let (Some(nonce), Some(response)) = (
        leptos::nonce::use_nonce(),
        leptos::prelude::use_context::<leptos_axum::ResponseOptions>(),
    ) else {
        return;
    };
    if let Ok(value) = axum::http::HeaderValue::from_str(&headers::page_policy(&nonce)) {
        response.insert_header(axum::http::header::CONTENT_SECURITY_POLICY, value);
    }
}

/// Leptos options for the embedded bundle. Nothing is read from disk at run
/// time: files come from [`crate::site`].
pub fn leptos_options(bind: std::net::SocketAddr) -> LeptosOptions {
    LeptosOptions::builder()
        .output_name(app::OUTPUT_NAME)
        .site_pkg_dir(crate::site::pkg_dir())
        .site_addr(bind)
        .build()
}
