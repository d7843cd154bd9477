//! Switchback's provider-error catalogue: deterministic classification of the evidence
//! a failed attempt leaves behind (SPEC 2). Server side only. No model is asked: the
//! same evidence and catalogue version always give the same result.
//!
//! Code map, one concern per module:
//!
//! - `evidence`: the input (SPEC 2.1), read leniently from JSON with the policy crate's
//!   field readers, which the HTTP contract reads a `POST /api/classify` body with too.
//!   The catalogue sits beneath the contract and knows nothing of it: the server turns a
//!   checked request into [`Evidence`].
//! - `family`: provider families and agent CLIs.
//! - `wire`, `facts`: the JSON shapes errors come in, and the facts rules read from them
//!   (SSE error events inside a 200 stream, nested JSON messages, OpenRouter's
//!   `metadata.raw`, CLI output). `wire` reads bodies with serde into borrowed, typed
//!   structs; facts keep their few types, codes and messages in `smallvec` lists.
//! - `rules`: the rules, as data, one table per family (see `CATALOGUE.md`).
//! - `catalogue`: the compiled catalogue and the matching (rank, conflicts); `rule_set`:
//!   the allocation-free rule sets and key indexes it matches with.
//! - `hints`, `time`, `wall_clock`: timing hints (SPEC 2.3), sanitized, with their
//!   precedence; wall-clock resets resolved in the zone printed beside them (or the
//!   evidence's), with the time-zone database bundled into the binary.
//! - `redact`: safe causes (SPEC 2.4).
//! - `output`: the verdict (SPEC 2.5), wrapping the policy crate's `Classification`.
//! - `stream`: `switchback classify`'s line-by-line semantics.
//!
//! ```
//! use catalogue::{classify, Evidence};
//! use policy::{Class, SemanticCode};
//! let evidence = Evidence::from_json_line(
//!     r#"{"provider": "openai", "status": 429, "body": "{\"error\": {\"message\": \"Request too large for gpt-4 in organization org-x on tokens per min (TPM): Limit 10000, Requested 15000.\", \"type\": \"tokens\", \"code\": \"rate_limit_exceeded\"}}"}"#,
//! ).unwrap();
//! let verdict = classify(&evidence, 0);
//! // One request larger than the whole limit never fits: not transient.
//! assert_eq!(verdict.classification.code, SemanticCode::InvalidRequest);
//! assert_eq!(verdict.classification.class, Class::Outside);
//! assert_eq!(verdict.rule, "openai.request_exceeds_limit");
//! ```

#![warn(missing_docs)]

mod catalogue;
mod evidence;
mod facts;
mod family;
mod hints;
mod output;
mod redact;
mod rule_set;
mod rules;
mod scan;
mod stream;
mod time;
mod wall_clock;
mod wire;

pub use crate::catalogue::{Catalogue, UNKNOWN_RULE};
pub use evidence::{Evidence, EvidenceError, Headers, Transport};
pub use family::Family;
pub use hints::{DropReason, DroppedHint, MAX_HINT_MS};
pub use output::CatalogueClassification;
pub use redact::{MAX_SAFE_CAUSE_CHARS, redact_secrets, safe_cause};
pub use stream::{ClassifyLinesError, LineCounts, classify_lines};
pub use wall_clock::{time_zone, time_zone_names};

use policy::SemanticCode;

/// The catalogue version stored with every classification it makes.
pub const CATALOGUE_VERSION: &str = "2026.12.4";

/// Classifies one piece of evidence with the shared catalogue; `now_ms` (unix
/// milliseconds) stands in for a missing `observed_at`.
///
/// ```
/// let verdict = catalogue::classify(&catalogue::Evidence::new("openai").with_status(418), 0);
/// assert_eq!(verdict.classification.code, policy::SemanticCode::Unknown);
/// assert_eq!(verdict.rule, catalogue::UNKNOWN_RULE);
/// ```
pub fn classify(evidence: &Evidence, now_ms: i64) -> CatalogueClassification {
    Catalogue::shared().classify(evidence, now_ms)
}

/// The meaning of an HTTP status that arrives with nothing else to read (SPEC 2.4), or
/// `None` when the bare status says nothing certain (the catalogue then says `unknown`).
///
/// ```
/// use policy::SemanticCode;
/// assert_eq!(catalogue::bare_status(529), Some(SemanticCode::Overloaded));
/// assert_eq!(catalogue::bare_status(402), Some(SemanticCode::InsufficientCredits));
/// assert_eq!(catalogue::bare_status(418), None);
/// ```
pub fn bare_status(status: u16) -> Option<SemanticCode> {
    let verdict = classify(&Evidence::new("other").with_status(status), 0);
    (verdict.classification.code != SemanticCode::Unknown).then_some(verdict.classification.code)
}

#[cfg(test)]
mod tests {
    use policy::{Class, SemanticCode};

    #[test]
    fn well_known_statuses_and_the_rest() {
        for status in [408, 429, 500, 502, 503, 504, 529] {
            assert_eq!(
                super::bare_status(status).map(SemanticCode::class),
                Some(Class::Transient),
                "{status}"
            );
        }
        assert_eq!(super::bare_status(401), Some(SemanticCode::AuthFailed));
        assert_eq!(super::bare_status(403), Some(SemanticCode::AuthFailed));
        assert_eq!(
            super::bare_status(402),
            Some(SemanticCode::InsufficientCredits)
        );
        for status in [200, 400, 404, 418, 501] {
            assert_eq!(super::bare_status(status), None, "{status}");
        }
    }

    /// The catalogue depends on no workspace crate but the pure policy crate: what it
    /// shares with the HTTP contract (the readers of evidence's fields) lives there.
    #[test]
    fn depends_on_no_crate_above_it() {
        let manifest = include_str!("../Cargo.toml");
        let mut in_dependencies = false;
        let mut above = Vec::new();
        for line in manifest.lines().map(str::trim) {
            if line.starts_with('[') {
                in_dependencies = line.trim_matches(['[', ']']).ends_with("dependencies");
                continue;
            }
            let name = line.split(['=', ' ']).next().unwrap_or_default();
            if in_dependencies && ["api", "providers", "app", "server", "end2end"].contains(&name) {
                above.push(name);
            }
        }
        assert_eq!(above, Vec::<&str>::new(), "catalogue/Cargo.toml");
    }
}
