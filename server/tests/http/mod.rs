//! The HTTP surface through the real router, without a socket, on a real
//! SQLite file: the JSON API, the plain-form posts, the server functions,
//! the guard in front of them all, and the OpenAPI document.

mod access;
mod api;
mod cli;
mod contract;
mod events;
mod forms;
mod gateway;
mod guard;
mod inbox;
mod server_fns;
mod site;

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use server::clock::ManualClock;
use server::http::{AccessControl, AppState, HostGuard, MutationLimit, leptos_options, router};
use server::secrets::FixedSecrets;
use server::services::Services;
use server::store::SqliteStore;
use tower::ServiceExt;

/// The host every request names, unless a test says otherwise.
pub const HOST: &str = "127.0.0.1:3000";

/// A router over a fresh database, with a fixed clock and fixed secrets:
/// `ANTHROPIC_API_KEY` is set, and `local_token` (an allowed name of a
/// form that `*_API_KEY` would not allow) is set too.
pub struct Api {
    router: Router,
    /// The services behind the router.
    pub services: Services,
    /// The services' clock, which only the test moves.
    pub clock: Arc<ManualClock>,
    /// The SQLite database's URL, for a test that must reach past the store.
    pub database_url: String,
    _dir: tempfile::TempDir,
}

/// An answer: status, headers and body text.
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The headers.
    pub headers: axum::http::HeaderMap,
    /// The body, as text.
    pub text: String,
}

impl Answer {
    /// The body as JSON (`null` when empty).
    pub fn json(&self) -> Value {
        if self.text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&self.text)
                .unwrap_or_else(|error| panic!("not JSON ({error}): {}", self.text))
        }
    }
}

/// What a test may change about the server: open by default, no limits.
#[derive(Debug, Default, Clone)]
pub struct Settings {
    /// The admin token, if the server has one.
    pub admin_token: Option<&'static str>,
    /// `/metrics` open without the token.
    pub open_metrics: bool,
    /// Changes a minute per client (0: none).
    pub mutations_per_minute: u32,
    /// Unfinished tasks at most (0: no limit).
    pub max_open_tasks: u64,
}

impl Api {
    /// The router over a fresh database, open and unlimited.
    pub async fn new() -> Self {
        Self::with(Settings::default()).await
    }

    /// The router over a fresh database, as `settings` say.
    pub async fn with(settings: Settings) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("api.db").display());
        let store: Arc<dyn server::store::Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
        let manual = Arc::new(ManualClock::at_millis(1_796_000_000_000));
        let clock: Arc<dyn server::clock::Clock> = manual.clone();
        let engine = server::engine::Engine::new(
            store.clone(),
            clock.clone(),
            Arc::new(server::engine::ProviderCaller::new()),
            server::engine::EngineSettings::default(),
        );
        engine.start().await.unwrap();
        let services = Services {
            store,
            clock,
            engine,
            open_tasks: server::services::OpenTasks::at_most(settings.max_open_tasks),
            inbox_count: Default::default(),
            secrets: Arc::new(FixedSecrets::new([
                ("ANTHROPIC_API_KEY", "sk-ant-test-value"),
                ("local_token", "local-test-value"),
            ])),
            key_envs: ::api::KeyEnvRules::new(vec!["local_token".to_owned()]),
        };
        let state = AppState {
            leptos_options: leptos_options("127.0.0.1:0".parse().unwrap()),
            services: services.clone(),
            host_guard: HostGuard::new(&["switchback.example.com".to_owned()]),
            access: match settings.admin_token {
                Some(token) => {
                    AccessControl::with_token(token, settings.open_metrics, services.clock.clone())
                        .unwrap()
                }
                None => AccessControl::open(services.clock.clone()),
            },
            mutation_limit: MutationLimit::per_minute(settings.mutations_per_minute),
        };
        Self {
            router: router(state),
            services,
            clock: manual,
            database_url: url,
            _dir: dir,
        }
    }

    /// The router, to open a stream on.
    pub fn router(&self) -> Router {
        self.router.clone()
    }

    /// Send a request as it is.
    pub async fn send(&self, request: Request<Body>) -> Answer {
        let response = self.router.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let headers = response.headers().clone();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        Answer {
            status,
            headers,
            text: String::from_utf8_lossy(&bytes).into_owned(),
        }
    }

    /// Send JSON (or nothing) to `path`, as a program would.
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let builder = Request::builder()
            .method(method)
            .uri(path)
            .header(header::HOST, HOST);
        let request = match body {
            Some(body) => builder
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(body.to_string()))
                .unwrap(),
            None => builder.body(Body::empty()).unwrap(),
        };
        let answer = self.send(request).await;
        (answer.status, answer.json())
    }

    /// Post a form to `path`, as a browser on this server's own page would.
    pub async fn post_form(&self, path: &str, pairs: &[(&str, &str)]) -> Answer {
        let body = serde_urlencoded::to_string(pairs).unwrap();
        self.send(
            Request::builder()
                .method(Method::POST)
                .uri(path)
                .header(header::HOST, HOST)
                .header(header::ORIGIN, format!("http://{HOST}"))
                .header("sec-fetch-site", "same-origin")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from(body))
                .unwrap(),
        )
        .await
    }

    /// A provider through the API.
    pub async fn provider(&self, name: &str) -> Value {
        let (status, body) = self
            .call(
                Method::POST,
                "/api/providers",
                Some(json!({
                    "name": name, "kind": "anthropic", "base_url": "https://api.anthropic.com",
                    "api_key_env": "ANTHROPIC_API_KEY",
                })),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body
    }
}

/// `(field, code)` of each error in a refusal.
pub fn fields(body: &Value) -> Vec<(String, String)> {
    body["errors"]
        .as_array()
        .unwrap_or_else(|| panic!("field errors expected: {body}"))
        .iter()
        .map(|error| {
            (
                error["field"].as_str().unwrap().to_owned(),
                error["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Owned `(field, code)` pairs.
pub fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}
