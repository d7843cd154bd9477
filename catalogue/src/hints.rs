//! Timing hints (SPEC 2.3): every source, sanitized, and the precedence between them.
//!
//! Precedence: a stated delay first (`retry-after-ms`, then `retry-after`, then the
//! error's own structured or catalogued statement: `RetryInfo.retryDelay`,
//! `resets_in_seconds`, `resets_at`, "try again in ..."); else the reset of the rate
//! limit that is exhausted (its `-remaining` is 0); else the latest rate-limit reset.
//! Rate-limit reset headers count only when the code is a limit (`rate_limited`,
//! `quota_exhausted`, `usage_limited`): providers send them on every response.
//! A hint that is negative, unparsable, in the past or more than 7 days ahead is dropped
//! and reported. An absolute time is read against the provider's `Date` header.

use std::borrow::Cow;
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Serialize;

use crate::evidence::Headers;
use crate::facts::Facts;
use crate::rules::MessageHint;
use crate::time::{
    parse_go_duration_ms, parse_http_date_ms, parse_number_ms, parse_rfc3339_ms,
    parse_spelled_duration_ms,
};

/// The longest hint kept: 7 days.
pub const MAX_HINT_MS: i64 = 7 * 24 * 60 * 60 * 1000;

/// Why a timing hint was not used.
///
/// ```
/// assert_eq!(serde_json::to_value(catalogue::DropReason::TooFar).unwrap(), "too_far");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DropReason {
    /// Not a number, duration or time the catalogue can read.
    Unparsable,
    /// A negative delay.
    Negative,
    /// A time that has already passed.
    Past,
    /// More than 7 days ahead.
    TooFar,
    /// A wall-clock time without a date or a zone ("resets 3pm"): not a hint.
    NoDateOrZone,
}

/// A timing hint the catalogue saw and did not use, and why.
///
/// ```
/// let dropped = catalogue::DroppedHint {
///     source: "retry-after".into(),
///     value: "soon".into(),
///     reason: catalogue::DropReason::Unparsable,
/// };
/// assert_eq!(
///     serde_json::to_value(&dropped).unwrap(),
///     serde_json::json!({"source": "retry-after", "value": "soon", "reason": "unparsable"}),
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DroppedHint {
    /// Where it came from: a header name, a body field or `message`.
    pub source: String,
    /// The value as given (redacted, at most 64 characters).
    pub value: String,
    /// Why it was dropped.
    pub reason: DropReason,
}

/// The chosen hint and the dropped ones.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct HintOutcome {
    pub retry_after_ms: Option<u64>,
    pub reset_at_ms: Option<i64>,
    pub dropped: Vec<DroppedHint>,
}

/// One hint read from one source.
#[derive(Debug, Clone, Copy)]
enum Hint {
    /// A delay after `observed_at`.
    Relative(u64),
    /// A time, already moved onto the observer's clock.
    Absolute(i64),
}

/// The inputs hint selection reads.
pub(crate) struct HintInputs<'a, 'b> {
    pub headers: &'a Headers,
    pub facts: &'a Facts<'b>,
    pub message_hints: &'a [MessageHint],
    pub limit_code: bool,
    pub observed_at_ms: i64,
}

struct Collector {
    observed_at_ms: i64,
    date_offset_ms: i64,
    dropped: Vec<DroppedHint>,
}

impl Collector {
    fn drop(&mut self, source: &str, value: &str, reason: DropReason) {
        let value = crate::redact::safe_text(value, 64);
        self.dropped.push(DroppedHint {
            source: source.to_owned(),
            value,
            reason,
        });
    }

    /// Checks a relative hint; `Err(true)` from a parser means negative.
    fn relative(&mut self, source: &str, value: &str, parsed: Result<u64, bool>) -> Option<Hint> {
        match parsed {
            Ok(milliseconds) if i64::try_from(milliseconds).is_ok_and(|ms| ms <= MAX_HINT_MS) => {
                Some(Hint::Relative(milliseconds))
            }
            Ok(_) => {
                self.drop(source, value, DropReason::TooFar);
                None
            }
            Err(true) => {
                self.drop(source, value, DropReason::Negative);
                None
            }
            Err(false) => {
                self.drop(source, value, DropReason::Unparsable);
                None
            }
        }
    }

    /// Checks an absolute hint on the provider's clock.
    fn absolute(&mut self, source: &str, value: &str, provider_ms: Option<i64>) -> Option<Hint> {
        let Some(provider_ms) = provider_ms else {
            self.drop(source, value, DropReason::Unparsable);
            return None;
        };
        let effective_ms = provider_ms.saturating_sub(self.date_offset_ms);
        if effective_ms < self.observed_at_ms {
            self.drop(source, value, DropReason::Past);
            None
        } else if effective_ms - self.observed_at_ms > MAX_HINT_MS {
            self.drop(source, value, DropReason::TooFar);
            None
        } else {
            Some(Hint::Absolute(effective_ms))
        }
    }
}

/// Reads every hint source and applies the precedence.
pub(crate) fn select_hint(inputs: &HintInputs) -> HintOutcome {
    let observed_at_ms = inputs.observed_at_ms;
    // Clock skew: the provider's clock runs `date - observed` ahead of ours.
    let date_offset_ms = inputs
        .headers
        .get("date")
        .and_then(parse_http_date_ms)
        .map_or(0, |date_ms| date_ms.saturating_sub(observed_at_ms));
    let mut collector = Collector {
        observed_at_ms,
        date_offset_ms,
        dropped: Vec::new(),
    };

    let mut stated: Vec<Hint> = Vec::new();
    if let Some(value) = inputs.headers.get("retry-after-ms") {
        stated.extend(collector.relative("retry-after-ms", value, parse_number_ms(value, 1.0)));
    }
    if let Some(value) = inputs.headers.get("retry-after") {
        let hint = match parse_number_ms(value, 1_000.0) {
            Err(false) => collector.absolute("retry-after", value, parse_http_date_ms(value)),
            parsed => collector.relative("retry-after", value, parsed),
        };
        stated.extend(hint);
    }
    body_hints(inputs, &mut collector, &mut stated);

    let mut resets: Vec<(Hint, bool)> = Vec::new();
    if inputs.limit_code {
        rate_limit_resets(inputs.headers, &mut collector, &mut resets);
    }

    let chosen = stated.first().copied().or_else(|| {
        let exhausted = resets.iter().filter(|(_, exhausted)| *exhausted);
        let latest = |hints: &mut dyn Iterator<Item = &(Hint, bool)>| {
            hints
                .map(|(hint, _)| *hint)
                .max_by_key(|hint| absolute_ms(*hint, observed_at_ms))
        };
        latest(&mut exhausted.clone()).or_else(|| latest(&mut resets.iter()))
    });
    let mut outcome = HintOutcome {
        dropped: collector.dropped,
        ..HintOutcome::default()
    };
    match chosen {
        Some(Hint::Relative(milliseconds)) => {
            outcome.retry_after_ms = Some(milliseconds);
            outcome.reset_at_ms = Some(absolute_ms(Hint::Relative(milliseconds), observed_at_ms));
        }
        Some(Hint::Absolute(unix_ms)) => outcome.reset_at_ms = Some(unix_ms),
        None => {}
    }
    outcome
}

fn absolute_ms(hint: Hint, observed_at_ms: i64) -> i64 {
    match hint {
        Hint::Relative(milliseconds) => {
            observed_at_ms.saturating_add(i64::try_from(milliseconds).unwrap_or(i64::MAX))
        }
        Hint::Absolute(unix_ms) => unix_ms,
    }
}

/// Hints the error body states: structured fields, then catalogued messages.
fn body_hints(inputs: &HintInputs, collector: &mut Collector, stated: &mut Vec<Hint>) {
    let facts = inputs.facts;
    if let Some(delay) = &facts.retry_delay {
        stated.extend(collector.relative(
            "RetryInfo.retryDelay",
            delay,
            parse_go_duration_ms(delay),
        ));
    }
    if let Some(seconds) = &facts.resets_in_seconds {
        stated.extend(collector.relative(
            "resets_in_seconds",
            seconds,
            parse_number_ms(seconds, 1_000.0),
        ));
    }
    if let Some(resets_at) = &facts.resets_at {
        let unix_ms = epoch_ms(resets_at);
        stated.extend(collector.absolute("resets_at", resets_at, unix_ms));
    }
    for kind in inputs.message_hints {
        for (text, lower) in facts.texts().zip(facts.lowercase_texts()) {
            if let Some(hint) = message_hint(*kind, text, lower, collector) {
                stated.push(hint);
                break;
            }
        }
    }
}

/// Unix seconds (or milliseconds, when the number is that large) as milliseconds.
fn epoch_ms(text: &str) -> Option<i64> {
    let value: f64 = text.trim().parse().ok()?;
    if !value.is_finite() || value <= 0.0 {
        return None;
    }
    let milliseconds = if value >= 1e12 { value } else { value * 1000.0 };
    (milliseconds < 1e16).then_some(milliseconds as i64)
}

/// `anthropic-ratelimit-*-reset` (RFC 3339) and `x-ratelimit-reset-*` (durations), each
/// with whether its `-remaining` partner says the limit is exhausted.
fn rate_limit_resets(headers: &Headers, collector: &mut Collector, resets: &mut Vec<(Hint, bool)>) {
    for (name, value) in headers.iter() {
        if let Some(limit) = name
            .strip_prefix("anthropic-ratelimit-")
            .and_then(|rest| rest.strip_suffix("-reset"))
        {
            let remaining = headers.get(&format!("anthropic-ratelimit-{limit}-remaining"));
            if let Some(hint) = collector.absolute(name, value, parse_rfc3339_ms(value)) {
                resets.push((hint, is_zero(remaining)));
            }
            continue;
        }
        // Azure's spelling, read as everyone else's. Most names do not hold it: copy
        // only those that do.
        let normalized = if memchr::memmem::find(name.as_bytes(), b"x-rate-limit-").is_some() {
            Cow::Owned(name.replacen("x-rate-limit-", "x-ratelimit-", 1))
        } else {
            Cow::Borrowed(name)
        };
        let Some(rest) = normalized.strip_prefix("x-ratelimit-reset") else {
            continue;
        };
        let remaining = headers
            .get(&format!("x-ratelimit-remaining{rest}"))
            .or_else(|| headers.get(&format!("x-rate-limit-remaining{rest}")));
        let hint = match value.trim().parse::<f64>() {
            // A bare number: an epoch (OpenRouter sends milliseconds) or seconds.
            Ok(number) if number >= 1e9 => collector.absolute(name, value, epoch_ms(value)),
            Ok(_) => collector.relative(name, value, parse_number_ms(value, 1_000.0)),
            Err(_) => collector.relative(name, value, parse_go_duration_ms(value)),
        };
        if let Some(hint) = hint {
            resets.push((hint, is_zero(remaining)));
        }
    }
}

fn is_zero(remaining: Option<&str>) -> bool {
    remaining
        .and_then(|text| text.trim().parse::<f64>().ok())
        .is_some_and(|number| number <= 0.0)
}

/// A catalogued message's stated time, if this text carries one (`lower` is `text`
/// ASCII-lowercased).
fn message_hint(
    kind: MessageHint,
    text: &str,
    lower: &str,
    collector: &mut Collector,
) -> Option<Hint> {
    match kind {
        MessageHint::TryAgainIn => {
            let rest = after_any(text, lower, &TRY_AGAIN_IN)?;
            let first_word = rest.split_whitespace().next().unwrap_or("");
            let token = first_word.trim_end_matches(['.', ',', ')', ';']);
            if let Ok(milliseconds) = parse_go_duration_ms(token) {
                return collector.relative("message", token, Ok(milliseconds));
            }
            let spelled = parse_spelled_duration_ms(rest)?;
            collector.relative("message", crate::redact::prefix(rest, 40), Ok(spelled))
        }
        MessageHint::RetryAfterSeconds => {
            let rest = after_any(text, lower, &RETRY_AFTER)?;
            let mut words = rest.split_whitespace();
            let number = words.next()?;
            let unit = words.next()?;
            if !unit.to_ascii_lowercase().starts_with("second") {
                return None;
            }
            collector.relative("message", number, parse_number_ms(number, 1_000.0))
        }
        MessageHint::EpochAfterPipe => {
            let marker = memchr::memmem::find(text.as_bytes(), b"limit reached|")?;
            let rest = &text[marker + "limit reached|".len()..];
            let digits_end = rest
                .find(|character: char| !character.is_ascii_digit())
                .unwrap_or(rest.len());
            let digits = &rest[..digits_end];
            if digits.is_empty() {
                return None;
            }
            collector.absolute("message", digits, epoch_ms(digits))
        }
        MessageHint::TryAgainAt => {
            let rest = after_any(text, lower, &TRY_AGAIN_AT)?;
            let candidate = rest.trim_end_matches(['.', ' ']);
            match parse_rfc3339_ms(candidate) {
                Some(unix_ms) => collector.absolute("message", candidate, Some(unix_ms)),
                None => {
                    collector.drop(
                        "message",
                        crate::redact::prefix(candidate, 40),
                        DropReason::NoDateOrZone,
                    );
                    None
                }
            }
        }
        MessageHint::RegainAccessOn => {
            let rest = after_any(text, lower, &REGAIN_ACCESS_ON)?;
            // `2026-12-01 at 00:00 UTC`
            let date = rest.get(..10)?;
            let time = rest.get(10..)?.trim_start().strip_prefix("at ")?;
            let clock = time.get(..5)?;
            let zone = time.get(5..)?.trim_start();
            if !zone.starts_with("UTC") {
                collector.drop(
                    "message",
                    crate::redact::prefix(rest, 40),
                    DropReason::NoDateOrZone,
                );
                return None;
            }
            let stamp = format!("{date}T{clock}:00Z");
            collector.absolute("message", &stamp, parse_rfc3339_ms(&stamp))
        }
        MessageHint::ResetsWallClock => {
            let rest = after_any(text, lower, &RESETS)?;
            let clock = rest.split(['.', '\n', '·']).next().unwrap_or(rest).trim();
            if clock.is_empty() || !clock.starts_with(|character: char| character.is_ascii_digit())
            {
                return None;
            }
            collector.drop(
                "message",
                crate::redact::prefix(clock, 40),
                DropReason::NoDateOrZone,
            );
            None
        }
    }
}

// The phrases a message states a time after, by hint; the searchers are built once.
static TRY_AGAIN_IN: LazyLock<Phrases> =
    LazyLock::new(|| Phrases::new(&["try again in ", "retry in "]));
static RETRY_AFTER: LazyLock<Phrases> = LazyLock::new(|| Phrases::new(&["retry after "]));
static TRY_AGAIN_AT: LazyLock<Phrases> = LazyLock::new(|| Phrases::new(&["try again at "]));
static REGAIN_ACCESS_ON: LazyLock<Phrases> = LazyLock::new(|| Phrases::new(&["regain access on "]));
static RESETS: LazyLock<Phrases> = LazyLock::new(|| Phrases::new(&["resets ", "reset at "]));

/// Lowercase phrases in order of preference, one searcher each.
struct Phrases(Vec<Finder<'static>>);

impl Phrases {
    fn new(phrases: &[&'static str]) -> Self {
        Self(phrases.iter().map(|&phrase| Finder::new(phrase)).collect())
    }
}

/// The text after the first occurrence of the first of `phrases` that occurs in `text`
/// (`lower` is `text` ASCII-lowercased).
fn after_any<'t>(text: &'t str, lower: &str, phrases: &Phrases) -> Option<&'t str> {
    phrases.0.iter().find_map(|phrase| {
        let start = phrase.find(lower.as_bytes())?;
        text.get(start + phrase.needle().len()..)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Evidence;

    const OBSERVED: i64 = 1_796_004_000_000; // 2026-11-30T02:00:00Z

    /// One row: headers, body, message hints, limit code -> (retry_after_ms, reset_at_ms,
    /// dropped reasons).
    fn check(
        headers: &[(&str, &str)],
        body: Option<&str>,
        message_hints: &[MessageHint],
        expected: (Option<u64>, Option<i64>, &[DropReason]),
    ) {
        let mut evidence = Evidence::new("test");
        for (name, value) in headers {
            evidence = evidence.with_header(name, value);
        }
        let facts = Facts::gather(Some(429), None, body, None);
        let outcome = select_hint(&HintInputs {
            headers: &evidence.headers,
            facts: &facts,
            message_hints,
            limit_code: true,
            observed_at_ms: OBSERVED,
        });
        let reasons: Vec<DropReason> = outcome.dropped.iter().map(|hint| hint.reason).collect();
        assert_eq!(
            (
                outcome.retry_after_ms,
                outcome.reset_at_ms,
                reasons.as_slice()
            ),
            expected,
            "{headers:?} {body:?}"
        );
    }

    #[test]
    fn precedence_and_sanitizing() {
        use DropReason::*;
        let in_20s = Some(OBSERVED + 20_000);
        check(
            &[("retry-after", "20")],
            None,
            &[],
            (Some(20_000), in_20s, &[]),
        );
        check(
            &[("retry-after-ms", "1500"), ("retry-after", "20")],
            None,
            &[],
            (Some(1_500), Some(OBSERVED + 1_500), &[]),
        );
        check(
            &[("retry-after", "Mon, 30 Nov 2026 02:00:20 GMT")],
            None,
            &[],
            (None, in_20s, &[]),
        );
        check(
            &[("retry-after", "-5")],
            None,
            &[],
            (None, None, &[Negative]),
        );
        check(
            &[("retry-after", "soon")],
            None,
            &[],
            (None, None, &[Unparsable]),
        );
        check(
            &[("retry-after", "900000")],
            None,
            &[],
            (None, None, &[TooFar]),
        );
        check(
            &[("retry-after", "Mon, 30 Nov 2026 01:00:00 GMT")],
            None,
            &[],
            (None, None, &[Past]),
        );
        // The exhausted limit's reset wins over a later one.
        check(
            &[
                ("anthropic-ratelimit-requests-remaining", "0"),
                ("anthropic-ratelimit-requests-reset", "2026-11-30T02:00:30Z"),
                ("anthropic-ratelimit-tokens-remaining", "5000"),
                ("anthropic-ratelimit-tokens-reset", "2026-11-30T02:01:00Z"),
            ],
            None,
            &[],
            (None, Some(OBSERVED + 30_000), &[]),
        );
        // Nothing exhausted: the latest reset.
        check(
            &[
                ("x-ratelimit-reset-requests", "1s"),
                ("x-ratelimit-reset-tokens", "6m0s"),
            ],
            None,
            &[],
            (Some(360_000), Some(OBSERVED + 360_000), &[]),
        );
        // Clock skew: the provider's clock is 60 s ahead; its reset 90 s ahead of its Date.
        check(
            &[
                ("date", "Mon, 30 Nov 2026 02:01:00 GMT"),
                ("anthropic-ratelimit-tokens-reset", "2026-11-30T02:02:30Z"),
            ],
            None,
            &[],
            (None, Some(OBSERVED + 90_000), &[]),
        );
        // Gemini RetryInfo.
        check(
            &[],
            Some(
                r#"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"39s"}]}}"#,
            ),
            &[],
            (Some(39_000), Some(OBSERVED + 39_000), &[]),
        );
        // Catalogued messages.
        check(
            &[],
            Some(
                r#"{"error":{"message":"Rate limit reached ... Please try again in 9m38.016s. Need more tokens?","code":"rate_limit_exceeded"}}"#,
            ),
            &[MessageHint::TryAgainIn],
            (Some(578_016), Some(OBSERVED + 578_016), &[]),
        );
        check(
            &[],
            Some(
                "You've hit your usage limit. Upgrade to Pro or try again in 2 days 17 hours 14 minutes.",
            ),
            &[MessageHint::TryAgainIn],
            (Some(234_840_000), Some(OBSERVED + 234_840_000), &[]),
        );
        check(
            &[],
            Some("Claude AI usage limit reached|1796022000"),
            &[MessageHint::EpochAfterPipe, MessageHint::ResetsWallClock],
            (None, Some(1_796_022_000_000), &[]),
        );
        check(
            &[],
            Some("5-hour limit reached ∙ resets 3pm"),
            &[MessageHint::ResetsWallClock],
            (None, None, &[NoDateOrZone]),
        );
        // Without a catalogued rule, the same words are not a hint.
        check(&[], Some("please try again in 5s"), &[], (None, None, &[]));
    }

    #[test]
    fn phrases_are_found_in_any_case_the_first_listed_first() {
        let after = |text: &'static str, phrases: &Phrases| {
            after_any(text, &text.to_ascii_lowercase(), phrases)
        };
        assert_eq!(after("Please Try Again in 6ms", &TRY_AGAIN_IN), Some("6ms"));
        assert_eq!(after("ÉTRY AGAIN IN 2s", &TRY_AGAIN_IN), Some("2s"));
        // The first listed phrase wins wherever it is.
        assert_eq!(
            after("Retry in 1s, or try again in 2s", &TRY_AGAIN_IN),
            Some("2s")
        );
        assert_eq!(after("retry in 1s", &TRY_AGAIN_IN), Some("1s"));
        assert_eq!(after("nothing to see", &TRY_AGAIN_IN), None);
    }
}
