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
        if !(MIN_MILLIS..=MAX_MILLIS).contains(&self.0) {
            // Outside the range of years this writes (about ±9999): say so
            // rather than guess.
            return write!(formatter, "{}ms since the epoch", self.0);
        }
        let (days, millis_of_day) = (self.0.div_euclid(DAY_MS), self.0.rem_euclid(DAY_MS));
        let (year, month, day) = civil_from_days(days);
        let seconds_of_day = millis_of_day / 1_000;
        let (hour, minute, second) = (
            seconds_of_day / 3_600,
            seconds_of_day / 60 % 60,
            seconds_of_day % 60,
        );
        if year < 0 {
            write!(formatter, "-{:06}", -year)?;
        } else {
            write!(formatter, "{year:04}")?;
        }
        write!(
            formatter,
            "-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}"
        )?;
        // Milliseconds when there are any, without trailing zeros.
        let mut fraction = millis_of_day % 1_000;
        if fraction != 0 {
            let mut digits = 3;
            while fraction % 10 == 0 {
                fraction /= 10;
                digits -= 1;
            }
            write!(formatter, ".{fraction:0digits$}")?;
        }
        formatter.write_str("Z")
    }
}

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// The earliest instant a [`Timestamp`] is written or read as: -009999-01-02T01:59:59Z
/// (the range of jiff's timestamps, which the rest of Switchback reads times with).
const MIN_MILLIS: i64 = -377_705_023_201_000;

/// The latest written: 9999-12-30T22:00:00Z.
const MAX_MILLIS: i64 = 253_402_207_200_000;

/// The latest read (jiff reads the fraction of the last second too).
const MAX_READ_MILLIS: i64 = MAX_MILLIS + 999;

/// Days since 1970-01-01 of a date of the proleptic Gregorian calendar (Howard
/// Hinnant's `days_from_civil`).
const fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date `days` after 1970-01-01 (Howard Hinnant's `civil_from_days`).
const fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let days = days + 719_468;
    let era = days.div_euclid(146_097);
    let day_of_era = days - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + if month <= 2 { 1 } else { 0 };
    (year, month, day)
}

/// Whether `year` is a leap year of the Gregorian calendar.
const fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

/// The days of `month` in `year`.
const fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Why text is not an RFC 3339 timestamp.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be an RFC 3339 time such as 2026-11-30T02:00:20Z")]
pub struct TimestampError;

/// The shape of an RFC 3339 time (`2026-11-30T02:00:20.5Z`, `...+02:00`),
/// as a regular expression for the API's document: what [`Timestamp`]'s
/// parser checks before it reads the value.
pub const RFC3339_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// Whether `text` has [`RFC3339_PATTERN`]'s shape.
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
        // The shape is checked: every field is ASCII digits where it is read.
        let number = |range: std::ops::Range<usize>| {
            text[range]
                .bytes()
                .fold(0_i64, |value, digit| value * 10 + i64::from(digit - b'0'))
        };
        let (year, month, day) = (number(0..4), number(5..7), number(8..10));
        let (hour, minute) = (number(11..13), number(14..16));
        // A leap second is read as the last second of its minute.
        let second = number(17..19);
        if !(1..=12).contains(&month)
            || !(1..=days_in_month(year, month)).contains(&day)
            || hour > 23
            || minute > 59
            || second > 60
        {
            return Err(TimestampError);
        }
        let second = second.min(59);
        let mut rest = &text[19..];
        let mut nanos = 0_i64;
        if let Some(fraction) = rest.strip_prefix('.') {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits > 9 {
                return Err(TimestampError);
            }
            nanos = number(20..20 + digits) * 10_i64.pow(9 - u32::try_from(digits).unwrap_or(9));
            rest = &fraction[digits..];
        }
        let offset_seconds = match rest.as_bytes() {
            [b'+' | b'-', ..] => {
                let (hours, minutes) = (
                    number(text.len() - 5..text.len() - 3),
                    number(text.len() - 2..text.len()),
                );
                if hours > 25 || minutes > 59 {
                    return Err(TimestampError);
                }
                let sign = if rest.starts_with('-') { -1 } else { 1 };
                sign * (hours * 3_600 + minutes * 60)
            }
            _ => 0,
        };
        let seconds =
            days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
                - offset_seconds;
        // Whole milliseconds, truncated toward zero as the nanoseconds are.
        let total_nanos = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
        let millis = i64::try_from(total_nanos / 1_000_000).map_err(|_| TimestampError)?;
        if !(MIN_MILLIS..=MAX_READ_MILLIS).contains(&millis) {
            return Err(TimestampError);
        }
        Ok(Self(millis))
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
        let bounds = [super::MIN_MILLIS, super::MAX_MILLIS];
        assert!(jiff::Timestamp::from_millisecond(super::MIN_MILLIS - 1).is_err());
        assert!(jiff::Timestamp::from_millisecond(super::MAX_MILLIS + 1).is_err());
        assert_eq!(
            jiff::Timestamp::MAX.as_millisecond(),
            super::MAX_READ_MILLIS
        );
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
            let span = u64::try_from(super::MAX_MILLIS - super::MIN_MILLIS).unwrap();
            super::MIN_MILLIS + i64::try_from(n % span).unwrap()
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
            Timestamp::from_millis(super::MAX_MILLIS + 1).to_string(),
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
