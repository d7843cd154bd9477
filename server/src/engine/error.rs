//! What the engine refuses or fails with. The services turn it into the contract's
//! errors; the engine knows nothing of HTTP.

use std::sync::Arc;

use policy::route::RouteState;

use crate::domain::{RouteRecord, Task};
use crate::store::StoreError;

/// Why the engine did not make a transition.
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The route machine does not allow the event in the route's state: nothing
    /// changed.
    #[error("{event} is not allowed while the route is {}", .state.as_str())]
    Refused {
        /// The route's state.
        state: RouteState,
        /// The event refused.
        event: &'static str,
    },
    /// The route moved on since the transition was computed (at generation `sent`):
    /// nothing was written. `current` is the route now.
    #[error("generation {sent} is stale: the route is at {}", .current.route.generation)]
    Stale {
        /// The generation the transition was computed from.
        sent: i64,
        /// The route's task.
        task: Arc<Task>,
        /// The route now.
        current: Box<RouteRecord>,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl EngineError {
    /// A failure of the store, as the engine's loops report it: a refusal where
    /// the loop checked the state first is a corrupt route; a stale transition is
    /// not a failure and is told apart before this.
    pub(super) fn into_store_error(self) -> StoreError {
        match self {
            Self::Store(error) => error,
            Self::Refused { state, event } => StoreError::Corrupt {
                what: "route transition",
                message: format!("{event} refused in state {}", state.as_str()),
            },
            Self::Stale { sent, current, .. } => StoreError::Corrupt {
                what: "route transition",
                message: format!(
                    "computed at generation {sent}, the route is at {}",
                    current.route.generation
                ),
            },
        }
    }
}
