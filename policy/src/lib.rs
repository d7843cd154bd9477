//! Switchback's recovery policy, shared by the server and the browser.
//!
//! Everything here is pure: no I/O, no clock, no randomness. Time comes in as
//! an argument, so the same code gives the same answer on both sides.
//!
//! Code map, one concern per module:
//!
//! - `codes`: semantic codes and their classes (SPEC 2.2).
//! - `classification`: the catalogue's verdict as the policy reads it.
//! - `document`: the version-2 policy document, its defaults and bounds (SPEC 3).
//! - `path`, `errors`: field paths and the `{"field", "code", "message"}` error.
//! - `validate`: version-2 documents from JSON, every error at once.
//! - `legacy`: version-1 rule maps (SPEC 3.1); `normalize`: the one entry point.
//! - `backoff`, `schedule`: delays, the derived schedule, and its words.
//! - `evaluate`: the decision after a failure (SPEC 4).
//! - `escalation`: `max_tokens` escalation (SPEC 5).
//! - `profile`, `provider`: the limits of profiles, and what a provider's kind and family are.
//!
//! ```
//! use policy::*;
//! let document = normalize_policy(&serde_json::json!({"default": "try_next"}), &FieldPath::root()).unwrap();
//! let verdict = Classification::new(SemanticCode::RateLimited, Confidence::High);
//! let decision = evaluate(&document, &verdict, &Episode::default(), Effects::default(), true, 0);
//! assert_eq!(decision, Decision::Skip);
//! ```

#![warn(missing_docs)]

pub mod backoff;
pub mod classification;
pub mod codes;
pub mod document;
pub mod errors;
pub mod escalation;
pub mod evaluate;
pub mod legacy;
pub mod normalize;
pub mod path;
pub mod profile;
pub mod provider;
mod read;
pub mod schedule;
pub mod validate;

pub use backoff::{backoff_ms, MAX_BACKOFF_MS};
pub use classification::{Classification, Confidence};
pub use codes::{Class, SemanticCode, UnknownCode};
pub use document::{
    Bounds, OnExhausted, PolicyDocument, PolicySection, ResetWaitSettings, RetrySettings, SectionClass,
    INITIAL_INTERVAL_MS_BOUNDS, MAX_RETRIES_BOUNDS, MAX_WAIT_S_BOUNDS, POLICY_VERSION,
};
pub use errors::{describe_json, ErrorCode, FieldError};
pub use escalation::{
    normalize_escalation, EscalationSettings, CEILING_TOKENS_BOUNDS, ESCALATION_FACTOR,
    MAX_ESCALATIONS_BOUNDS,
};
pub use evaluate::{
    evaluate, Decision, Effects, Episode, HoldCause, RetryCounts, StopCause, MAX_RETRY_PUSH_MS,
};
pub use legacy::{normalize_legacy, LegacyAction, LEGACY_DEFAULT_KEY};
pub use normalize::normalize_policy;
pub use path::FieldPath;
pub use profile::{MAX_TOKENS_BOUNDS, MODEL_MAX_CHARS, NAME_MAX_CHARS};
pub use provider::{ProviderFamily, ProviderKind};
pub use schedule::{describe_schedule, format_duration_ms, schedule, Schedule, ScheduleStep};
pub use validate::validate_document;
