//! The policy crate's integration tests, in one binary (one link, not one a file).

mod bounds;
mod evaluate;
mod legacy;
mod properties;
mod purity;
mod route;
mod validation;
