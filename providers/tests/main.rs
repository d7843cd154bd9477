//! The adapters' integration tests, in one binary (one link, not one a file).

mod fuzz_regressions;
mod http;
mod keys;
mod simulated;
