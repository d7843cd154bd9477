//! Leaf components: small, one per file, driven by signals.

mod backoff_preview;

pub use backoff_preview::BackoffPreview;
