//! Switchback's recovery policy, shared by the server and the browser.
//!
//! Everything here is pure: no I/O, no clock, no randomness. Time comes in as
//! an argument, so the same code gives the same answer on both sides.
//!
//! Code map, one concern per module:
//!
//! - `codes`: semantic codes and their classes (SPEC 2.2).
//! - `classification`: the catalogue's verdict as the policy reads it.
//! - `evidence`, `rfc3339`: the readers of evidence's fields (SPEC 2.1) and of
//!   RFC 3339 times, shared by the API (and the browser) and the catalogue.
//! - `document`: the version-2 policy document, its defaults and bounds (SPEC 3).
//! - `path`, `errors`: field paths and the `{"field", "code", "message"}` error.
//! - `validate`: version-2 documents from JSON, every error at once.
//! - `legacy`: version-1 rule maps (SPEC 3.1); `normalize`: the one entry point.
//! - `backoff`, `schedule`: delays, the derived schedule, and its words.
//! - `evaluate`: the decision after a failure (SPEC 4).
//! - `escalation`: `max_tokens` escalation (SPEC 5).
//! - `route`: the route machine, every transition of a route and its effects (SPEC 5).
//! - `circuit`: shared circuits, what opens one over what, and what a route due on one does.
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
pub mod circuit;
pub mod classification;
pub mod codes;
pub mod document;
pub mod errors;
pub mod escalation;
pub mod evaluate;
pub mod evidence;
pub mod legacy;
pub mod normalize;
pub mod path;
pub mod profile;
pub mod provider;
mod read;
pub mod replay;
pub mod rfc3339;
pub mod route;
pub mod schedule;
pub mod validate;

pub use backoff::{MAX_BACKOFF_MS, backoff_ms, jitter_band_ms, jitter_seed, jittered_backoff_ms};
pub use classification::{Classification, Confidence};
pub use codes::{Class, SemanticCode, UnknownCode};
pub use document::{
    Bounds, INITIAL_INTERVAL_MS_BOUNDS, JITTER_PCT_BOUNDS, MAX_RETRIES_BOUNDS, MAX_WAIT_S_BOUNDS,
    OnExhausted, POLICY_VERSION, PolicyDocument, PolicySection, ResetWaitSettings, RetrySettings,
    SectionClass,
};
pub use errors::{ErrorCode, FieldError, JsonInteger, describe_json, json_integer};
pub use escalation::{
    CEILING_TOKENS_BOUNDS, ESCALATION_FACTOR, EscalationSettings, MAX_ESCALATIONS_BOUNDS,
    normalize_escalation,
};
pub use evaluate::{
    Decision, Effects, Episode, HoldCause, MAX_RETRY_PUSH_MS, RetryCounts, RouteTiming, StopCause,
    evaluate,
};
pub use legacy::{LEGACY_DEFAULT_KEY, LegacyAction, normalize_legacy};
pub use normalize::normalize_policy;
pub use path::FieldPath;
pub use profile::{MAX_TOKENS_BOUNDS, MODEL_MAX_CHARS, NAME_MAX_CHARS};
pub use provider::{
    CliConfig, CliPreset, MODEL_PLACEHOLDER, PROMPT_PLACEHOLDER, ProviderFamily, ProviderKind,
    looks_like_a_secret,
};
pub use schedule::{
    Schedule, ScheduleStep, describe_schedule, format_band_ms, format_duration_ms, schedule,
};
pub use validate::validate_document;
