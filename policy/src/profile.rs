//! Limits of dynamic profiles and providers (SPEC 6), shared by the `api`
//! crate's checks and the editor's inputs.

use crate::document::Bounds;

/// Bounds of a candidate's `max_tokens`: 1..=1000000.
///
/// ```
/// assert_eq!(policy::MAX_TOKENS_BOUNDS.message(), "must be between 1 and 1000000");
/// ```
pub const MAX_TOKENS_BOUNDS: Bounds = Bounds {
    min: 1,
    max: 1_000_000,
};

/// The longest profile or provider name, in characters.
pub const NAME_MAX_CHARS: usize = 100;

/// The longest model name, in characters.
pub const MODEL_MAX_CHARS: usize = 200;
