//! Timing hints (SPEC 2.3): every source, sanitized, and the precedence between them.
//!
//! Precedence: a stated delay first (`retry-after-ms`, then `retry-after`, then the
//! error's own structured or catalogued statement: `RetryInfo.retryDelay`,
//! `resets_in_seconds`, `resets_at`, a family's statement (Claude Code's epoch, a
//! wall-clock reset in its zone), then a wait written in the text: "try again in ...",
//! "retry after ...", "reset after ..."); else the reset of the rate limit that is
//! exhausted (its `-remaining` is 0, or an Anthropic subscription window's `-status` is
//! `rejected`); else the latest rate-limit reset. Rate-limit reset headers count only
//! when the code is a limit (`rate_limited`, `quota_exhausted`, `usage_limited`):
//! providers send them on every response. A hint that is negative, unparsable, in the
//! past or more than 7 days ahead is dropped and reported. An absolute time is read
//! against the provider's `Date` header.

use std::borrow::Cow;
use std::sync::LazyLock;

use std::ops::Range;

use aho_corasick::AhoCorasick;
use jiff::tz::TimeZone;
use memchr::memmem::Finder;
use serde::Serialize;
use smallvec::SmallVec;

use crate::evidence::Headers;
use crate::facts::Facts;
use crate::rules::MessageHint;
use crate::time::{
    parse_go_duration_ms, parse_http_date_ms, parse_number_ms, parse_rfc3339_ms,
    parse_spelled_duration_ms,
};
use crate::wall_clock::{self, Unresolved};

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
    /// Whether waits stated in the error texts count (not for codes that are never
    /// recovered).
    pub text_waits: bool,
    pub limit_code: bool,
    pub observed_at_ms: i64,
    /// The name of the zone of the process that printed the output (evidence
    /// `time_zone`), looked up only when a wall-clock reset is read.
    pub time_zone: Option<&'a str>,
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
    // The time-zone database is asked only for a wall-clock reset.
    let time_zone = inputs
        .message_hints
        .contains(&MessageHint::WallClock)
        .then(|| inputs.time_zone.and_then(wall_clock::time_zone))
        .flatten();
    for kind in inputs.message_hints {
        for (text, lower) in facts.plain_texts().zip(facts.lowercase_texts()) {
            if let Some(hint) = message_hint(*kind, text, lower, time_zone.as_ref(), collector) {
                stated.push(hint);
                break;
            }
        }
    }
    if inputs.text_waits
        && let Some((text, wait)) = facts
            .plain_texts()
            .zip(&facts.text_waits)
            .find_map(|(text, wait)| Some((text, wait.as_ref()?)))
    {
        let shown = text.get(wait.shown.clone()).unwrap_or_default();
        stated.extend(collector.relative("message", shown, Ok(wait.milliseconds)));
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
            // API keys' limits count down `-remaining`; subscription windows
            // (`unified`, `unified-5h`, `unified-7d`) say `-status: rejected` and give
            // their reset in unix seconds.
            let remaining = headers.get(&format!("anthropic-ratelimit-{limit}-remaining"));
            let rejected = headers
                .get(&format!("anthropic-ratelimit-{limit}-status"))
                .is_some_and(is_rejected);
            let unix_ms = parse_rfc3339_ms(value).or_else(|| epoch_ms(value));
            if let Some(hint) = collector.absolute(name, value, unix_ms) {
                resets.push((hint, is_zero(remaining) || rejected));
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

/// Whether an `anthropic-ratelimit-unified-*-status` says the window refuses requests.
fn is_rejected(status: &str) -> bool {
    status.trim().eq_ignore_ascii_case("rejected")
}

/// Whether any Anthropic subscription window (`anthropic-ratelimit-unified-status`,
/// `-unified-5h-status`, ...) says it refuses requests: a plan's usage limit, not a
/// per-minute throttle.
pub(crate) fn subscription_window_rejected(headers: &Headers) -> bool {
    headers.iter().any(|(name, value)| {
        name.starts_with("anthropic-ratelimit-unified")
            && name.ends_with("-status")
            && is_rejected(value)
    })
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
    time_zone: Option<&TimeZone>,
    collector: &mut Collector,
) -> Option<Hint> {
    match kind {
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
        MessageHint::WallClock => wall_clock_hint(text, lower, time_zone, collector),
    }
}

/// A wall-clock reset the text states, resolved in its zone: the first occurrence of a
/// phrase followed by a date or time the catalogue reads.
fn wall_clock_hint(
    text: &str,
    lower: &str,
    time_zone: Option<&TimeZone>,
    collector: &mut Collector,
) -> Option<Hint> {
    for (phrase, promises_a_time) in WALL_CLOCK.iter() {
        for start in phrase.find_iter(lower.as_bytes()) {
            let Some(rest) = text.get(start + phrase.needle().len()..) else {
                continue;
            };
            let Some(clock) = wall_clock::parse(rest) else {
                // "try again at" promises a time: one the catalogue cannot read is
                // reported. "resets" may be followed by anything ("resets every 5h").
                if *promises_a_time {
                    let shown = crate::redact::prefix(rest, 40).trim_end_matches(['.', ',', ';']);
                    collector.drop("message", shown, DropReason::Unparsable);
                    return None;
                }
                continue;
            };
            let shown = rest[..clock.len].trim_end_matches(['.', ',', ';']);
            return match wall_clock::resolve(&clock, collector.observed_at_ms, time_zone) {
                Ok(unix_ms) => collector.absolute("message", shown, Some(unix_ms)),
                Err(Unresolved::NoZone) => {
                    collector.drop("message", shown, DropReason::NoDateOrZone);
                    None
                }
                Err(Unresolved::Invalid | Unresolved::Ambiguous) => {
                    collector.drop("message", shown, DropReason::Unparsable);
                    None
                }
            };
        }
    }
    None
}

/// A wait one text states, found once per classification: where its value is in the
/// text (for `hints_dropped`), and the value. A duration is read from its first digit,
/// so a stated wait is never negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TextWait {
    /// The byte range of the value as written, in the text's [`Facts::plain_texts`] form.
    pub shown: Range<usize>,
    /// The wait in milliseconds.
    pub milliseconds: u64,
}

/// The wait each text of the facts states, in [`Facts::texts`] order: each text's wait
/// is the first of its phrases followed by a duration. The phrases are read from the
/// one pass (`scan`), as a leftmost-longest search of the texts joined would report
/// them (no phrase holds their separator): from the start, the longest phrase that
/// starts first, then the next one starting after it ends.
pub(crate) fn text_waits(facts: &Facts) -> SmallVec<[Option<TextWait>; 2]> {
    let texts = facts.search_texts();
    let scan = facts.scan();
    let mut waits: SmallVec<[Option<TextWait>; 2]> = SmallVec::from_elem(None, texts.len());
    let mut phrases: SmallVec<[&crate::scan::Hit; 4]> =
        scan.hits_of(crate::scan::WORDINGS.phrases()).collect();
    if phrases.is_empty() {
        return waits;
    }
    phrases.sort_unstable_by_key(|hit| (hit.text, hit.start, std::cmp::Reverse(hit.end)));
    // The end of the last phrase reported, as (text, offset).
    let mut reported_to = (0, 0);
    for phrase in phrases {
        if (phrase.text, phrase.start) < reported_to {
            continue;
        }
        reported_to = (phrase.text, phrase.end);
        let index = phrase.text;
        if waits[index].is_some() {
            continue;
        }
        waits[index] = text_wait(
            texts.plain(index),
            texts.lower(index),
            phrase.start..phrase.end,
            facts.is_output(index),
        );
    }
    waits
}

/// The wait a text states after one of its phrases (at `phrase`) ("Please try again in
/// 6ms", "retry after 2 seconds", "try again in 5 days 22 hours"): `None` unless a
/// duration follows. In CLI output (`output`), which also carries the model's own
/// words ("let me retry in 10 minutes"), a wait counts only after words naming a
/// failure ("Rate limit reached ... try again in 12s").
fn text_wait(text: &str, lower: &str, phrase: Range<usize>, is_output: bool) -> Option<TextWait> {
    if is_output && !names_a_failure_before(lower, phrase.start) {
        return None;
    }
    let rest = text.get(phrase.end..)?.trim_start();
    let rest = ["about ", "approximately ", "~"]
        .iter()
        .find_map(|filler| rest.strip_prefix(filler))
        .unwrap_or(rest);
    let offset = text.len() - rest.len();
    // `1.2s.`, `9m38.016s`, `5h59m59s.","type":...` (JSON around it): the duration
    // is the run of digits, dots and unit letters.
    let end = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == 'µ'))
        .unwrap_or(rest.len());
    let token = rest[..end].trim_end_matches('.');
    let (length, milliseconds) = match parse_go_duration_ms(token) {
        Ok(milliseconds) => more_duration_parts(rest, token.len(), milliseconds),
        Err(_) => parse_spelled_duration_ms(crate::redact::prefix(rest, 60))
            .map(|milliseconds| (crate::redact::prefix(rest, 40).len(), milliseconds))?,
    };
    Some(TextWait {
        shown: offset..offset + length,
        milliseconds,
    })
}

/// A duration written in parts apart by spaces ("1m 4s", "2h 30m"): from the end
/// of the first part (`length` bytes into `rest`, worth `milliseconds`), each next
/// part that reads as a duration is added. Answers the length read and the sum.
fn more_duration_parts(rest: &str, mut length: usize, mut milliseconds: u64) -> (usize, u64) {
    while let Some(next) = rest[length..].strip_prefix(' ') {
        let end = next
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == 'µ'))
            .unwrap_or(next.len());
        let part = next[..end].trim_end_matches('.');
        // A part is a number with its unit ("4s"): a bare number or a word is not.
        if !part.starts_with(|c: char| c.is_ascii_digit()) {
            break;
        }
        let Ok(more) = parse_go_duration_ms(part) else {
            break;
        };
        milliseconds = milliseconds.saturating_add(more);
        length += 1 + part.len();
    }
    (length, milliseconds)
}

/// Whether words naming a failure come shortly before `at` in `lower` (in the same
/// statement, within 300 bytes).
fn names_a_failure_before(lower: &str, at: usize) -> bool {
    let mut from = at.saturating_sub(300);
    while !lower.is_char_boundary(from) {
        from += 1;
    }
    FAILURE_WORDS.is_match(&lower[from..at])
}

/// Words that name a failure, lowercase.
static FAILURE_WORDS: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasick::new([
        "error",
        "limit",
        "exceeded",
        "exhausted",
        "quota",
        "overloaded",
        "unavailable",
        "capacity",
        "throttl",
        "too many requests",
        "429",
        "503",
        "failed",
        "denied",
    ])
    .expect("failure words are valid patterns")
});

/// The longest wait the response states before any rule is chosen (`retry-after-ms`,
/// `retry-after` in seconds, a wait in the text), for rules that read how long a
/// provider asks to wait (a day-long wait is a quota, not throttling). The longest:
/// a short header beside a day-long statement does not make a quota look passing.
pub(crate) fn stated_wait_ms(headers: &Headers, waits: &[Option<TextWait>]) -> Option<u64> {
    let from_headers = [("retry-after-ms", 1.0), ("retry-after", 1_000.0)]
        .into_iter()
        .filter_map(|(name, unit_ms)| parse_number_ms(headers.get(name)?, unit_ms).ok());
    let from_text = waits.iter().flatten().map(|wait| wait.milliseconds);
    from_headers.chain(from_text).max()
}

/// The phrases a message states a wait after, lowercase, found by the one pass
/// (`scan`). None holds the separator of the joined texts they are searched in
/// ([`text_waits`]; a test checks).
pub(crate) const WAIT_PHRASE_WORDS: [&str; 7] = [
    "try again in ",
    "retry in ",
    "retry after ",
    "try again after ",
    "please wait ",
    // Cloud Code: "Your quota will reset after 51s."
    "reset after ",
    "resets in ",
];

/// Phrases a wall-clock reset follows, and whether the phrase promises a time (what
/// follows "resets" may be anything: "resets every 5h").
static WALL_CLOCK: LazyLock<Vec<(Finder<'static>, bool)>> = LazyLock::new(|| {
    [
        ("resets at ", true),
        ("reset at ", true),
        ("resets ", false),
        ("try again at ", true),
        ("regain access on ", true),
        // Zhipu: "您的限额将在 2026-08-25 07:41:44 重置" (will reset at ...).
        ("将在", false),
    ]
    .into_iter()
    .map(|(phrase, promises_a_time)| (Finder::new(phrase), promises_a_time))
    .collect()
});

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evidence::Evidence;

    const OBSERVED: i64 = 1_796_004_000_000; // 2026-11-30T02:00:00Z

    /// The wait phrases are searched over the texts joined: none may hold the
    /// separator, or a match could run from one text into the next.
    #[test]
    fn no_wait_phrase_holds_the_separator() {
        for phrase in WAIT_PHRASE_WORDS {
            assert!(!phrase.contains(crate::facts::SEPARATOR), "{phrase:?}");
        }
    }

    /// The phrases read from the one pass are those a leftmost-longest search of the
    /// texts joined reports, and each text's wait follows the first of them with a
    /// duration: every two phrases run together, overlapping and apart, with waits.
    #[test]
    fn wait_phrases_from_the_one_pass_are_a_leftmost_longest_search() {
        let searcher = AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::LeftmostLongest)
            .build(WAIT_PHRASE_WORDS)
            .unwrap();
        for first in WAIT_PHRASE_WORDS {
            for second in WAIT_PHRASE_WORDS {
                let mut cases = vec![
                    vec![format!("{first}{second}5s")],
                    vec![format!("{first}3m {second}5s")],
                    vec![format!("{first}soon"), format!("{second}7s")],
                ];
                for shared in 1..first.len().min(second.len()) {
                    if first[first.len() - shared..] == second[..shared] {
                        cases.push(vec![format!("{first}{}9s", &second[shared..])]);
                    }
                }
                for texts in cases {
                    let mut facts = Facts::default();
                    facts
                        .messages
                        .extend(texts.iter().map(|text| Cow::Borrowed(text.as_str())));
                    let search_texts = facts.search_texts();
                    let mut expected: SmallVec<[Option<TextWait>; 2]> =
                        SmallVec::from_elem(None, search_texts.len());
                    for phrase in searcher.find_iter(search_texts.joined()) {
                        let index = search_texts.text_at(phrase.start());
                        let start = search_texts.range(index).start;
                        if expected[index].is_none() {
                            expected[index] = text_wait(
                                search_texts.plain(index),
                                search_texts.lower(index),
                                phrase.start() - start..phrase.end() - start,
                                false,
                            );
                        }
                    }
                    assert_eq!(text_waits(&facts), expected, "{texts:?}");
                }
            }
        }
    }

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
        let mut facts = Facts::gather(Some(429), None, body, None);
        facts.text_waits = text_waits(&facts);
        let outcome = select_hint(&HintInputs {
            headers: &evidence.headers,
            facts: &facts,
            message_hints,
            text_waits: true,
            limit_code: true,
            observed_at_ms: OBSERVED,
            time_zone: body
                .is_some_and(|body| body.contains("(Berlin time)"))
                .then_some("Europe/Berlin"),
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
        // Waits stated in the text, whoever wrote them.
        let waits: [(&str, u64); 12] = [
            (
                r#"{"error":{"message":"Rate limit reached ... Please try again in 9m38.016s. Need more tokens?","code":"rate_limit_exceeded"}}"#,
                578_016,
            ),
            (
                "You've hit your usage limit. Upgrade to Pro or try again in 2 days 17 hours 14 minutes.",
                234_840_000,
            ),
            ("Rate limit exceeded, try again in 11 seconds", 11_000),
            ("Please retry in 15.003s.", 15_003),
            (
                "Requests to the ChatCompletions_Create Operation have exceeded call rate limit. Please retry after 2 seconds.",
                2_000,
            ),
            ("Try again in 20ms", 20),
            (
                "stream disconnected before completion: Rate limit reached for gpt-5. Please try again in 1.2s.",
                1_200,
            ),
            ("please wait about 30 seconds before retrying", 30_000),
            // A phrase without a duration is passed over for the next one.
            ("Try again in a moment, or retry after 5s", 5_000),
            // A duration in parts apart by spaces is read whole; a bare number or a
            // word after it is not a part.
            ("[429]: Too Many Requests (reset after 1m 4s)", 64_000),
            ("Please try again in 2h 30m 15s.", 9_015_000),
            ("Please try again in 20s 3 times at most", 20_000),
        ];
        for (body, milliseconds) in waits {
            check(
                &[],
                Some(body),
                &[],
                (
                    Some(milliseconds),
                    Some(OBSERVED + milliseconds as i64),
                    &[],
                ),
            );
        }
        check(&[], Some("try again in a moment"), &[], (None, None, &[]));
        // A later statement is read when the first names no time; any case, any script.
        check(
            &[],
            Some("Your limit resets every 5 hours. Next: resets 3pm (UTC)"),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 13 * 3_600_000), &[]),
        );
        check(
            &[],
            Some("ÉRESETS 2PM (UTC) — 限度 🙂"),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 12 * 3_600_000), &[]),
        );
        // A CLI's own backoff is not the provider's statement.
        check(
            &[],
            Some("Retrying in 5 seconds… (attempt 1/10)"),
            &[],
            (None, None, &[]),
        );
        check(
            &[],
            Some("try again in 9 days"),
            &[],
            (None, None, &[TooFar]),
        );
        check(
            &[],
            Some("Claude AI usage limit reached|1796022000"),
            &[MessageHint::EpochAfterPipe, MessageHint::WallClock],
            (None, Some(1_796_022_000_000), &[]),
        );
        // Wall-clock resets: in the printed zone, else the evidence's, else not a hint.
        check(
            &[],
            Some("5-hour limit reached ∙ resets 3pm"),
            &[MessageHint::WallClock],
            (None, None, &[NoDateOrZone]),
        );
        check(
            &[],
            Some("5-hour limit reached ∙ resets 3pm (Berlin time)"),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 12 * 3_600_000), &[]),
        );
        check(
            &[],
            Some("You've hit your limit · resets 12:50am (America/New_York)"),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 3 * 3_600_000 + 50 * 60_000), &[]),
        );
        check(
            &[],
            Some("Access resets at 10:57 PM GMT-3."),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 23 * 3_600_000 + 57 * 60_000), &[]),
        );
        check(
            &[],
            Some("You will regain access on 2026-12-01 at 00:00 UTC."),
            &[MessageHint::WallClock],
            (None, Some(OBSERVED + 22 * 3_600_000), &[]),
        );
        check(
            &[],
            Some("try again at Jul 5th, 2026 8:19 PM GMT"),
            &[MessageHint::WallClock],
            (None, None, &[Past]),
        );
        check(
            &[],
            Some("resets Dec 31, 9am (UTC)"),
            &[MessageHint::WallClock],
            (None, None, &[TooFar]),
        );
    }
}
