//! Task snapshots, which never change: read once, kept in memory up to a bound.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use api::TaskId;

use super::Engine;
use crate::domain::Task;
use crate::store::StoreError;

/// How many task snapshots are kept in memory.
const SNAPSHOTS_KEPT: usize = 65_536;

/// The snapshots kept.
#[derive(Default)]
pub(super) struct Snapshots {
    kept: Mutex<HashMap<TaskId, Arc<Task>>>,
}

impl Snapshots {
    fn kept(&self) -> MutexGuard<'_, HashMap<TaskId, Arc<Task>>> {
        self.kept
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keep `task`'s snapshot.
    pub(super) fn keep(&self, task: Task) -> Arc<Task> {
        let task = Arc::new(task);
        let mut kept = self.kept();
        // Bounded: forgetting them all now and then costs a read each, never a result.
        if kept.len() >= SNAPSHOTS_KEPT {
            kept.clear();
        }
        kept.insert(task.id.clone(), task.clone());
        task
    }

    /// Forget a finished task's snapshot: a new turn reads it again if one comes.
    pub(super) fn forget(&self, id: &TaskId) {
        self.kept().remove(id);
    }

    fn get(&self, id: &TaskId) -> Option<Arc<Task>> {
        self.kept().get(id).cloned()
    }
}

impl Engine {
    /// A task's snapshot, from memory when it was read (or written) before.
    pub(super) async fn snapshot(&self, id: &TaskId) -> Result<Arc<Task>, StoreError> {
        match self.inner.snapshots.get(id) {
            Some(task) => Ok(task),
            None => Ok(self
                .inner
                .snapshots
                .keep(self.inner.store.get_snapshot(id).await?)),
        }
    }
}
