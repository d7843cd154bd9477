//! The operations behind the JSON API, the server functions and the
//! plain-form posts: check the request (the `api` crate's checks), then one
//! store call, then the answer as the API shows it. Every shell is a few
//! lines over one of these.

mod circuits;
mod classify;
mod client_keys;
mod open_tasks;
mod overview;
mod pauses;
mod profiles;
mod providers;
mod replay;
mod tasks;
mod views;

pub use classify::{check_evidence, classification, evidence};
pub use client_keys::{CLIENT_KEY_PREFIX, key_digest};
pub use open_tasks::OpenTasks;
pub use overview::InboxCountCache;
pub use tasks::IDEMPOTENCY_KEY_MAX_CHARS;

use std::sync::Arc;

use api::KeyEnvRules;

use crate::clock::Clock;
use crate::engine::Engine;
use crate::secrets::Secrets;
use crate::store::Store;

/// What every operation can reach. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    /// The durable store.
    pub store: Arc<dyn Store>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// Where provider keys come from (pages only say whether one is set).
    pub secrets: Arc<dyn Secrets>,
    /// Which key variable names providers may use.
    pub key_envs: KeyEnvRules,
    /// The route engine: tasks, turns and actions go through it.
    pub engine: Engine,
    /// The most unfinished tasks the server holds.
    pub open_tasks: OpenTasks,
    /// The catalogue's inbox as the home page last counted it.
    pub inbox_count: InboxCountCache,
}

/// A fresh id for a new row: a UUID v7, whose leading bits are its creation
/// time, so rows written together sit together in the database's indexes (a
/// random id would scatter each batch's writes over the whole file).
pub(crate) fn new_id() -> String {
    uuid::Uuid::now_v7().to_string()
}
