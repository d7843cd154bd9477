//! Server functions: a few lines each over the [`crate::backend::Backend`].
//! Called directly during server rendering, over HTTP from the browser.

mod act_on_task;
mod close_circuit;
mod create_client_key;
mod create_task;
mod list_client_keys;
mod list_profile_choices;
mod list_profiles;
mod list_providers;
mod list_tasks;
mod load_circuits;
mod load_inbox;
mod load_overview;
mod load_profile_editor;
mod load_replay;
mod load_task;
mod revoke_client_key;
mod save_profile;
mod save_provider;
mod set_pause;

pub use act_on_task::act_on_task;
pub use close_circuit::close_circuit;
pub use create_client_key::create_client_key;
pub use create_task::create_task;
pub use list_client_keys::{ClientKeysData, list_client_keys};
pub use list_profile_choices::{ProfileChoice, list_profile_choices};
pub use list_profiles::list_profiles;
pub use list_providers::{ProvidersData, list_providers};
pub use list_tasks::{TasksData, list_tasks};
pub use load_circuits::load_circuits;
pub use load_inbox::{InboxData, load_inbox};
pub use load_overview::load_overview;
pub use load_profile_editor::load_profile_editor;
pub use load_replay::load_replay;
pub use load_task::load_task;
pub use revoke_client_key::revoke_client_key;
pub use save_profile::save_profile;
pub use save_provider::save_provider;
pub use set_pause::set_pause;
