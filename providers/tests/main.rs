//! The adapters' integration tests, in one binary (one link, not one a file),
//! but for `keys.rs`: it sets environment variables, so it is a binary of its own
//! in which nothing else runs.

mod cli;
mod fuzz_regressions;
mod http;
mod simulated;
