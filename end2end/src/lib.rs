//! The browser-test harness: start a real `switchback` binary on a free
//! loopback port with its own database, and drive Debian's Chromium against
//! it through playwright-rs. A browser that cannot start fails the test.

mod browser;
mod layout;
mod server;

pub use browser::{Browser, Device, TestPage};
pub use layout::{escaped_content, phone_layout_problems};
pub use server::TestServer;

use playwright_rs::protocol::GetByRoleOptions;

/// Find by role with this exact accessible name.
pub fn named(name: &str) -> Option<GetByRoleOptions> {
    Some(GetByRoleOptions::default().name(name).exact(true))
}
