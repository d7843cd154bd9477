//! `switchback serve`: open the store, then serve until SIGTERM or Ctrl-C.

use std::sync::Arc;

use anyhow::Context;
use api::KeyEnvRules;
use tokio::net::TcpListener;

use crate::clock::{Clock, SystemClock};
use crate::config::Config;
use crate::http::{AppState, HostGuard, leptos_options, router};
use crate::secrets::ProcessSecrets;
use crate::services::Services;
use crate::store::{SqliteStore, Store};

/// Run the server with `config` until a shutdown signal arrives.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let clock = Arc::new(SystemClock);
    let store = Arc::new(SqliteStore::open(&config.database_url).await?);
    store.init_instance(clock.now()).await?;
    let listener = TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let local_addr = listener.local_addr()?;
    let services = Services {
        store: store.clone(),
        clock,
        secrets: Arc::new(ProcessSecrets),
        key_envs: KeyEnvRules::new(config.allowed_key_envs),
    };
    let state = AppState {
        leptos_options: leptos_options(local_addr),
        services,
        host_guard: HostGuard::new(&config.public_names),
    };
    tracing::info!("switchback listening on http://{local_addr}");
    axum::serve(listener, router(state))
        .with_graceful_shutdown(shutdown_signal())
        .await
        .context("server error")?;
    store.close().await;
    tracing::info!("switchback stopped");
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down");
}
