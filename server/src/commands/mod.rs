//! The one-shot commands of the CLI (everything but `serve`).

pub mod backup;
pub mod policy_check;
