//! `GET /metrics`: Prometheus text, through the `metrics` crate and its
//! Prometheus exporter. Counters and histograms are recorded where things
//! happen (the engine); the routes-by-state gauge is read from the store at
//! each scrape, so it is true after a restart too.

use std::sync::OnceLock;

use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use policy::route::RouteState;

use crate::error::AppError;
use crate::services::Services;

/// The process's one recorder (the `metrics` facade has one global recorder).
pub fn handle() -> &'static PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE.get_or_init(|| {
        let seconds = [
            0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
            120.0,
        ];
        let recorder = PrometheusBuilder::new()
            .set_buckets_for_metric(
                Matcher::Full("switchback_deadline_lateness_seconds".into()),
                &seconds,
            )
            .and_then(|builder| {
                builder.set_buckets_for_metric(
                    Matcher::Full("switchback_provider_call_seconds".into()),
                    &seconds,
                )
            })
            .and_then(|builder| {
                // Switchback's own time in a gateway call: finer at the low end.
                builder.set_buckets_for_metric(
                    Matcher::Full("switchback_gateway_overhead_seconds".into()),
                    &[
                        0.000_1, 0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1,
                        0.25, 1.0,
                    ],
                )
            })
            .expect("bucket lists are not empty")
            .build_recorder();
        let handle = recorder.handle();
        // Another recorder may be installed already (tests run many servers in one
        // process); this handle then renders what this recorder saw: nothing.
        let _ = metrics::set_global_recorder(recorder);
        handle
    })
}

/// Prometheus text for everything recorded, and the routes in each state now.
pub async fn metrics(State(services): State<Services>) -> Result<impl IntoResponse, AppError> {
    let counts = services.store.count_routes().await?;
    for state in RouteState::ALL {
        let count = counts
            .iter()
            .find(|(counted, _)| *counted == state)
            .map_or(0, |(_, count)| *count);
        #[allow(clippy::cast_precision_loss)]
        metrics::gauge!("switchback_routes", "state" => state.as_str()).set(count as f64);
    }
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        handle().render(),
    ))
}
