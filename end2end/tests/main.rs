//! The browser tests, in one binary (one link, not one a file); each test starts
//! its own server and browser.

mod access;
mod circuits;
mod client_keys;
mod home;
mod inbox;
mod profile_editor;
mod providers;
mod skeleton;
mod tasks;
