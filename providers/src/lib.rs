//! Switchback's provider adapters (server side only): one interface, [`Adapter::call`],
//! over Anthropic's Messages API, OpenAI's Chat Completions API (and the servers
//! that copy it), and the scripted [simulated provider](simulated). A call either
//! answers or fails with the evidence the catalogue classifies, and the text
//! already streamed when it failed.
//!
//! Code map:
//!
//! - `call`, `config`: the engine's side of the interface (requests, outcomes,
//!   provider configuration and timeouts).
//! - `adapter`: picks the protocol for a provider kind.
//! - `translate`: a gateway client's own request (either protocol) as a candidate
//!   of either carries it, or the field it cannot carry.
//! - `http`: one streaming call, its timeouts, and its evidence; `wire`: what each
//!   protocol sends and what each of its stream events means; `transport`: how a
//!   failed connection is named, read from reqwest's error chain; `key`: the key,
//!   read from the environment at call time, never shown, and scrubbed from what
//!   the call brings back.
//! - [`cli`]: an agent CLI (Claude Code, Codex, the Gemini CLI, any command)
//!   run as a process per call, its events read into the answer or the evidence.
//! - `client`: the shared HTTP client (rustls with ring, HTTP/1.1, no proxy).
//! - [`simulated`]: the script format and its player.
//! - `mock` (feature `mock`): a loopback server speaking both protocols, for tests.
//!
//! A caller that passes the answer on as it streams gives an [`Observer`] to
//! [`Adapter::call_observed`]: it is passed the answer's text piece by piece, the
//! pieces joining into the outcome's text (`tests/http.rs`, `tests/simulated.rs`).
//!
//! Invariants: the key never appears in evidence, errors or `Debug` output, nor
//! in anything a provider sends back: the exact key a call sent is scrubbed from
//! its answer, its streamed output, the pieces an observer is passed (even a key
//! split across them) and its evidence (`key.rs`, `tests/keys.rs`); a
//! dropped call closes its connection (`tests/http.rs`); a call never panics or
//! returns early: every failure is evidence (`tests/http.rs`).

mod adapter;
mod call;
pub mod cli;
mod client;
mod config;
mod http;
mod key;
pub mod simulated;
mod translate;
mod transport;
mod wire;

#[cfg(feature = "mock")]
pub mod mock;

pub use adapter::Adapter;
pub use call::{
    CallOutcome, CallRequest, Message, Observer, Role, StopReason, ToolCall, ToolPiece, Usage,
};
pub use client::{http_client, http_client_builder, http_client_with_connect_timeout};
pub use config::{ProviderConfig, Timeouts};
pub use http::MAX_ERROR_BODY_BYTES;
pub use policy::{CliConfig, CliPreset};
pub use simulated::{
    MAX_STEP_DELAY_MS, SimulatedAction, SimulatedEvidence, SimulatedStep, SimulatedStop, StepError,
    parse_script,
};
pub use translate::{ClientRequest, Unsupported};
pub use wire::{StreamEnd, StreamReading, Wire, read_stream_chunks};

/// The HTTP client crate the adapters use, so a caller builds its client with the
/// same version (`providers::reqwest::Client`).
pub use reqwest;
