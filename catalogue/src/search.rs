//! ASCII-case-insensitive substring search without allocating: the hot path reads
//! provider messages many times and should not lowercase copies of them.

/// The byte offsets of every occurrence of `needle` (given lowercased) in `haystack`,
/// ignoring ASCII case, in increasing order.
///
/// The scan jumps between occurrences of the needle's rarest byte (in either case) and
/// compares the window around each: provider messages are English, and searching for
/// the `t` of `try again in ` would stop at every other word.
pub(crate) fn find_all_ignore_case<'h>(
    haystack: &'h str,
    needle: &'h str,
) -> impl Iterator<Item = usize> + 'h {
    let bytes = haystack.as_bytes();
    let needle = needle.as_bytes();
    let anchor = (0..needle.len())
        .rev()
        .max_by_key(|offset| rarity(needle[*offset]))
        .unwrap_or(0);
    let (anchor_lower, anchor_upper) = match needle.get(anchor) {
        Some(byte) => (byte.to_ascii_lowercase(), byte.to_ascii_uppercase()),
        None => (0, 0),
    };
    memchr::memchr2_iter(anchor_lower, anchor_upper, bytes).filter_map(move |at| {
        let start = at.checked_sub(anchor)?;
        (!needle.is_empty()
            && bytes
                .get(start..start + needle.len())
                .is_some_and(|window| window.eq_ignore_ascii_case(needle)))
        .then_some(start)
    })
}

/// How rare `byte` is in English text, higher for rarer: letters by their frequency,
/// the space as the most common byte, anything else as fairly rare.
fn rarity(byte: u8) -> u8 {
    RARITY[usize::from(byte)]
}

/// [`rarity`] for every byte, computed at compile time.
const RARITY: [u8; 256] = {
    const LETTERS_BY_FREQUENCY: &[u8] = b"etaoinshrdlcumwfgypbvkjxqz";
    let mut table = [20_u8; 256];
    table[b' ' as usize] = 0;
    let mut rank = 0;
    while rank < LETTERS_BY_FREQUENCY.len() {
        let letter = LETTERS_BY_FREQUENCY[rank];
        table[letter as usize] = rank as u8 + 1;
        table[letter.to_ascii_uppercase() as usize] = rank as u8 + 1;
        rank += 1;
    }
    table
};

/// Runs `action` on the bytes of `text` lowercased (ASCII only, so byte offsets stay the
/// same), in a per-thread buffer: searching a lowercased copy lets the automata search
/// case-sensitively, with their fast prefilters. The lowercasing is a branch-free loop
/// over a byte slice, which the compiler vectorizes.
pub(crate) fn with_ascii_lowercase<T>(text: &str, action: impl FnOnce(&[u8]) -> T) -> T {
    thread_local! {
        static BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            buffer.extend_from_slice(text.as_bytes());
            for byte in buffer.iter_mut() {
                *byte = byte.to_ascii_lowercase();
            }
            action(&buffer)
        }
        Err(_) => action(text.to_ascii_lowercase().as_bytes()),
    })
}

/// The byte offset of the first occurrence of `needle` (given lowercased), ignoring
/// ASCII case.
pub(crate) fn find_ignore_case(haystack: &str, needle: &str) -> Option<usize> {
    find_all_ignore_case(haystack, needle).next()
}

#[cfg(test)]
mod tests {
    use super::{find_all_ignore_case, find_ignore_case};

    #[test]
    fn finds_regardless_of_case() {
        let cases = [
            ("Please Try Again in 6ms", "try again in ", Some(7)),
            ("nothing", "try again in ", None),
            ("", "x", None),
            ("ÉTry again in", "try again in", Some(2)),
        ];
        for (haystack, needle, expected) in cases {
            assert_eq!(find_ignore_case(haystack, needle), expected, "{haystack}");
        }
        assert_eq!(
            find_all_ignore_case("Limit 1, limit 2", "limit").collect::<Vec<_>>(),
            [0, 9]
        );
        // Overlapping occurrences, and a needle longer than what is left.
        assert_eq!(
            find_all_ignore_case("aYaYaY", "aya").collect::<Vec<_>>(),
            [0, 2]
        );
        assert_eq!(find_all_ignore_case("xy", "xyz").count(), 0);
    }
}
