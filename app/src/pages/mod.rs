//! One page per route; each page owns its data.

mod home;
mod not_found;
mod profiles;
mod tasks;

pub use home::HomePage;
pub use not_found::NotFoundPage;
pub use profiles::ProfilesPage;
pub use tasks::TasksPage;
