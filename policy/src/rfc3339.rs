//! RFC 3339 times as whole milliseconds since the Unix epoch, read and written
//! without a time library: the browser carries this code (through the API's
//! `Timestamp`), and the catalogue reads evidence's `observed_at` with it, so
//! both accept exactly the same times. The API's tests check it against jiff,
//! instant by instant.

use std::fmt;

/// The shape of an RFC 3339 time (`2026-11-30T02:00:20.5Z`, `...+02:00`), as a
/// regular expression for the API's document: what [`read_millis`] checks
/// before it reads the value.
pub const RFC3339_PATTERN: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})$";

/// The earliest instant written or read: -009999-01-02T01:59:59Z (the range of
/// jiff's timestamps, which the rest of Switchback reads times with).
pub const MIN_MILLIS: i64 = -377_705_023_201_000;

/// The latest instant written: 9999-12-30T22:00:00Z.
pub const MAX_MILLIS: i64 = 253_402_207_200_000;

/// The latest instant read (jiff reads the fraction of the last second too).
pub const MAX_READ_MILLIS: i64 = MAX_MILLIS + 999;

/// Milliseconds in a day.
const DAY_MS: i64 = 86_400_000;

/// Writes the instant `millis` milliseconds after the Unix epoch in UTC
/// (`2026-11-30T02:00:20Z`, `...20.5Z` when there is a fraction), or says it
/// is out of range (outside [`MIN_MILLIS`]..=[`MAX_MILLIS`]) rather than guess.
pub fn write_millis(millis: i64, formatter: &mut impl fmt::Write) -> fmt::Result {
    if !(MIN_MILLIS..=MAX_MILLIS).contains(&millis) {
        return write!(formatter, "{millis}ms since the epoch");
    }
    let (days, millis_of_day) = (millis.div_euclid(DAY_MS), millis.rem_euclid(DAY_MS));
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

/// Reads an RFC 3339 time as milliseconds since the Unix epoch (a fraction
/// past the millisecond truncated toward zero, a leap second read as the last
/// second of its minute), or `None` when `text` is not one: not of
/// [`RFC3339_PATTERN`]'s shape (no white space around it), a date or time that
/// does not exist, or an instant outside [`MIN_MILLIS`]..=[`MAX_READ_MILLIS`].
pub fn read_millis(text: &str) -> Option<i64> {
    if !has_rfc3339_shape(text) {
        return None;
    }
    // The shape is checked: every field is ASCII digits where it is read.
    let number = |range: std::ops::Range<usize>| {
        text[range]
            .bytes()
            .fold(0_i64, |value, digit| value * 10 + i64::from(digit - b'0'))
    };
    let (year, month, day) = (number(0..4), number(5..7), number(8..10));
    let (hour, minute) = (number(11..13), number(14..16));
    let second = number(17..19);
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let second = second.min(59);
    let mut rest = &text[19..];
    let mut nanos = 0_i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits > 9 {
            return None;
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
                return None;
            }
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (hours * 3_600 + minutes * 60)
        }
        _ => 0,
    };
    let seconds = days_from_civil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second
        - offset_seconds;
    // Whole milliseconds, truncated toward zero as the nanoseconds are.
    let total_nanos = i128::from(seconds) * 1_000_000_000 + i128::from(nanos);
    let millis = i64::try_from(total_nanos / 1_000_000).ok()?;
    (MIN_MILLIS..=MAX_READ_MILLIS)
        .contains(&millis)
        .then_some(millis)
}

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

#[cfg(test)]
mod tests {
    use super::{MAX_MILLIS, read_millis, write_millis};

    fn written(millis: i64) -> String {
        let mut text = String::new();
        write_millis(millis, &mut text).unwrap();
        text
    }

    #[test]
    fn round_trips_with_and_without_milliseconds() {
        for (millis, text) in [
            (0, "1970-01-01T00:00:00Z"),
            (1_796_022_000_000, "2026-11-30T07:00:00Z"),
            (1_796_022_000_123, "2026-11-30T07:00:00.123Z"),
            (1_796_022_000_500, "2026-11-30T07:00:00.5Z"),
        ] {
            assert_eq!(written(millis), text);
            assert_eq!(read_millis(text), Some(millis), "{text}");
        }
        assert_eq!(
            read_millis("2026-11-30T09:00:00+02:00"),
            Some(1_796_022_000_000),
            "an offset is read as the same instant"
        );
        assert_eq!(
            read_millis("2026-12-31T23:59:60Z"),
            read_millis("2026-12-31T23:59:59Z"),
            "a leap second is the last second of its minute"
        );
        assert_eq!(
            read_millis("2026-11-30t02:00:20.123456z"),
            Some(1_796_004_020_123),
            "a fraction past the millisecond is truncated"
        );
        for not_rfc3339 in [
            "yesterday",
            "",
            " 2026-11-30T02:00:20Z",
            "2026-11-30T02:00:20Z ",
            "2026-11-30 02:00:20Z",
            "2026-11-30T02:00:20",
            "2026-11-30T02:00:20.Z",
            "2026-11-30T02:00:20+0200",
            "2026-02-30T02:00:20Z",
            "2026-11-30T24:00:00Z",
            "2026-11-30T02:00:20.1234567891Z",
        ] {
            assert_eq!(read_millis(not_rfc3339), None, "{not_rfc3339:?}");
        }
        assert_eq!(written(MAX_MILLIS + 1), "253402207200001ms since the epoch");
    }
}
