//! Safe causes (SPEC 2.4): the provider's message with secrets removed, cut to 300
//! characters.
//!
//! Removed: API keys by their known prefixes (`sk-`, `sk-ant-`, `sk-proj-`, `sk-or-`,
//! `AIza`, `gsk_`, `xai-`, `hf_`, `ghp_`, `github_pat_`, `r8_`, `pplx-`), AWS access key
//! ids (`AKIA`/`ASIA`), JWTs, bearer and basic credentials, values assigned to
//! `key`/`token`/`secret`/`password`-like names, email addresses, and URL query strings.
//! Whitespace runs collapse to one space.

use std::borrow::Cow;
use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};

mod screen;

/// The longest safe cause, in characters.
pub const MAX_SAFE_CAUSE_CHARS: usize = 300;

/// What replaces a secret.
const REDACTED: &str = "[redacted]";

/// How much input is read (300 characters are at most 1,200 bytes). When secrets or
/// whitespace shrink the text a lot, the cause is simply shorter; the cut drops the last,
/// possibly partial, word so that no piece of a secret survives it.
const MAX_INPUT_BYTES: usize = 2 * 1024;

/// What a trigger found at a position is.
#[derive(Debug, Clone, Copy)]
enum Trigger {
    /// A key prefix, with the case it must have and the shortest body after it.
    KeyPrefix {
        prefix: &'static str,
        min_body: usize,
    },
    /// `AKIA`/`ASIA` + 16 upper-case letters or digits.
    AwsKeyId,
    /// `eyJ...` with two dots.
    Jwt,
    /// `bearer ` or `basic ` before a credential.
    Scheme,
    /// A URL: its query string goes.
    Url,
    /// A `name=` or `name:` assignment of a secret-like name.
    Assignment,
}

#[rustfmt::skip]
const TRIGGERS: &[(&str, Trigger)] = &[
    ("sk-", Trigger::KeyPrefix { prefix: "sk-", min_body: 8 }),
    ("sk_", Trigger::KeyPrefix { prefix: "sk_", min_body: 8 }),
    ("aiza", Trigger::KeyPrefix { prefix: "AIza", min_body: 16 }),
    ("gsk_", Trigger::KeyPrefix { prefix: "gsk_", min_body: 8 }),
    ("xai-", Trigger::KeyPrefix { prefix: "xai-", min_body: 8 }),
    ("hf_", Trigger::KeyPrefix { prefix: "hf_", min_body: 8 }),
    ("ghp_", Trigger::KeyPrefix { prefix: "ghp_", min_body: 8 }),
    ("github_pat_", Trigger::KeyPrefix { prefix: "github_pat_", min_body: 8 }),
    ("r8_", Trigger::KeyPrefix { prefix: "r8_", min_body: 8 }),
    ("pplx-", Trigger::KeyPrefix { prefix: "pplx-", min_body: 8 }),
    ("akia", Trigger::AwsKeyId),
    ("asia", Trigger::AwsKeyId),
    ("eyj", Trigger::Jwt),
    ("bearer ", Trigger::Scheme),
    ("basic ", Trigger::Scheme),
    ("http://", Trigger::Url),
    ("https://", Trigger::Url),
    ("key=", Trigger::Assignment),
    ("key:", Trigger::Assignment),
    ("key\":", Trigger::Assignment),
    ("key =", Trigger::Assignment),
    ("key :", Trigger::Assignment),
    ("token=", Trigger::Assignment),
    ("token:", Trigger::Assignment),
    ("token\":", Trigger::Assignment),
    ("secret=", Trigger::Assignment),
    ("secret:", Trigger::Assignment),
    ("password=", Trigger::Assignment),
    ("password:", Trigger::Assignment),
    ("signature=", Trigger::Assignment),
];

static TRIGGER_SEARCH: LazyLock<AhoCorasick> = LazyLock::new(|| {
    AhoCorasickBuilder::new()
        .match_kind(MatchKind::LeftmostFirst)
        .kind(Some(AhoCorasickKind::DFA))
        .build(TRIGGERS.iter().map(|(pattern, _)| pattern))
        .expect("the redaction triggers are valid patterns")
});

/// The provider's message made safe to store and show: secrets removed, whitespace
/// collapsed, cut to 300 characters on a character boundary.
///
/// ```
/// let cause = catalogue::safe_cause("Incorrect API key provided: sk-proj-abcdefghijklmnop1234. See https://x.io/a?key=AIzaSyA1234567890abcdefghijklmnopqrstu");
/// assert_eq!(cause, "Incorrect API key provided: [redacted]. See https://x.io/a?[redacted]");
/// assert!(catalogue::safe_cause(&"é".repeat(400)).chars().count() == 300);
/// ```
pub fn safe_cause(message: &str) -> String {
    safe_text(message, MAX_SAFE_CAUSE_CHARS)
}

/// `text` with every secret the catalogue recognises replaced by `[redacted]`, and
/// otherwise as it is (no collapsing, no cut): for evidence kept on an attempt, so it
/// can be classified again later without keeping what a provider echoed back.
///
/// ```
/// let body = r#"{"error": {"message": "Incorrect API key provided: sk-proj-abcdefghijklmnopqrstuvwxyz012345"}}"#;
/// let kept = catalogue::redact_secrets(body);
/// assert!(!kept.contains("abcdefghijklmnop"), "{kept}");
/// assert!(kept.starts_with(r#"{"error": {"message": "Incorrect API key provided: "#));
/// ```
pub fn redact_secrets(text: &str) -> String {
    redact(text).into_owned()
}

/// [`safe_cause`] of `message`, given `collapsed`: the message with each run of ASCII
/// white space made one space and none at either end, as the search texts hold it
/// (`facts::SearchTexts`), or the message itself.
///
/// Where redaction leaves the message as it is (the screen finds no secret in it) and
/// the message is read whole (not cut at [`MAX_INPUT_BYTES`]), the cause is cut from
/// `collapsed`: collapsing blanks after white space has been collapsed gives the same
/// words, so the same cause, without collapsing the raw message again.
pub(crate) fn safe_cause_of_collapsed(message: &str, collapsed: &str) -> String {
    if message.len() <= MAX_INPUT_BYTES && !screen::may_hold_secret(message.as_bytes()) {
        return collapse_and_cut(collapsed, MAX_SAFE_CAUSE_CHARS);
    }
    safe_cause(message)
}

/// [`safe_cause`] with another length limit.
pub(crate) fn safe_text(message: &str, max_chars: usize) -> String {
    let mut input = prefix(message, MAX_INPUT_BYTES);
    if input.len() < message.len() {
        // Drop the last, possibly partial, word.
        let cut = input.rfind(char::is_whitespace).unwrap_or(0);
        input = &input[..cut];
    }
    let redacted = redact(input);
    collapse_and_cut(&redacted, max_chars)
}

/// Collapses whitespace and control characters to single spaces and keeps at most
/// `max_chars` characters.
fn collapse_and_cut(text: &str, max_chars: usize) -> String {
    // The usual case: after any leading blanks, ASCII with single spaces only as far
    // as the cut. The first `max_chars` bytes are the cause, and the text past them is
    // not read.
    let trimmed = text.trim_start_matches(|character: char| {
        character.is_ascii_whitespace() || character.is_ascii_control()
    });
    let window = &trimmed.as_bytes()[..trimmed.len().min(max_chars + 1)];
    // Branch-free folds (vectorized): all ASCII, no control character, no double
    // space.
    let plain = window
        .iter()
        .fold(true, |plain, byte| plain & (*byte >= 0x20) & (*byte < 0x7f));
    let double_space = window
        .iter()
        .zip(window.iter().skip(1))
        .fold(false, |found, (first, second)| {
            found | ((*first == b' ') & (*second == b' '))
        });
    if plain && !double_space {
        let cut = &trimmed[..window.len().min(max_chars)];
        return cut.trim_end_matches(' ').to_owned();
    }
    if text.is_ascii() {
        return collapse_ascii(text, max_chars);
    }
    if let Some(cut) = plain_prefix(text, max_chars) {
        return cut.trim_end_matches(' ').to_owned();
    }
    collapse_characters(text, max_chars)
}

/// The first `max_chars` characters of `text` where they hold no blank but single
/// spaces between words, which are then the cause as they stand (less a space at the
/// end); `None` where collapsing could change them.
///
/// Most text that is not ASCII (a message in Chinese, an English one with a curly
/// quote) is plain, and decoding it a character at a time costs more than finding the
/// cut by counting the bytes that start characters and testing the bytes it keeps in
/// branch-free folds, which the compiler vectorizes.
fn plain_prefix(text: &str, max_chars: usize) -> Option<&str> {
    let bytes = text.as_bytes();
    if bytes.first() == Some(&b' ') {
        return None;
    }
    let kept = &bytes[..char_end(bytes, max_chars)];
    // Every blank character, in UTF-8: the ASCII bytes up to the space and DEL;
    // U+0080 to U+00A0 (`C2 80` to `C2 A0`); U+1680 (`E1 9A 80`); U+2000 to U+200A,
    // U+2028, U+2029 and U+202F (`E2 80 xx`); U+205F (`E2 81 9F`); U+3000
    // (`E3 80 80`). A continuation byte cannot be mistaken for a first byte, so
    // testing every offset is exact.
    let blank = |byte: u8, second: u8, third: u8| {
        (byte < b' ')
            | (byte == 0x7f)
            | ((byte == 0xc2) & (second <= 0xa0))
            | ((byte == 0xe1) & (second == 0x9a) & (third == 0x80))
            | ((byte == 0xe2)
                & (second == 0x80)
                & ((third <= 0x8a) | (third == 0xa8) | (third == 0xa9) | (third == 0xaf)))
            | ((byte == 0xe2) & (second == 0x81) & (third == 0x9f))
            | ((byte == 0xe3) & (second == 0x80) & (third == 0x80))
    };
    // Each kept byte with the two after it; the last two apart, with zeros past the
    // end (which the tests of a character's later bytes never accept).
    let byte_at = |at: usize| bytes.get(at).copied().unwrap_or(0);
    let body = kept.len().min(bytes.len().saturating_sub(2));
    let any_blank = kept[..body]
        .iter()
        .zip(bytes.get(1..).unwrap_or_default())
        .zip(bytes.get(2..).unwrap_or_default())
        .fold(false, |found, ((byte, second), third)| {
            found | blank(*byte, *second, *third)
        })
        || (body..kept.len()).any(|at| blank(byte_at(at), byte_at(at + 1), byte_at(at + 2)));
    let double_space = kept
        .iter()
        .zip(kept.iter().skip(1))
        .fold(false, |found, (first, second)| {
            found | ((*first == b' ') & (*second == b' '))
        });
    (!any_blank && !double_space).then(|| &text[..kept.len()])
}

/// The byte length of the first `max_chars` characters of `bytes` (valid UTF-8): the
/// offset of the byte that starts character `max_chars + 1`, or the length. The bytes
/// that start characters are counted 32 at a time (a fold the compiler vectorizes),
/// then a byte at a time in the last block.
fn char_end(bytes: &[u8], max_chars: usize) -> usize {
    let starts_character = |byte: &u8| *byte & 0xc0 != 0x80;
    let mut characters = 0;
    let mut at = 0;
    for block in bytes.chunks(32) {
        // At most 32 in a byte: the wrapping add never wraps, and unlike a checked
        // one it leaves the fold to vector instructions.
        let starts = block.iter().fold(0_u8, |count, byte| {
            count.wrapping_add(u8::from(starts_character(byte)))
        });
        let starts = usize::from(starts);
        if characters + starts > max_chars {
            break;
        }
        characters += starts;
        at += block.len();
    }
    let mut allowed = max_chars - characters;
    for (offset, byte) in bytes[at..].iter().enumerate() {
        if starts_character(byte) {
            if allowed == 0 {
                return at + offset;
            }
            allowed -= 1;
        }
    }
    bytes.len()
}

/// [`collapse_and_cut`] of any text, a character at a time: whole runs of visible
/// characters are copied (not one character at a time), with one space between runs,
/// until `max_chars` characters. (This is also what `collapse_ascii` does, byte by
/// byte.)
fn collapse_characters(text: &str, max_chars: usize) -> String {
    let mut safe = String::with_capacity(text.len().min(max_chars * 4));
    let mut characters = 0;
    let bytes = text.as_bytes();
    let mut index = 0;
    let mut pending_space = false;
    while index < bytes.len() {
        if let Some(width) = blank_width(text, index) {
            index += width;
            pending_space = !safe.is_empty();
            continue;
        }
        if pending_space {
            if characters + 1 >= max_chars {
                break;
            }
            safe.push(' ');
            characters += 1;
            pending_space = false;
        }
        if characters == max_chars {
            break;
        }
        let start = index;
        while index < bytes.len() && characters < max_chars {
            let width = match bytes[index] {
                byte if byte.is_ascii() => (byte > b' ' && byte != 0x7f).then_some(1),
                _ => text[index..]
                    .chars()
                    .next()
                    .filter(|character| !is_blank(*character))
                    .map(char::len_utf8),
            };
            let Some(width) = width else {
                break;
            };
            index += width;
            characters += 1;
        }
        safe.push_str(&text[start..index]);
    }
    safe
}

/// [`collapse_and_cut`] for ASCII text, where every byte is a character: the words
/// joined by single spaces, cut to `max_chars`, never ending with a space. What lies
/// between runs of blanks other than a single space is copied whole (a line, not a
/// word at a time), until the cut is reached.
fn collapse_ascii(text: &str, max_chars: usize) -> String {
    let mut safe = String::with_capacity(text.len().min(max_chars + 1));
    let bytes = text.as_bytes();
    let is_blank = |byte: u8| byte <= b' ' || byte == 0x7f;
    let mut at = bytes
        .iter()
        .position(|byte| !is_blank(*byte))
        .unwrap_or(bytes.len());
    // The start of what is yet to be copied.
    let mut from = at;
    while at < bytes.len() && safe.len() + (at - from) <= max_chars {
        if !is_blank(bytes[at]) {
            at += 1;
            continue;
        }
        let run = at;
        while at < bytes.len() && is_blank(bytes[at]) {
            at += 1;
        }
        if at == bytes.len() {
            // Blanks at the end go.
            safe.push_str(&text[from..run]);
            from = at;
            break;
        }
        if at - run > 1 || bytes[run] != b' ' {
            safe.push_str(&text[from..run]);
            safe.push(' ');
            from = at;
        }
    }
    let end = at.min(from + (max_chars + 1).saturating_sub(safe.len()));
    safe.push_str(&text[from..end]);
    // Past the cut goes, and a space the cut leaves at the end.
    safe.truncate(max_chars);
    let kept = safe.trim_end_matches(' ').len();
    safe.truncate(kept);
    safe
}

/// Whitespace and control characters: what collapses to one space.
fn is_blank(character: char) -> bool {
    character.is_whitespace() || character.is_control()
}

/// The byte length of the character at `index` when it is blank.
fn blank_width(text: &str, index: usize) -> Option<usize> {
    let byte = text.as_bytes()[index];
    if byte.is_ascii() {
        // ASCII whitespace and control characters are exactly the bytes up to the space,
        // and DEL.
        return (byte <= b' ' || byte == 0x7f).then_some(1);
    }
    let character = text[index..].chars().next()?;
    is_blank(character).then(|| character.len_utf8())
}

/// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character
/// boundary.
pub(crate) fn prefix(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut end = max_bytes;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// Replaces every secret in `text`.
fn redact(text: &str) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    if !screen::may_hold_secret(bytes) {
        return Cow::Borrowed(text);
    }
    let mut ranges: Vec<(usize, usize, &'static str)> = Vec::new();
    // `@` alone is searched apart: a one-byte pattern would disable the automaton's
    // prefilter.
    for at in memchr::memchr_iter(b'@', bytes) {
        if let Some(range) = email(bytes, at) {
            ranges.push(range);
        }
    }
    // Triggers are lowercase; the text is searched lowercased (same byte offsets).
    let lower = text.to_ascii_lowercase();
    for found in TRIGGER_SEARCH.find_iter(&lower) {
        let (start, end) = (found.start(), found.end());
        let range = match TRIGGERS[found.pattern().as_usize()].1 {
            Trigger::KeyPrefix { prefix, min_body } => {
                key_with_prefix(bytes, start, prefix, min_body)
            }
            Trigger::AwsKeyId => aws_key_id(bytes, start),
            Trigger::Jwt => jwt(bytes, start),
            Trigger::Scheme => credential_after(bytes, end, 8),
            Trigger::Url => url_query(bytes, start),
            Trigger::Assignment => assigned_value(bytes, end),
        };
        ranges.extend(range);
    }
    if ranges.is_empty() {
        return Cow::Borrowed(text);
    }
    ranges.sort_unstable_by_key(|(from, to, _)| (*from, std::cmp::Reverse(*to)));
    let mut output = String::with_capacity(text.len());
    let mut copied_to = 0;
    for (from, to, replacement) in ranges {
        if to <= copied_to {
            continue;
        }
        let from = from.max(copied_to);
        output.push_str(&text[copied_to..from]);
        output.push_str(replacement);
        copied_to = to;
    }
    output.push_str(&text[copied_to..]);
    Cow::Owned(output)
}

/// Characters a key, token or credential is made of.
fn is_secret_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric()
        || matches!(
            byte,
            b'-' | b'_' | b'.' | b'*' | b'+' | b'/' | b'=' | b'~' | b'%'
        )
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

/// Whether a token may start at `start` (not in the middle of a word).
fn at_word_start(bytes: &[u8], start: usize) -> bool {
    start == 0 || !is_word_byte(bytes[start - 1])
}

fn secret_end(bytes: &[u8], from: usize) -> usize {
    let mut end = from;
    while end < bytes.len() && is_secret_byte(bytes[end]) {
        end += 1;
    }
    // A sentence's full stop is not part of the key.
    while end > from && matches!(bytes[end - 1], b'.' | b'/' | b'-') {
        end -= 1;
    }
    end
}

fn key_with_prefix(
    bytes: &[u8],
    start: usize,
    prefix: &str,
    min_body: usize,
) -> Option<(usize, usize, &'static str)> {
    if !bytes[start..].starts_with(prefix.as_bytes()) || !at_word_start(bytes, start) {
        return None;
    }
    let end = secret_end(bytes, start + prefix.len());
    (end - start - prefix.len() >= min_body).then_some((start, end, REDACTED))
}

fn aws_key_id(bytes: &[u8], start: usize) -> Option<(usize, usize, &'static str)> {
    let head = bytes.get(start..start + 4)?;
    if !(head == b"AKIA" || head == b"ASIA") || !at_word_start(bytes, start) {
        return None;
    }
    let body = bytes.get(start + 4..start + 20)?;
    let valid = body
        .iter()
        .all(|byte| byte.is_ascii_uppercase() || byte.is_ascii_digit());
    let ends = bytes
        .get(start + 20)
        .is_none_or(|byte| !is_word_byte(*byte));
    (valid && ends).then_some((start, start + 20, REDACTED))
}

fn jwt(bytes: &[u8], start: usize) -> Option<(usize, usize, &'static str)> {
    if !bytes[start..].starts_with(b"eyJ") || !at_word_start(bytes, start) {
        return None;
    }
    let end = secret_end(bytes, start);
    let dots = bytes[start..end]
        .iter()
        .filter(|byte| **byte == b'.')
        .count();
    (dots >= 2 && end - start >= 20).then_some((start, end, REDACTED))
}

fn credential_after(
    bytes: &[u8],
    from: usize,
    min_length: usize,
) -> Option<(usize, usize, &'static str)> {
    let mut start = from;
    while start < bytes.len() && bytes[start] == b' ' {
        start += 1;
    }
    let end = secret_end(bytes, start);
    (end - start >= min_length).then_some((start, end, REDACTED))
}

fn url_query(bytes: &[u8], start: usize) -> Option<(usize, usize, &'static str)> {
    let mut end = start;
    while end < bytes.len()
        && !bytes[end].is_ascii_whitespace()
        && !matches!(
            bytes[end],
            b'"' | b'\'' | b'<' | b'>' | b')' | b']' | b'}' | b'`' | b'\\'
        )
    {
        end += 1;
    }
    let query = start + bytes[start..end].iter().position(|byte| *byte == b'?')?;
    Some((query, end, "?[redacted]"))
}

fn email(bytes: &[u8], at: usize) -> Option<(usize, usize, &'static str)> {
    let is_local =
        |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'%' | b'+' | b'-');
    let is_domain = |byte: u8| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-');
    let mut start = at;
    while start > 0 && is_local(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = at + 1;
    while end < bytes.len() && is_domain(bytes[end]) {
        end += 1;
    }
    while end > at + 1 && bytes[end - 1] == b'.' {
        end -= 1;
    }
    let domain = &bytes[at + 1..end];
    let has_dot = domain
        .iter()
        .position(|byte| *byte == b'.')
        .is_some_and(|dot| dot > 0);
    (start < at && has_dot).then_some((start, end, "[email]"))
}

fn assigned_value(bytes: &[u8], from: usize) -> Option<(usize, usize, &'static str)> {
    let mut start = from;
    while start < bytes.len() && matches!(bytes[start], b' ' | b'"' | b'\'' | b'=' | b':') {
        start += 1;
    }
    let end = secret_end(bytes, start);
    (end - start >= 6).then_some((start, end, REDACTED))
}

#[cfg(test)]
mod tests {
    use super::safe_cause;

    /// Text that is not ASCII is cut by counting the bytes that start characters where
    /// it holds no blank but single spaces, or as ASCII where it is ASCII as far as the
    /// cut, and the cause is the one cut a character at a time: every blank character,
    /// beside characters that share their first bytes (a curly quote, an ideographic
    /// full stop, `é`, U+00A1), at the start, the end, after ASCII words and blanks,
    /// and on either side of the cut, for every cut up to past the end.
    #[test]
    fn plain_text_that_is_not_ascii_is_cut_as_a_character_at_a_time() {
        let pieces = [
            "é", "限", "。", "\u{2019}", "\u{a1}", "\u{2030}", "\u{205e}", "\u{1681}", "a", " ",
            "  ", "\t", "\n", "\x7f", "\u{85}", "\u{a0}", "\u{1680}", "\u{2000}", "\u{200a}",
            "\u{2028}", "\u{2029}", "\u{202f}", "\u{205f}", "\u{3000}", "\u{9f}",
        ];
        let mut fast = 0;
        for first in pieces {
            for second in pieces {
                for third in pieces {
                    let text = format!("限{first}é{second}{second}x{third}");
                    for texts in [
                        text.clone(),
                        format!("{first}{text}"),
                        format!("ab c{first}{text}"),
                        format!(" \tab  {first}{text}"),
                    ] {
                        for max_chars in 0..12 {
                            let expected = super::collapse_characters(&texts, max_chars);
                            assert_eq!(
                                super::collapse_and_cut(&texts, max_chars),
                                expected,
                                "{texts:?} cut at {max_chars}"
                            );
                            if let Some(cut) = super::plain_prefix(&texts, max_chars) {
                                assert_eq!(cut.trim_end_matches(' '), expected, "{texts:?}");
                                fast += 1;
                            }
                        }
                    }
                }
            }
        }
        assert!(
            fast > 10_000,
            "the fast cut is taken for plain text ({fast})"
        );
        let long = "限制 ".repeat(400);
        assert_eq!(
            super::collapse_and_cut(&long, 300),
            super::collapse_characters(&long, 300)
        );
        assert!(super::plain_prefix(&long, 300).is_some());
    }

    /// A secret of every known shape, planted in a message: each must be gone.
    #[test]
    fn planted_secrets_are_removed() {
        let secrets = [
            "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcdEFGH",
            "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
            "sk-or-v1-0123456789abcdef0123456789abcdef",
            "sk-1234567890abcdefghijklmnop",
            "AIzaSyD-1234567890abcdefghijklmnopqrstu",
            "AKIAIOSFODNN7EXAMPLE",
            "ASIAY34FZKBOKMUTVV7A",
            "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
            "gsk_0123456789abcdefABCDEF0123456789",
            "xai-0123456789abcdefABCDEF",
            "hf_0123456789abcdefABCDEF",
            "ghp_0123456789abcdefABCDEF0123456789",
            "jane.doe+billing@example.co.uk",
            "s3cr3tT0kenValue",
        ];
        let messages = [
            format!(
                "Incorrect API key provided: {}. You can find your API key at https://platform.openai.com/account/api-keys.",
                secrets[1]
            ),
            format!("invalid x-api-key {}", secrets[0]),
            format!("key={} rejected", secrets[2]),
            format!("Authorization: Bearer {}", secrets[3]),
            format!(
                "API key not valid: {} (Status: INVALID_ARGUMENT)",
                secrets[4]
            ),
            format!(
                "The security token included in the request is invalid: {} / {}",
                secrets[5], secrets[6]
            ),
            format!("token expired: {}", secrets[7]),
            format!(
                "{} {} {} {}",
                secrets[8], secrets[9], secrets[10], secrets[11]
            ),
            format!("Contact {} for access", secrets[12]),
            format!(
                "GET https://api.example.com/v1/models?key={}&alt=sse failed",
                secrets[13]
            ),
            format!("{{\"api_key\": \"{}\"}}", secrets[13]),
            format!("password: {}", secrets[13]),
        ];
        for message in &messages {
            let cause = safe_cause(message);
            for secret in secrets {
                assert!(!cause.contains(secret), "{secret} survived in {cause}");
            }
            assert!(
                cause.contains("[redacted]") || cause.contains("[email]"),
                "{cause}"
            );
        }
    }

    #[test]
    fn ordinary_words_survive_and_the_cut_is_on_a_boundary() {
        let cases = [
            ("Overloaded", "Overloaded"),
            (
                "task-runner failed: ask-me-later",
                "task-runner failed: ask-me-later",
            ),
            ("  many\n\n spaces\there ", "many spaces here"),
            ("Please try again in 6ms.", "Please try again in 6ms."),
            (
                "see https://docs.anthropic.com/en/api/errors.",
                "see https://docs.anthropic.com/en/api/errors.",
            ),
            ("a @ b", "a @ b"),
        ];
        for (message, expected) in cases {
            assert_eq!(safe_cause(message), expected);
        }
        let long = "日本語".repeat(200);
        let cut = safe_cause(&long);
        assert_eq!(cut.chars().count(), 300);
        let huge = format!("{} sk-{}", "x ".repeat(40_000), "a".repeat(40_000));
        assert!(!safe_cause(&huge).contains("aaaaaaaa"));
    }
}
