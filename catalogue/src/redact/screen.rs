//! A cheap screen run before redaction: most provider messages hold no secret, and
//! telling so from a few byte searches costs far less than lowercasing the message and
//! running the trigger automaton over it.
//!
//! The screen is exact in one direction: every secret [`super::redact`] removes needs
//! one of the anchors below (a byte, with the bytes that must surround it), so a text
//! without any is returned unchanged by redaction as well. A text with an anchor is
//! simply redacted as before.

/// Whether `text` may hold something [`super::redact`] removes.
pub(super) fn may_hold_secret(text: &[u8]) -> bool {
    // Sixteen bytes at a time, the anchor bytes found with branch-free compares (which
    // the compiler turns into vector instructions); each hit is confirmed by looking at
    // its neighbours.
    let mut blocks = text.chunks_exact(BLOCK);
    let mut start = 0;
    for block in &mut blocks {
        let block: &[u8; BLOCK] = block.try_into().expect("a whole block");
        // Most blocks hold no anchor byte at all: no call for those.
        let hits = anchor_mask(block);
        if hits != 0 && any_anchored(text, start, hits) {
            return true;
        }
        start += BLOCK;
    }
    let rest = blocks.remainder().len();
    if rest == 0 {
        return false;
    }
    if let Some(last) = text.len().checked_sub(BLOCK) {
        // The last sixteen bytes, less those already read.
        let block: &[u8; BLOCK] = text[last..].try_into().expect("a whole block");
        let unread = u16::MAX << (BLOCK - rest);
        return any_anchored(text, last, anchor_mask(block) & unread);
    }
    // A text shorter than a block, padded with zeros (not anchors).
    let mut block = [0; BLOCK];
    block[..rest].copy_from_slice(text);
    any_anchored(text, 0, anchor_mask(&block))
}

/// Whether one of the anchors in `hits` (bit `i` for `text[start + i]`) is confirmed.
fn any_anchored(text: &[u8], start: usize, mut hits: u16) -> bool {
    while hits != 0 {
        if anchored(text, start + hits.trailing_zeros() as usize) {
            return true;
        }
        hits &= hits - 1;
    }
    false
}

/// How many bytes [`anchor_mask`] reads at once.
const BLOCK: usize = 16;

/// Bit `i` is set when `block[i]` is an anchor byte.
fn anchor_mask(block: &[u8; BLOCK]) -> u16 {
    // One flag byte (0 or 1) per byte, by compares the compiler vectorizes...
    let mut flags = [0_u8; BLOCK];
    for (flag, byte) in flags.iter_mut().zip(block) {
        *flag = u8::from(is_anchor(*byte));
    }
    // ...then each eight flags gathered into eight bits: the multiplication adds flag
    // `i` (bit `8 i`) into bit `56 + i`, with no carries between them.
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let gather = |half: &[u8]| {
        let flags = u64::from_le_bytes(half.try_into().expect("eight flags"));
        (flags.wrapping_mul(GATHER) >> 56) as u16
    };
    gather(&flags[..8]) | gather(&flags[8..]) << 8
}

/// The anchor bytes: `-`, `_`, `:`, `=`, `?`, `@`, `A`, `J`, `b`, `B`. Written without
/// branches so that it vectorizes.
fn is_anchor(byte: u8) -> bool {
    (byte == b'-')
        | (byte == b'_')
        | (byte == b':')
        | (byte == b'=')
        | (byte == b'?')
        | (byte == b'@')
        | (byte == b'A')
        | (byte == b'J')
        | ((byte | 0x20) == b'b')
}

/// Whether the anchor byte at `at` is part of something a trigger would redact.
fn anchored(text: &[u8], at: usize) -> bool {
    let before = &text[..at];
    let from = &text[at..];
    // The bytes just before and just after: most hits are ordinary punctuation or
    // words, told apart by these alone.
    let next = from.get(1).copied().unwrap_or(0);
    match text[at] {
        // Key prefixes are matched in their exact case: `sk-`, `xai-`, `pplx-`.
        b'-' => {
            matches!(before.last(), Some(b'k' | b'i' | b'x'))
                && ends_with_any(before, &[b"sk", b"xai", b"pplx"])
        }
        // `sk_`, `gsk_`, `hf_`, `ghp_`, `github_pat_`, `r8_`.
        b'_' => ends_with_any(before, &[b"sk", b"hf", b"ghp", b"github", b"r8"]),
        // `AIza` keys and `AKIA`/`ASIA` AWS key ids.
        b'A' => {
            matches!(next, b'I' | b'K' | b'S')
                && (from.starts_with(b"AIza")
                    || from.starts_with(b"AKIA")
                    || from.starts_with(b"ASIA"))
        }
        // JWTs start `eyJ`.
        b'J' => before.ends_with(b"ey"),
        // `key:`, `key":`, `key :`, `token:`, `token":`, `secret:`, `password:`, and
        // `key=`, `key =`, `token=`, `secret=`, `password=`, `signature=`, in any case.
        // JSON puts `":` after every key, and text `: ` after many words: the name's
        // last letter tells the one name it can be, so one compare confirms it.
        b':' | b'=' => {
            let colon = text[at] == b':';
            let (name, gap) = match before.split_last() {
                Some((b'"', name)) if colon => (name, Gap::Quote),
                Some((b' ', name)) => (name, Gap::Space),
                _ => (before, Gap::None),
            };
            let word: &[u8] = match (name.last().map(u8::to_ascii_lowercase), gap) {
                (Some(b'y'), _) => b"key",
                (Some(b'n'), Gap::None | Gap::Quote) => b"token",
                (Some(b't'), Gap::None) => b"secret",
                (Some(b'd'), Gap::None) => b"password",
                (Some(b'e'), Gap::None) if !colon => b"signature",
                _ => return false,
            };
            ends_with_ignore_case(name, word)
        }
        // `bearer ` and `basic ` credentials, in any case.
        b'b' | b'B' => {
            matches!(next | 0x20, b'e' | b'a')
                && (starts_with_ignore_case(from, b"bearer ")
                    || starts_with_ignore_case(from, b"basic "))
        }
        // A URL's query string, an email address: rare enough to redact outright.
        _ => true,
    }
}

fn ends_with_any(text: &[u8], suffixes: &[&[u8]]) -> bool {
    suffixes.iter().any(|suffix| text.ends_with(suffix))
}

/// What stands between a credential's name and the `:` or `=` after it.
#[derive(Clone, Copy)]
enum Gap {
    None,
    /// `"`, after a JSON key (before `:` only).
    Quote,
    /// One space (after `key` only).
    Space,
}

fn ends_with_ignore_case(text: &[u8], suffix: &[u8]) -> bool {
    text.len() >= suffix.len() && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

fn starts_with_ignore_case(text: &[u8], prefix: &[u8]) -> bool {
    text.len() >= prefix.len() && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::may_hold_secret;

    /// The screen as first written: every byte tested, each anchor confirmed by
    /// comparing the text with every name it may end. The screen must answer as this
    /// does for every text.
    fn reference(text: &[u8]) -> bool {
        let ends_with_any = |text: &[u8], suffixes: &[&[u8]]| {
            suffixes.iter().any(|suffix| {
                text.len() >= suffix.len()
                    && text[text.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
            })
        };
        (0..text.len()).any(|at| {
            let (before, from) = text.split_at(at);
            match text[at] {
                b'-' => [&b"sk"[..], b"xai", b"pplx"]
                    .iter()
                    .any(|prefix| before.ends_with(prefix)),
                b'_' => [&b"sk"[..], b"hf", b"ghp", b"github", b"r8"]
                    .iter()
                    .any(|prefix| before.ends_with(prefix)),
                b'A' => [&b"AIza"[..], b"AKIA", b"ASIA"]
                    .iter()
                    .any(|prefix| from.starts_with(prefix)),
                b'J' => before.ends_with(b"ey"),
                b':' => ends_with_any(
                    before,
                    &[
                        b"key",
                        b"key\"",
                        b"key ",
                        b"token",
                        b"token\"",
                        b"secret",
                        b"password",
                    ],
                ),
                b'=' => ends_with_any(
                    before,
                    &[
                        b"key",
                        b"key ",
                        b"token",
                        b"secret",
                        b"password",
                        b"signature",
                    ],
                ),
                b'b' | b'B' => [&b"bearer "[..], b"basic "].iter().any(|prefix| {
                    from.len() >= prefix.len() && from[..prefix.len()].eq_ignore_ascii_case(prefix)
                }),
                b'?' | b'@' => true,
                _ => false,
            }
        })
    }

    /// The screen answers as the reference does: every trigger, near misses of each
    /// (another name, another gap, another case), at every offset of a block and across
    /// two, alone and in pairs, in fillers of letters, spaces, quotes and bytes that are
    /// not ASCII.
    #[test]
    fn the_screen_answers_as_a_test_of_every_byte() {
        let pieces: [&[u8]; 40] = [
            b"key:",
            b"KEY\":",
            b"Key :",
            b"key\" :",
            b"key=",
            b"key =",
            b"kez:",
            b"ey:",
            b"token:",
            b"Token\":",
            b"token :",
            b"token =",
            b"oken=",
            b"secret:",
            b"SECRET=",
            b"secret\":",
            b"secret :",
            b"password:",
            b"Password=",
            b"password\":",
            b"signature=",
            b"signature:",
            b"Signature =",
            b"gnature=",
            b"\":",
            b"y\":",
            b"n\"=",
            b":",
            b"=",
            b"sk-",
            b"xai-",
            b"pplx_",
            b"hf_",
            b"r8_",
            b"AIza",
            b"ASIb",
            b"eyJ",
            b"Bearer ",
            b"basic",
            b"a?b@",
        ];
        let fillers = [b'a', b' ', b'"', b'y', b'Y', b'n', b'\n', 0xc3];
        let mut caught = 0;
        for filler in fillers {
            for (index, first) in pieces.iter().enumerate() {
                for second in pieces[index..].iter().chain([&&b""[..]]) {
                    for at in 0..40 {
                        for length in [at + first.len(), at + first.len() + 1, 48] {
                            let mut text = vec![filler; length.max(at + first.len())];
                            text[at..at + first.len()].copy_from_slice(first);
                            let later = (at + first.len() + 5).min(text.len());
                            text.splice(later..later, second.iter().copied());
                            let expected = reference(&text);
                            assert_eq!(
                                may_hold_secret(&text),
                                expected,
                                "{:?}",
                                String::from_utf8_lossy(&text)
                            );
                            caught += usize::from(expected);
                        }
                    }
                }
            }
        }
        assert!(caught > 10_000, "the texts hold triggers ({caught})");
    }

    #[test]
    fn anchor_masks_mark_exactly_the_anchor_bytes() {
        let block: [u8; 16] = *b"a-b_c:d=?@AJxBqz";
        let expected = (0..16)
            .filter(|index| super::is_anchor(block[*index]))
            .fold(0_u16, |mask, index| mask | 1 << index);
        assert_eq!(super::anchor_mask(&block), expected);
        assert_eq!(super::anchor_mask(&[b'A'; 16]), u16::MAX);
        assert_eq!(super::anchor_mask(&[b'x'; 16]), 0);
    }

    #[test]
    fn plain_messages_pass_and_every_trigger_is_caught() {
        for plain in [
            "Overloaded",
            "Rate limit reached for gpt-4o in organization org-x on tokens per min (TPM).",
            "Your credit balance is too low to access the Anthropic API.",
            "Error: invalid_request_error",
        ] {
            assert!(!may_hold_secret(plain.as_bytes()), "{plain}");
        }
        for secret in [
            "x sk-abc",
            "sk_abc",
            "gsk_abc",
            "xai-abc",
            "pplx-abc",
            "hf_abc",
            "ghp_abc",
            "github_pat_abc",
            "r8_abc",
            "AIzaSy",
            "AKIAX",
            "ASIAX",
            "eyJhb",
            "Bearer abc",
            "BASIC abc",
            "https://x.io/?a",
            "a@b.c",
            "api_KEY: x",
            "Token\": x",
            "key = x",
            "SIGNATURE=x",
            "password:x",
            "secret: x",
        ] {
            assert!(may_hold_secret(secret.as_bytes()), "{secret}");
        }
    }
}
