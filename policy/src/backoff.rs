//! The exponential backoff schedule (SPEC 3).

/// The longest delay before any retry: one hour, in milliseconds.
///
/// ```
/// assert_eq!(policy::backoff_ms(600_000, 10), policy::MAX_BACKOFF_MS);
/// ```
pub const MAX_BACKOFF_MS: u64 = 3_600_000;

/// The delay before retry `n` (1-based): `min(initial_interval_ms * 2^(n-1), 1 h)`.
///
/// Exact and overflow-free for every `n`; `n = 0` is treated as the first retry.
///
/// ```
/// use policy::backoff_ms;
/// assert_eq!(backoff_ms(500, 1), 500);
/// assert_eq!(backoff_ms(500, 3), 2_000);
/// assert_eq!(backoff_ms(500, u32::MAX), 3_600_000);
/// ```
pub fn backoff_ms(initial_interval_ms: u64, n: u32) -> u64 {
    let doublings = n.saturating_sub(1);
    // Any shift of 63 or more overflows a non-zero u64; the cap applies long before.
    if doublings >= 63 {
        return if initial_interval_ms == 0 {
            0
        } else {
            MAX_BACKOFF_MS
        };
    }
    initial_interval_ms
        .checked_mul(1u64 << doublings)
        .map_or(MAX_BACKOFF_MS, |delay| delay.min(MAX_BACKOFF_MS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_then_caps() {
        let table = [
            (500, 1, 500),
            (500, 2, 1_000),
            (500, 4, 4_000),
            (600_000, 3, 2_400_000),
            (600_000, 4, MAX_BACKOFF_MS),
            (100, 64, MAX_BACKOFF_MS),
            (100, u32::MAX, MAX_BACKOFF_MS),
            (u64::MAX, 2, MAX_BACKOFF_MS),
        ];
        for (initial, n, expected) in table {
            assert_eq!(
                backoff_ms(initial, n),
                expected,
                "backoff_ms({initial}, {n})"
            );
        }
    }
}
