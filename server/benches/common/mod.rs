//! What the bench binaries share: the engine's deadline lateness as it records
//! it, and percentiles.

#![allow(dead_code)]

pub mod process;

use std::sync::{Arc, Mutex};

/// The engine's own deadline lateness, as it records it
/// (`switchback_deadline_lateness_seconds`: each deadline to its firing being
/// durable), kept in full rather than in buckets. Every other metric is dropped.
#[derive(Default, Clone)]
pub struct Lateness(pub Arc<Mutex<Vec<f64>>>);

impl Lateness {
    /// What was recorded, in whole milliseconds, sorted.
    pub fn sorted_ms(&self) -> Vec<i64> {
        let mut recorded: Vec<i64> = self
            .0
            .lock()
            .unwrap()
            .iter()
            .map(|seconds| (seconds * 1_000.0).round() as i64)
            .collect();
        recorded.sort_unstable();
        recorded
    }
}

impl metrics::HistogramFn for Lateness {
    fn record(&self, value: f64) {
        self.0.lock().unwrap().push(value);
    }
}

impl metrics::Recorder for Lateness {
    fn describe_counter(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_gauge(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn describe_histogram(
        &self,
        _: metrics::KeyName,
        _: Option<metrics::Unit>,
        _: metrics::SharedString,
    ) {
    }
    fn register_counter(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Counter {
        metrics::Counter::noop()
    }
    fn register_gauge(&self, _: &metrics::Key, _: &metrics::Metadata<'_>) -> metrics::Gauge {
        metrics::Gauge::noop()
    }
    fn register_histogram(
        &self,
        key: &metrics::Key,
        _: &metrics::Metadata<'_>,
    ) -> metrics::Histogram {
        if key.name() == "switchback_deadline_lateness_seconds" {
            metrics::Histogram::from_arc(Arc::new(self.clone()))
        } else {
            metrics::Histogram::noop()
        }
    }
}

/// The `p` quantile of sorted values (0 when there are none).
pub fn percentile(sorted: &[i64], p: f64) -> i64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[rank]
}

/// Run `statements` in one transaction on any of sqlx's databases.
pub async fn execute_all<DB: sqlx::Database>(pool: sqlx::Pool<DB>, statements: Vec<String>)
where
    for<'c> &'c mut DB::Connection: sqlx::Executor<'c, Database = DB>,
{
    let mut tx = pool.begin().await.unwrap();
    for statement in statements {
        sqlx::raw_sql(sqlx::AssertSqlSafe(statement))
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    pool.close().await;
}
