//! Time on the wire: one type from the store (integer milliseconds since the
//! Unix epoch) to the browser (RFC 3339 text in JSON, written and read by the
//! policy crate's `rfc3339`, which the catalogue reads evidence with too).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An instant, in whole milliseconds since the Unix epoch; written as RFC 3339
/// (`2026-11-30T02:00:20Z`) in JSON.
///
/// ```
/// use api::Timestamp;
/// let at = Timestamp::from_millis(1_796_004_020_000);
/// assert_eq!(serde_json::to_value(at).unwrap(), "2026-11-30T02:00:20Z");
/// assert_eq!("2026-11-30T02:00:20Z".parse::<Timestamp>().unwrap(), at);
/// assert_eq!(at.plus_millis(500).as_millis(), 1_796_004_020_500);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = String, format = DateTime))]
pub struct Timestamp(i64);

impl Timestamp {
    /// The instant `millis` milliseconds after the Unix epoch.
    pub const fn from_millis(millis: i64) -> Self {
        Self(millis)
    }

    /// Milliseconds since the Unix epoch, as stored.
    pub const fn as_millis(self) -> i64 {
        self.0
    }

    /// The instant `millis` later (saturating).
    #[must_use]
    pub const fn plus_millis(self, millis: i64) -> Self {
        Self(self.0.saturating_add(millis))
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        policy::rfc3339::write_millis(self.0, formatter)
    }
}

/// Why text is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an RFC 3339 time such as 2026-11-30T02:00:20Z")]
pub struct TimestampError;

impl FromStr for Timestamp {
    type Err = TimestampError;

    /// Reads RFC 3339 as the catalogue reads evidence's `observed_at`: with
    /// the policy crate's reader.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        policy::rfc3339::read_millis(text)
            .map(Self)
            .ok_or(TimestampError)
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// The policy crate's RFC 3339 text, checked here through [`Timestamp`]
/// against jiff (which the policy crate, pure, may not depend on).
#[cfg(test)]
mod tests {
    use policy::rfc3339::{MAX_MILLIS, MAX_READ_MILLIS, MIN_MILLIS};

    use super::Timestamp;

    /// A deterministic stream of numbers (a linear congruential generator).
    fn numbers(seed: u64) -> impl Iterator<Item = u64> {
        std::iter::successors(Some(seed), |state| {
            Some(
                state
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407),
            )
        })
        .map(|state| state >> 11)
    }

    #[test]
    fn writes_every_instant_as_jiff_does() {
        let bounds = [MIN_MILLIS, MAX_MILLIS];
        assert!(jiff::Timestamp::from_millisecond(MIN_MILLIS - 1).is_err());
        assert!(jiff::Timestamp::from_millisecond(MAX_MILLIS + 1).is_err());
        assert_eq!(jiff::Timestamp::MAX.as_millisecond(), MAX_READ_MILLIS);
        let edges = [
            0,
            -1,
            1,
            999,
            -999,
            86_399_999,
            -86_400_000,
            951_782_400_000,
        ];
        let sampled = numbers(7).take(200_000).map(|n| {
            let span = u64::try_from(MAX_MILLIS - MIN_MILLIS).unwrap();
            MIN_MILLIS + i64::try_from(n % span).unwrap()
        });
        for millis in edges.into_iter().chain(bounds).chain(sampled) {
            let ours = Timestamp::from_millis(millis).to_string();
            let theirs = jiff::Timestamp::from_millisecond(millis)
                .unwrap()
                .to_string();
            assert_eq!(ours, theirs, "{millis}");
            // RFC 3339 has four-digit years only: the years before 0 are
            // written, and never read.
            if !ours.starts_with('-') {
                assert_eq!(ours.parse(), Ok(Timestamp::from_millis(millis)), "{ours}");
            }
        }
        assert_eq!(
            Timestamp::from_millis(MAX_MILLIS + 1).to_string(),
            "253402207200001ms since the epoch"
        );
    }

    #[test]
    fn reads_every_rfc3339_time_as_jiff_does() {
        // Fields drawn around and past their bounds, so that both sides refuse
        // the same ones: months 0 to 13, days 0 to 32, hours to 25, leap seconds,
        // offsets to ±26 hours, fractions of 1 to 10 digits.
        let mut draw = numbers(11);
        let mut next = |below: u64| draw.next().unwrap() % below;
        let mut accepted = 0;
        for _ in 0..200_000 {
            let year = if next(8) == 0 {
                next(10_000)
            } else {
                1_960 + next(100)
            };
            let mut text = format!(
                "{year:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                next(14),
                next(33),
                next(26),
                next(61),
                if next(20) == 0 { 60 } else { next(60) },
            );
            if next(2) == 0 {
                let digits = 1 + next(10) as usize;
                let fraction: String = (0..digits)
                    .map(|_| char::from(b'0' + next(10) as u8))
                    .collect();
                text.push('.');
                text.push_str(&fraction);
            }
            match next(3) {
                0 => text.push('Z'),
                sign => text.push_str(&format!(
                    "{}{:02}:{:02}",
                    if sign == 1 { '+' } else { '-' },
                    next(27),
                    next(61)
                )),
            }
            let ours = text.parse::<Timestamp>().ok();
            let theirs = text
                .parse::<jiff::Timestamp>()
                .ok()
                .map(|instant| Timestamp::from_millis(instant.as_millisecond()));
            assert_eq!(ours, theirs, "{text}");
            accepted += usize::from(ours.is_some());
        }
        assert!(accepted > 50_000, "most drawn times are valid: {accepted}");
    }
}
