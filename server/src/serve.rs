//! `switchback serve`: open the store, then serve until SIGTERM or Ctrl-C.

use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use tokio::net::TcpListener;

use crate::config::Config;
use crate::http::{leptos_options, router, AppState};
use crate::store::Store;

/// Run the server with `config` until a shutdown signal arrives.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let store = Store::open(&config.database_url).await?;
    store.init_instance(unix_now_ms()).await?;
    let listener = TcpListener::bind(config.bind)
        .await
        .with_context(|| format!("cannot listen on {}", config.bind))?;
    let local_addr = listener.local_addr()?;
    let state = AppState {
        leptos_options: leptos_options(local_addr),
        store: store.clone(),
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

fn unix_now_ms() -> i64 {
    let since_epoch = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
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
