//! The one-shot commands of the CLI (everything but `serve`).

pub mod policy_check;
