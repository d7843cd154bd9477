//! Calls in flight: each route's call is registered before its start is committed,
//! so a stop committed from then on finds it to cut (even before it is sent), and a
//! call a stop took is never evaluated.

use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::{Mutex, MutexGuard};

use api::TaskId;
use futures_util::future::AbortHandle;
use tokio::sync::broadcast;

use super::{Engine, Feed};

/// A route's call: the generation its attempt started at, and what cuts it.
struct Call {
    generation: i64,
    abort: AbortHandle,
}

/// The calls in flight on this process, by route.
#[derive(Default)]
pub(super) struct InFlight {
    calls: Mutex<HashMap<TaskId, Call>>,
}

impl InFlight {
    fn calls(&self) -> MutexGuard<'_, HashMap<TaskId, Call>> {
        self.calls
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Register the call of the attempt about to start at `generation`, so a stop
    /// can cut it from then on (before it is sent, too). Answers `false`, leaving
    /// the registered one alone, if the route already has a call on its way: a
    /// route handed to the dispatcher twice is dispatched once.
    pub(super) fn register(&self, id: &TaskId, generation: i64, abort: AbortHandle) -> bool {
        match self.calls().entry(id.clone()) {
            Entry::Occupied(_) => false,
            Entry::Vacant(vacant) => {
                vacant.insert(Call { generation, abort });
                true
            }
        }
    }

    /// Take back the call of the attempt started at `generation` (it returned, or
    /// never started). Answers `false` if a stop took it first (the route has moved
    /// on).
    pub(super) fn take(&self, id: &TaskId, generation: i64) -> bool {
        let mut calls = self.calls();
        let ours = calls
            .get(id)
            .is_some_and(|call| call.generation == generation);
        if ours {
            calls.remove(id);
        }
        ours
    }

    /// Cut the call of a route stopped while running at `generation`.
    pub(super) fn cancel(&self, id: &TaskId, generation: i64) {
        let mut calls = self.calls();
        if calls
            .get(id)
            .is_some_and(|call| call.generation <= generation)
            && let Some(call) = calls.remove(id)
        {
            tracing::info!(task_id = %id, generation = call.generation, "in-flight call cancelled");
            call.abort.abort();
        }
    }

    #[cfg(test)]
    fn is_empty(&self) -> bool {
        self.calls().is_empty()
    }
}

impl Engine {
    /// Cut the calls other replicas stopped (a shared database's `Feed::Cancel`).
    pub(super) async fn run_cancels(self) {
        let mut feed = self.subscribe();
        loop {
            match feed.recv().await {
                Ok(Feed::Cancel {
                    task_id,
                    generation,
                }) => self.inner.in_flight.cancel(&task_id, generation),
                Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    use futures_util::future::{AbortRegistration, Abortable, Aborted};

    use super::*;

    /// A call as the dispatcher spawns it: abortable, and saying whether it ran.
    fn call(
        registration: AbortRegistration,
        ran: Arc<AtomicBool>,
        forever: bool,
    ) -> tokio::task::JoinHandle<Result<(), Aborted>> {
        tokio::spawn(Abortable::new(
            async move {
                ran.store(true, Ordering::SeqCst);
                if forever {
                    std::future::pending::<()>().await;
                }
            },
            registration,
        ))
    }

    #[tokio::test]
    async fn a_stop_cuts_the_call_in_flight() {
        let in_flight = InFlight::default();
        let id = TaskId::new("t");
        let (abort, registration) = AbortHandle::new_pair();
        assert!(in_flight.register(&id, 3, abort));
        let ran = Arc::default();
        let call = call(registration, Arc::clone(&ran), true);
        tokio::task::yield_now().await;
        in_flight.cancel(&id, 3);
        assert!(call.await.unwrap().is_err(), "the call was cut");
        assert!(!in_flight.take(&id, 3), "and is no longer the route's");
        assert!(in_flight.is_empty());
    }

    #[tokio::test]
    async fn a_stop_between_the_start_and_the_send_keeps_the_call_from_running() {
        let in_flight = InFlight::default();
        let id = TaskId::new("t");
        let (abort, registration) = AbortHandle::new_pair();
        assert!(in_flight.register(&id, 3, abort));
        in_flight.cancel(&id, 3);
        let ran = Arc::new(AtomicBool::new(false));
        let call = call(registration, Arc::clone(&ran), false);
        assert!(call.await.unwrap().is_err(), "cut before it started");
        assert!(!ran.load(Ordering::SeqCst), "it never ran");
        assert!(!in_flight.take(&id, 3));
    }

    #[tokio::test]
    async fn a_second_dispatch_of_a_route_leaves_the_first_call_alone() {
        let in_flight = InFlight::default();
        let id = TaskId::new("t");
        let (first, _) = AbortHandle::new_pair();
        let (second, _) = AbortHandle::new_pair();
        assert!(in_flight.register(&id, 3, first));
        assert!(
            !in_flight.register(&id, 3, second),
            "the route already has a call on its way"
        );
        assert!(
            in_flight.take(&id, 3),
            "the first call is still the route's"
        );
    }

    #[tokio::test]
    async fn a_call_is_its_routes_unless_a_stop_of_its_generation_took_it() {
        let in_flight = InFlight::default();
        let id = TaskId::new("t");
        let (abort, registration) = AbortHandle::new_pair();
        assert!(in_flight.register(&id, 3, abort));
        // A stop from before this attempt's start (it lost to the start) cuts nothing.
        in_flight.cancel(&id, 2);
        let ran = Arc::new(AtomicBool::new(false));
        assert!(
            call(registration, Arc::clone(&ran), false)
                .await
                .unwrap()
                .is_ok()
        );
        assert!(ran.load(Ordering::SeqCst));
        assert!(in_flight.take(&id, 3), "it came back to its route");
        assert!(in_flight.is_empty(), "and nothing is left behind");
    }
}
