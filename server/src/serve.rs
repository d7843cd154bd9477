//! `switchback serve`: open the store, then serve until SIGTERM or Ctrl-C.

use std::sync::Arc;

use anyhow::Context;
use api::KeyEnvRules;
use tokio::net::{TcpListener, TcpSocket};

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::engine::{Engine, EngineSettings, ProviderCaller};
use crate::http::{AccessControl, AppState, HostGuard, MutationLimit, leptos_options, router};
use crate::secrets::ProcessSecrets;
use crate::services::{OpenTasks, Services};

/// Run the server with `config` until a shutdown signal arrives.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let store = crate::store::open(&config.database_url, &config.replica).await?;
    store.init_instance(clock.now()).await?;
    let listener =
        listen(config.bind).with_context(|| format!("cannot listen on {}", config.bind))?;
    let local_addr = listener.local_addr()?;
    crate::http::metrics::handle();
    let engine = Engine::new(
        store.clone(),
        clock.clone(),
        Arc::new(ProviderCaller::new()),
        EngineSettings {
            max_in_flight: config.max_in_flight,
            ..EngineSettings::default()
        },
    );
    let services = Services {
        store: store.clone(),
        clock: clock.clone(),
        secrets: Arc::new(ProcessSecrets),
        key_envs: KeyEnvRules::new(config.allowed_key_envs),
        engine: engine.clone(),
        open_tasks: OpenTasks::at_most(config.max_open_tasks),
        inbox_count: Default::default(),
    };
    if config.demo {
        crate::demo::seed(&services).await?;
    }
    let started = std::time::Instant::now();
    let reconciled = engine.start().await?;
    tracing::info!(
        routes = reconciled,
        elapsed_ms = started.elapsed().as_millis(),
        "route engine started"
    );
    let access = match &config.admin_token {
        Some(token) => AccessControl::with_token(token, config.open_metrics, clock.clone())?,
        None => AccessControl::open(clock.clone()),
    };
    let mutation_limit = MutationLimit::per_minute(config.mutations_per_minute);
    let forgetting = mutation_limit.clone();
    tokio::spawn(async move {
        let mut every_minute = tokio::time::interval(std::time::Duration::from_secs(60));
        loop {
            every_minute.tick().await;
            forgetting.forget_idle_clients();
        }
    });
    let state = AppState {
        leptos_options: leptos_options(local_addr),
        services,
        host_guard: HostGuard::new(&config.public_names),
        access: access.clone(),
        mutation_limit,
    };
    if access.is_guarded() {
        tracing::info!("an admin token guards every call and page; sign in at /login");
    }
    let shutdown = shutdown_signal();
    // Tests and scripts read the address from the end of this line.
    tracing::info!("switchback listening on http://{local_addr}");
    let stopping = engine.clone();
    axum::serve(
        listener,
        router(state).into_make_service_with_connect_info::<std::net::SocketAddr>(),
    )
    .with_graceful_shutdown(async move {
        shutdown.await;
        stopping.shut_down();
    })
    .await
    .context("server error")?;
    store.close().await;
    tracing::info!("switchback stopped");
    Ok(())
}

/// A listener with room for a burst of connections: tokio's default
/// backlog of 128 drops some of 200 clients connecting at once (each then
/// waits a second to try again).
fn listen(bind: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if bind.is_ipv4() {
        TcpSocket::new_v4()?
    } else {
        TcpSocket::new_v6()?
    };
    socket.set_reuseaddr(true)?;
    socket.bind(bind)?;
    socket.listen(1024)
}

/// Resolves on Ctrl-C or SIGTERM. On Unix the signals are listened for from
/// the call on, not from the first poll: one that comes between the log line saying
/// where it listens and the server's first turn must still stop it cleanly
/// (without a handler, SIGTERM ends the process on the spot).
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (
            signal(SignalKind::interrupt()).ok(),
            signal(SignalKind::terminate()).ok(),
        )
    };
    async move {
        #[cfg(unix)]
        {
            let interrupt = async {
                match interrupt.as_mut() {
                    Some(signal) => drop(signal.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            let terminate = async {
                match terminate.as_mut() {
                    Some(signal) => drop(signal.recv().await),
                    None => std::future::pending::<()>().await,
                }
            };
            tokio::select! {
                () = interrupt => {},
                () = terminate => {},
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        tracing::info!("shutting down");
    }
}
