//! The operations behind the API and the pages: validate with the policy
//! crate, then one store call. Handlers and server functions are shells over
//! these.

mod classify;
mod profiles;
mod providers;

use std::sync::Arc;

use crate::clock::Clock;
use crate::store::Store;

/// What every operation can reach. Cheap to clone.
#[derive(Clone)]
pub struct Services {
    /// The durable store.
    pub store: Arc<dyn Store>,
    /// The time source.
    pub clock: Arc<dyn Clock>,
    /// Environment variable names allowed for keys beyond `*_API_KEY`.
    pub allowed_key_envs: Arc<[String]>,
}

/// A fresh id for a new row.
fn new_id() -> String {
    uuid::Uuid::new_v4().to_string()
}
