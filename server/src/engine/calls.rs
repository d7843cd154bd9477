//! The gateway's clients, each waiting on its call's task: what each sees of
//! the task as the engine runs it. The answer's text as it streams (only from
//! calls this process makes), how a call ended, and the route after every
//! committed transition (this process's, and on a shared store every replica's,
//! from the live feed).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use api::{RouteView, TaskId};
use providers::StopReason;
use tokio::sync::mpsc;

use super::Engine;
use crate::domain::Feed;

/// What a waiting client hears of its task.
#[derive(Debug, Clone)]
pub enum CallNews {
    /// The next piece of an attempt's answer (the attempt started at this
    /// generation), as the provider streamed it.
    Text(i64, String),
    /// The next piece of a tool call in that attempt's answer.
    Tool(i64, providers::ToolPiece),
    /// That attempt's provider answered completely, for this reason (its
    /// route's transition, `completed`, follows: the gateway answers now).
    Answered(i64, StopReason),
    /// The current attempt's provider call took this long (sent as it ends,
    /// before [`CallNews::Answered`]).
    Called(std::time::Duration),
    /// The tokens that attempt's complete answer used, as its provider
    /// counted them (before [`CallNews::Answered`]).
    Usage(i64, providers::Usage),
    /// The route after a committed transition. A client may hear one twice, or
    /// out of order across replicas: the generation orders them.
    Route(Arc<RouteView>),
}

/// The clients waiting, by task.
#[derive(Debug, Default)]
pub(super) struct Watchers {
    by_task: Mutex<HashMap<TaskId, Vec<mpsc::UnboundedSender<CallNews>>>>,
}

impl Watchers {
    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<TaskId, Vec<mpsc::UnboundedSender<CallNews>>>> {
        self.by_task
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether anyone waits on `id`.
    pub(super) fn watched(&self, id: &TaskId) -> bool {
        self.lock().contains_key(id)
    }

    /// Whether anyone waits at all.
    pub(super) fn any(&self) -> bool {
        !self.lock().is_empty()
    }

    /// Tell every client waiting on `id`.
    pub(super) fn tell(&self, id: &TaskId, news: &CallNews) {
        let mut by_task = self.lock();
        if let Some(senders) = by_task.get_mut(id) {
            senders.retain(|sender| sender.send(news.clone()).is_ok());
            if senders.is_empty() {
                by_task.remove(id);
            }
        }
    }

    fn add(&self, id: &TaskId) -> mpsc::UnboundedReceiver<CallNews> {
        let (sender, receiver) = mpsc::unbounded_channel();
        self.lock().entry(id.clone()).or_default().push(sender);
        receiver
    }

    /// Forget the clients of `id` that stopped listening.
    fn prune(&self, id: &TaskId) {
        let mut by_task = self.lock();
        if let Some(senders) = by_task.get_mut(id) {
            senders.retain(|sender| !sender.is_closed());
            if senders.is_empty() {
                by_task.remove(id);
            }
        }
    }
}

/// One client waiting on a task; it stops waiting when dropped.
#[derive(Debug)]
pub struct Watch {
    engine: Engine,
    id: TaskId,
    receiver: mpsc::UnboundedReceiver<CallNews>,
}

impl Watch {
    /// The next news of the task (never ends while the engine runs).
    pub async fn next(&mut self) -> Option<CallNews> {
        self.receiver.recv().await
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.receiver.close();
        self.engine.inner.watchers.prune(&self.id);
    }
}

impl Engine {
    /// Wait on task `id` (before it is created, so that nothing is missed).
    pub fn watch(&self, id: &TaskId) -> Watch {
        Watch {
            engine: self.clone(),
            id: id.clone(),
            receiver: self.inner.watchers.add(id),
        }
    }

    /// On a shared store, other replicas' transitions reach the waiting clients
    /// from the live feed (this process's own reach them as they commit; a
    /// client ignores what it heard already by its generation).
    pub(super) async fn run_feed_to_watchers(self) {
        let mut feed = self.subscribe();
        loop {
            match feed.recv().await {
                Ok(Feed::Event(event)) => {
                    if !self.inner.watchers.any() {
                        continue;
                    }
                    let Ok(view) = serde_json::from_str::<RouteView>(&event.data) else {
                        continue;
                    };
                    if self.inner.watchers.watched(&view.task_id) {
                        let id = view.task_id.clone();
                        self.inner
                            .watchers
                            .tell(&id, &CallNews::Route(Arc::new(view)));
                    }
                }
                Ok(Feed::Resync | Feed::Cancel { .. })
                | Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
            }
        }
    }
}
