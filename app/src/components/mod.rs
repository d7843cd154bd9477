//! Leaf components: small, one per file, driven by signals.

mod backoff_preview;
mod circuit_state;
mod error_notice;
mod field;

pub use backoff_preview::{BackoffInputs, BackoffPreview};
pub use circuit_state::{CircuitReopens, CircuitTitle};
pub use error_notice::ErrorNotice;
pub use field::{
    CheckField, FieldErrors, FieldMessage, NumberField, Touched, input_id, message_id,
    with_server_errors,
};
