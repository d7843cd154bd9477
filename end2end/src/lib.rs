//! The browser-test harness: start a real `switchback` binary on a free
//! loopback port with its own database, and drive Debian's Chromium against
//! it through playwright-rs. A browser that cannot start fails the test.

mod browser;
mod server;

pub use browser::{Browser, Device, TestPage};
pub use server::TestServer;
