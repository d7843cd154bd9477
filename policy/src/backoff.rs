//! The exponential backoff schedule (SPEC 3), and its optional seeded jitter.
//!
//! Jitter spreads the retries of routes that failed together, so they do not all
//! come back in the same millisecond. It is not random: the offset of a retry is
//! derived from the route's task id and the retry's ordinal, so a schedule can be
//! computed again, by the server after a restart, by a test, or by the editor
//! drawing the band, and the same inputs always give the same delay, on the
//! server and in the browser alike.

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

/// The earliest and latest delay before retry `n` with `jitter_pct` percent of
/// jitter: `backoff_ms(initial_interval_ms, n)` give or take `jitter_pct`% of it,
/// the latest capped at [`MAX_BACKOFF_MS`].
///
/// The band is symmetric around the backoff, so on average the delay is the one
/// the policy states: jitter spreads the retries of many routes without making
/// the policy, taken over many routes, press a provider harder or wait longer
/// than its numbers say. A percentage above 100 is taken as 100 (validated
/// documents allow at most 50), so the band never reaches below zero.
///
/// ```
/// use policy::backoff::jitter_band_ms;
/// assert_eq!(jitter_band_ms(1_000, 1, 25), (750, 1_250));
/// assert_eq!(jitter_band_ms(1_000, 1, 0), (1_000, 1_000));
/// // At the cap the band is one-sided: no delay exceeds one hour.
/// assert_eq!(jitter_band_ms(600_000, 4, 50), (1_800_000, policy::MAX_BACKOFF_MS));
/// ```
pub fn jitter_band_ms(initial_interval_ms: u64, n: u32, jitter_pct: u32) -> (u64, u64) {
    let delay_ms = backoff_ms(initial_interval_ms, n);
    let spread_ms = jitter_spread_ms(delay_ms, jitter_pct);
    (
        delay_ms - spread_ms,
        delay_ms.saturating_add(spread_ms).min(MAX_BACKOFF_MS),
    )
}

/// The delay before retry `n` of the route whose seed is `seed` ([`jitter_seed`]):
/// a point of [`jitter_band_ms`] picked by `seed` and `n` alone.
///
/// With `jitter_pct` 0 it is exactly [`backoff_ms`]. The same seed and ordinal
/// always give the same delay; different seeds spread across the band.
///
/// ```
/// use policy::backoff::{jitter_band_ms, jitter_seed, jittered_backoff_ms};
/// let seed = jitter_seed("0190f1d2-7a5b-7c3e-9d4f-1a2b3c4d5e6f");
/// let delay_ms = jittered_backoff_ms(1_000, 2, 50, seed);
/// let (earliest_ms, latest_ms) = jitter_band_ms(1_000, 2, 50);
/// assert!((earliest_ms..=latest_ms).contains(&delay_ms));
/// assert_eq!(jittered_backoff_ms(1_000, 2, 50, seed), delay_ms);
/// assert_eq!(jittered_backoff_ms(1_000, 2, 0, seed), policy::backoff_ms(1_000, 2));
/// ```
pub fn jittered_backoff_ms(initial_interval_ms: u64, n: u32, jitter_pct: u32, seed: u64) -> u64 {
    let delay_ms = backoff_ms(initial_interval_ms, n);
    let spread_ms = jitter_spread_ms(delay_ms, jitter_pct);
    if spread_ms == 0 {
        return delay_ms;
    }
    // splitmix64's next output from the state `seed + n * gamma` (the sequence
    // that starts at `seed`, n steps on): every retry of a route gets an offset
    // of its own, none depending on another.
    let mixed = splitmix64(seed.wrapping_add(u64::from(n).wrapping_mul(SPLITMIX_GAMMA)));
    // Uniform over 0..=2 * spread; the modulo's bias is below 2^-40 for any
    // spread under an hour.
    let offset_ms = mixed % (2 * spread_ms + 1);
    (delay_ms - spread_ms + offset_ms).min(MAX_BACKOFF_MS)
}

/// The seed of a route's jitter: the 64-bit FNV-1a hash of `id` (a task id).
///
/// Written out rather than taken from `std`'s hasher, whose output may change
/// between Rust releases: a seed must stay the same across upgrades, and between
/// the server and the browser.
///
/// ```
/// // FNV-1a's published test values.
/// assert_eq!(policy::backoff::jitter_seed(""), 0xcbf2_9ce4_8422_2325);
/// assert_eq!(policy::backoff::jitter_seed("a"), 0xaf63_dc4c_8601_ec8c);
/// ```
pub fn jitter_seed(id: &str) -> u64 {
    const OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    id.bytes().fold(OFFSET_BASIS, |hash, byte| {
        (hash ^ u64::from(byte)).wrapping_mul(PRIME)
    })
}

/// splitmix64's increment: the golden ratio as a 64-bit fraction.
const SPLITMIX_GAMMA: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's finalizer (Steele, Lea and Flood, 2014): a bijection that
/// spreads every bit of its input over every bit of its output.
fn splitmix64(state: u64) -> u64 {
    let mut z = state.wrapping_add(SPLITMIX_GAMMA);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// `jitter_pct` percent of `delay_ms` (at most all of it), rounded down.
fn jitter_spread_ms(delay_ms: u64, jitter_pct: u32) -> u64 {
    let share = u128::from(jitter_pct.min(100));
    // At most `delay_ms`, so it fits back into a u64.
    u64::try_from(u128::from(delay_ms) * share / 100).unwrap_or(delay_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_are_symmetric_below_the_cap() {
        let table = [
            // (initial, n, jitter_pct, earliest, latest)
            (500, 1, 0, 500, 500),
            (500, 1, 50, 250, 750),
            (500, 2, 25, 750, 1_250),
            (100, 1, 1, 99, 101),
            (333, 1, 10, 300, 366),
            (600_000, 3, 50, 1_200_000, MAX_BACKOFF_MS),
            (600_000, 10, 50, 1_800_000, MAX_BACKOFF_MS),
            (500, 1, 200, 0, 1_000),
        ];
        for (initial, n, jitter_pct, earliest, latest) in table {
            assert_eq!(
                jitter_band_ms(initial, n, jitter_pct),
                (earliest, latest),
                "jitter_band_ms({initial}, {n}, {jitter_pct})"
            );
        }
    }

    /// Pinned values: a change here moves the retries of every route with jitter,
    /// so it must be deliberate. The same numbers hold on wasm32: the arithmetic is
    /// all u64, none of it depends on the width of a pointer.
    #[test]
    fn seeds_and_delays_are_pinned() {
        assert_eq!(jitter_seed("foobar"), 0x85944171f73967e8);
        let seed = jitter_seed("0190f1d2-7a5b-7c3e-9d4f-1a2b3c4d5e6f");
        let delays: Vec<u64> = (1..=4)
            .map(|n| jittered_backoff_ms(1_000, n, 50, seed))
            .collect();
        // Computed by a separate implementation of FNV-1a and splitmix64, not by this code.
        assert_eq!(delays, [841, 1_969, 3_799, 9_224]);
    }

    #[test]
    fn ordinals_and_seeds_spread_across_the_band() {
        let seeds = ["task-a", "task-b", "task-c", "task-d"].map(jitter_seed);
        let delays: Vec<u64> = seeds
            .iter()
            .map(|seed| jittered_backoff_ms(10_000, 1, 50, *seed))
            .collect();
        let mut distinct = delays.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(distinct.len(), delays.len(), "{delays:?}");
        assert!(delays.iter().all(|delay| (5_000..=15_000).contains(delay)));
    }

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
