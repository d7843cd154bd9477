//! The Switchback server: configuration, store, HTTP surface and the embedded
//! web app. `main.rs` is a thin shell over [`cli`] and [`serve`].

pub mod cli;
pub mod config;
pub mod http;
pub mod serve;
pub mod site;
pub mod store;
pub mod telemetry;
