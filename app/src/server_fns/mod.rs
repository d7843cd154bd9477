//! Server functions: a few lines each over the [`crate::backend::Backend`].
//! Called directly during server rendering, over HTTP from the browser.

mod list_profiles;
mod list_providers;
mod load_profile_editor;
mod save_profile;
mod save_provider;

pub use list_profiles::list_profiles;
pub use list_providers::{ProvidersData, list_providers};
pub use load_profile_editor::load_profile_editor;
pub use save_profile::save_profile;
pub use save_provider::save_provider;
