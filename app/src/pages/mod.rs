//! One page per route; each page owns its data.

mod circuits;
mod client_keys;
mod home;
mod inbox;
mod not_found;
mod profile_edit;
mod profiles;
mod providers;
mod task;
mod tasks;

pub use circuits::{CircuitSubmission, CircuitsPage};
pub use client_keys::{ClientKeySubmission, ClientKeysPage, unplaced};
pub use home::HomePage;
pub use inbox::InboxPage;
pub use not_found::NotFoundPage;
pub use profile_edit::ProfileEditPage;
pub use profiles::ProfilesPage;
pub use providers::ProvidersPage;
pub use task::{ActionSubmission, TaskPage};
pub use tasks::{TaskSubmission, TasksPage};
