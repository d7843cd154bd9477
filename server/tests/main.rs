//! The server's integration tests, in one binary: the server and its
//! dependencies are linked once for all of them rather than once a file.
//!
//! - `docs`: every example of the user guide (`docs/`), checked or run.
//! - `engine`: the route engine end to end, through the services, on a SQLite
//!   file and a manual clock.
//! - `http`: the HTTP surface through the real router, without a socket.
//! - `serve`, `replicas`, `secrets`, `soak`, `sdks`: the real `switchback` binary as a
//!   child process.

mod common;
mod docs;
mod engine;
mod http;
mod replicas;
mod sdks;
mod secrets;
mod serve;
mod soak;
