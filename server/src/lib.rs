//! The Switchback server: configuration, store, services, HTTP surface and
//! the embedded web app. `main.rs` is a thin shell over [`cli`] and [`serve`].
//! The route engine (scheduler, commit-then-dispatch, restart reconciliation,
//! circuits) and the provider adapters will live beside `services`, in
//! `engine` and `providers`; see ARCHITECTURE.md.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod demo;
pub mod domain;
pub mod engine;
pub mod error;
pub mod http;
pub mod secrets;
pub mod serve;
pub mod services;
pub mod site;
pub mod store;
pub mod telemetry;
