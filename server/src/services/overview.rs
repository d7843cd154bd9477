//! What needs a person, on one page: the home page's data.

use api::{
    InboxCount, OVERVIEW_RECENT_MS, OVERVIEW_TASKS_MAX, OverviewView, RecentCounts, SetupCounts,
};
use policy::route::RouteState;
use std::sync::{Arc, Mutex};

use super::Services;
use crate::engine::views::task_summary;
use crate::error::AppError;

/// How long the overview reuses its count of the catalogue's inbox: counting
/// groups the latest unsure attempts, reading their evidence, which is too much to
/// do at every read of a page that every route event reads again.
pub const INBOX_COUNT_REUSED_MS: i64 = 30_000;

/// The inbox count the overview last made, and when (server milliseconds).
#[derive(Debug, Clone, Default)]
pub struct InboxCountCache(Arc<Mutex<Option<(i64, InboxCount)>>>);

impl Services {
    /// The catalogue's inbox counted, at most [`INBOX_COUNT_REUSED_MS`] old.
    async fn inbox_count(&self, now_ms: i64) -> Result<InboxCount, AppError> {
        let kept = *self.inbox_count.0.lock().expect("not poisoned");
        if let Some((at_ms, count)) = kept
            && (0..INBOX_COUNT_REUSED_MS).contains(&(now_ms - at_ms))
        {
            return Ok(count);
        }
        let inbox = crate::inbox::inbox(self.store.as_ref()).await?;
        let count = InboxCount {
            groups: u32::try_from(inbox.groups.len()).unwrap_or(u32::MAX),
            attempts: inbox.groups.iter().map(|group| group.count).sum(),
        };
        *self.inbox_count.0.lock().expect("not poisoned") = Some((now_ms, count));
        Ok(count)
    }

    /// Tasks held and waiting, open circuits, the catalogue's inbox, how the last
    /// day's tasks stand, and what is set up.
    pub async fn overview(&self) -> Result<OverviewView, AppError> {
        let now = self.clock.now();
        let since = now.plus_millis(-OVERVIEW_RECENT_MS);
        let store = self.store.as_ref();
        let held = store
            .list_tasks(Some(RouteState::Held), None, OVERVIEW_TASKS_MAX)
            .await?;
        let waiting = store.list_waiting(OVERVIEW_TASKS_MAX).await?;
        let counts = store.route_counts(since.as_millis()).await?;
        let providers = store.list_providers().await?;
        let circuits = store
            .list_circuits()
            .await?
            .iter()
            .filter_map(|circuit| {
                super::circuits::circuit_view(circuit, &providers, now.as_millis())
            })
            .collect();
        let inbox = self.inbox_count(now.as_millis()).await?;
        let mut recent = RecentCounts {
            since,
            completed: 0,
            stopped: 0,
            held: 0,
            in_progress: 0,
        };
        for (state, count) in &counts.created_since {
            let slot = match state {
                RouteState::Completed => &mut recent.completed,
                RouteState::Stopped => &mut recent.stopped,
                RouteState::Held => &mut recent.held,
                RouteState::Queued
                | RouteState::Running
                | RouteState::RetryWait
                | RouteState::WaitingForReset
                | RouteState::Retrying => &mut recent.in_progress,
            };
            *slot += count;
        }
        let any_task = !counts.created_since.is_empty()
            || counts.held > 0
            || counts.waiting > 0
            || !store.list_tasks(None, None, 1).await?.is_empty();
        Ok(OverviewView {
            now,
            held: held.iter().map(task_summary).collect(),
            held_total: counts.held,
            waiting: waiting.iter().map(task_summary).collect(),
            waiting_total: counts.waiting,
            circuits,
            inbox,
            recent,
            setup: SetupCounts {
                providers: u32::try_from(providers.len()).unwrap_or(u32::MAX),
                profiles: u32::try_from(store.list_profiles().await?.len()).unwrap_or(u32::MAX),
                any_task,
            },
        })
    }
}
