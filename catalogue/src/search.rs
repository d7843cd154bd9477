//! ASCII-case-insensitive substring search without allocating: the hot path reads
//! provider messages many times and should not lowercase copies of them.

/// The byte offsets of every occurrence of `needle` (given lowercased) in `haystack`,
/// ignoring ASCII case.
pub(crate) fn find_all_ignore_case<'h>(
    haystack: &'h str,
    needle: &'h str,
) -> impl Iterator<Item = usize> + 'h {
    let bytes = haystack.as_bytes();
    let needle = needle.as_bytes();
    let (first_lower, first_upper) = match needle.first() {
        Some(first) => (first.to_ascii_lowercase(), first.to_ascii_uppercase()),
        None => (0, 0),
    };
    memchr::memchr2_iter(first_lower, first_upper, bytes).filter(move |start| {
        !needle.is_empty()
            && bytes
                .get(*start..*start + needle.len())
                .is_some_and(|window| window.eq_ignore_ascii_case(needle))
    })
}

/// Runs `action` on `text` lowercased (ASCII only, so byte offsets stay the same), in a
/// per-thread buffer: searching a lowercased copy lets the automata search
/// case-sensitively, with their fast prefilters.
pub(crate) fn with_ascii_lowercase<T>(text: &str, action: impl FnOnce(&str) -> T) -> T {
    thread_local! {
        static BUFFER: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
    }
    BUFFER.with(|buffer| match buffer.try_borrow_mut() {
        Ok(mut buffer) => {
            buffer.clear();
            buffer.push_str(text);
            buffer.make_ascii_lowercase();
            action(&buffer)
        }
        Err(_) => action(&text.to_ascii_lowercase()),
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
    }
}
