//! Time on the wire: one type from the store (integer milliseconds since the
//! Unix epoch) to the browser (RFC 3339 text in JSON).

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
        match jiff::Timestamp::from_millisecond(self.0) {
            Ok(instant) => write!(formatter, "{instant}"),
            // Outside jiff's range (about ±9999 years): say so rather than guess.
            Err(_) => write!(formatter, "{}ms since the epoch", self.0),
        }
    }
}

/// Why text is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an RFC 3339 time such as 2026-11-30T02:00:20Z")]
pub struct TimestampError;

/// The shape of an RFC 3339 time (`2026-11-30T02:00:20.5Z`, `...+02:00`),
/// as a regular expression for the API's document: what [`Timestamp`]'s
/// parser checks before jiff reads the value.
pub const RFC3339_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// Whether `text` has [`RFC3339_PATTERN`]'s shape (jiff also reads other ISO 8601 forms).
fn has_rfc3339_shape(text: &str) -> bool {
    let bytes = text.as_bytes();
    let digits = |range: std::ops::Range<usize>| {
        bytes
            .get(range)
            .is_some_and(|part| part.iter().all(u8::is_ascii_digit))
    };
    let date_and_time = bytes.len() >= 20
        && digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && matches!(bytes[10], b'T' | b't')
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19);
    if !date_and_time {
        return false;
    }
    let mut rest = &text[19..];
    if let Some(fraction) = rest.strip_prefix('.') {
        let count = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if count == 0 {
            return false;
        }
        rest = &fraction[count..];
    }
    match rest.as_bytes() {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|b| b.is_ascii_digit()),
        _ => false,
    }
}

impl FromStr for Timestamp {
    type Err = TimestampError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if !has_rfc3339_shape(text) {
            return Err(TimestampError);
        }
        let instant: jiff::Timestamp = text.parse().map_err(|_| TimestampError)?;
        Ok(Self(instant.as_millisecond()))
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

#[cfg(test)]
mod tests {
    use super::Timestamp;

    #[test]
    fn round_trips_with_and_without_milliseconds() {
        for (millis, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (1_796_022_000_000, "2026-11-30T07:00:00Z"),
            (1_796_022_000_123, "2026-11-30T07:00:00.123Z"),
        ] {
            let at = Timestamp::from_millis(millis);
            assert_eq!(at.to_string(), text);
            assert_eq!(text.parse::<Timestamp>(), Ok(at));
        }
        assert_eq!(
            "2026-11-30T09:00:00+02:00".parse::<Timestamp>(),
            Ok(Timestamp::from_millis(1_796_022_000_000)),
            "an offset is read as the same instant"
        );
        for not_rfc3339 in [
            "yesterday",
            "",
            " 2026-11-30T02:00:20Z",
            "2026-11-30 02:00:20Z",
            "2026-11-30T02:00:20",
            "2026-11-30T02:00:20.Z",
            "2026-11-30T02:00:20+0200",
            "2026-02-30T02:00:20Z",
        ] {
            assert!(not_rfc3339.parse::<Timestamp>().is_err(), "{not_rfc3339:?}");
        }
        assert!("2026-11-30t02:00:20.123456z".parse::<Timestamp>().is_ok());
    }
}
