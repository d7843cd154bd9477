//! The Switchback server: configuration, store, route engine, services, HTTP
//! surface and the embedded web app. `main.rs` is a thin shell over [`cli`] and
//! [`serve`]. The route engine (`engine`: commit-then-act, dispatch, the
//! scheduler, restart reconciliation, circuits) runs every task; the provider
//! adapters are the `providers` crate's. See ARCHITECTURE.md.

pub mod cli;
pub mod clock;
pub mod commands;
pub mod config;
pub mod demo;
pub mod domain;
pub mod engine;
pub mod error;
pub mod gateway;
pub mod http;
pub mod inbox;
pub mod secrets;
pub mod serve;
pub mod services;
pub mod site;
pub mod store;
pub mod telemetry;
