//! Wall-clock resets that agent CLIs print ("resets 3pm (America/New_York)", "Access
//! resets at 10:57 PM GMT-3", "try again at Jul 5th, 2026 8:19 PM"), and the instant
//! they name (SPEC 2.3).
//!
//! A wall-clock time is an instant only with a zone: the one printed beside it (an IANA
//! name, or an offset such as `GMT-3` or `UTC+05:30`), else the evidence's `time_zone`.
//! Without a printed date it is the next occurrence of that time after the observation;
//! a printed date is used as given (without a year: its next occurrence). Zones come
//! from the time-zone database bundled into the binary, never from the host, so the
//! same evidence gives the same instant on every machine.

use std::sync::LazyLock;

use jiff::civil::{Date, DateTime, Time, Weekday};
use jiff::tz::{Offset, TimeZone, TimeZoneDatabase};
use jiff::{Timestamp, ToSpan};

/// The bundled time-zone database, loaded once.
static ZONES: LazyLock<TimeZoneDatabase> = LazyLock::new(TimeZoneDatabase::bundled);

/// The time zone an IANA name names, from the bundled database.
///
/// ```
/// assert!(catalogue::time_zone("America/Santiago").is_some());
/// assert!(catalogue::time_zone("Mars/Olympus_Mons").is_none());
/// ```
pub fn time_zone(name: &str) -> Option<TimeZone> {
    let name = name.trim();
    // Only names, never a path into the host's files.
    if name.is_empty() || name.len() > 64 || name.starts_with('/') || name.contains("..") {
        return None;
    }
    ZONES.get(name).ok()
}

/// Every zone name the bundled database knows, sorted: what evidence's `time_zone` may
/// name.
///
/// ```
/// let names = catalogue::time_zone_names();
/// assert!(names.iter().any(|name| name == "Europe/Berlin"));
/// assert!(names.windows(2).all(|pair| pair[0] < pair[1]));
/// ```
pub fn time_zone_names() -> Vec<String> {
    let mut names: Vec<String> = ZONES
        .available()
        .map(|name| name.as_str().to_owned())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// How long ago a yearless date may have passed and still be this year's.
const HALF_A_YEAR_MS: i64 = 183 * 24 * 60 * 60 * 1000;

/// A wall-clock statement, as printed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct WallClock {
    /// Month and day, and the year when one was printed.
    pub date: Option<(i8, i8, Option<i16>)>,
    /// The day of the week, when one was printed without a date ("Tuesday 9am").
    pub weekday: Option<Weekday>,
    /// The time of day.
    pub time: Time,
    /// The zone printed beside it.
    pub zone: Option<TimeZone>,
    /// A zone abbreviation printed beside it (`PST`, `CET`): ambiguous alone, it only
    /// confirms the evidence's zone.
    pub abbreviation: Option<String>,
    /// How many bytes of the text the statement took.
    pub len: usize,
}

/// Why a wall-clock statement names no instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unresolved {
    /// No zone was printed and the evidence gave none.
    NoZone,
    /// The date does not exist (February 30th) or the instant is out of range.
    Invalid,
    /// The printed abbreviation is not the evidence's zone's at that time ("3pm CET"
    /// from a process in New York), or there is no evidence zone to check it against.
    Ambiguous,
}

/// A zone as printed after the time.
enum Printed {
    /// An IANA name or an offset.
    Zone(TimeZone),
    /// An abbreviation such as `PST`.
    Abbreviation(String),
}

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];
const WEEKDAYS: [(&str, Weekday); 7] = [
    ("monday", Weekday::Monday),
    ("tuesday", Weekday::Tuesday),
    ("wednesday", Weekday::Wednesday),
    ("thursday", Weekday::Thursday),
    ("friday", Weekday::Friday),
    ("saturday", Weekday::Saturday),
    ("sunday", Weekday::Sunday),
];

/// Whether `word` (lowercase) names `full`: the whole name or an abbreviation of at
/// least three letters (`oct`, `sept`, `tues`), with or without a final dot.
fn abbreviates(word: &str, full: &str) -> bool {
    let word = word.trim_end_matches('.');
    word.len() >= 3 && full.starts_with(word)
}

/// Reads the wall-clock statement at the start of `text` (what follows "resets" or "try
/// again at"), or `None` when it does not start with a date or a time of day.
///
/// Dates: `Oct 6`, `Jul 5th, 2026`, `December 1 2026`, `2026-12-01`, `12/1/2026`
/// (month first, as US English prints it). Times: `3pm`, `12:50am`, `10:57 PM`,
/// `15:00`, `15:00:30`. Zones: `(America/New_York)`, `America/New_York`, `GMT-3`,
/// `UTC+05:30`, `UTC`, `GMT`, `Z`. `at`, commas and weekday names between them are
/// skipped.
pub(crate) fn parse(text: &str) -> Option<WallClock> {
    let mut words = Words::new(text);
    let mut date = None;
    let mut time = None;
    // A date may come before or after the time ("Oct 6, 1pm", "3pm on Oct 6").
    for _ in 0..2 {
        words.skip_fillers();
        if date.is_none()
            && let Some(found) = words.date()
        {
            date = Some(found);
            continue;
        }
        if time.is_none()
            && let Some(found) = words.time()
        {
            time = Some(found);
            continue;
        }
        break;
    }
    let time = time?;
    words.skip_fillers();
    let (zone, abbreviation) = match words.zone() {
        Some(Printed::Zone(zone)) => (Some(zone), None),
        Some(Printed::Abbreviation(abbreviation)) => (None, Some(abbreviation)),
        None => (None, None),
    };
    let read = &words.start[..words.start.len() - words.rest.len()];
    let len = read.trim_end_matches([' ', ',']).len();
    Some(WallClock {
        date,
        weekday: words.weekday,
        time,
        zone,
        abbreviation,
        len,
    })
}

/// The instant a wall-clock statement names, in unix milliseconds: in its printed zone,
/// else in `fallback` (the evidence's `time_zone`); the next occurrence after
/// `observed_at_ms` unless a full date was printed.
pub(crate) fn resolve(
    clock: &WallClock,
    observed_at_ms: i64,
    fallback: Option<&TimeZone>,
) -> Result<i64, Unresolved> {
    let zone = match (&clock.zone, &clock.abbreviation, fallback) {
        (Some(zone), _, _) => zone,
        (None, Some(_), None) => return Err(Unresolved::Ambiguous),
        (None, _, Some(fallback)) => fallback,
        (None, None, None) => return Err(Unresolved::NoZone),
    };
    let observed = Timestamp::from_millisecond(observed_at_ms).map_err(|_| Unresolved::Invalid)?;
    let local_now = observed.to_zoned(zone.clone());
    let at = |date: Date| -> Result<Timestamp, Unresolved> {
        DateTime::from_parts(date, clock.time)
            .to_zoned(zone.clone())
            .map(|zoned| zoned.timestamp())
            .map_err(|_| Unresolved::Invalid)
    };
    let instant = match clock.date {
        Some((month, day, Some(year))) => {
            at(Date::new(year, month, day).map_err(|_| Unresolved::Invalid)?)?
        }
        // This year's, unless it passed more than half a year ago (then next year's):
        // a date just past is a reset in the past, not one a year away.
        Some((month, day, None)) => {
            let this_year = local_now.year();
            let this_years = Date::new(this_year, month, day)
                .ok()
                .and_then(|date| at(date).ok())
                .filter(|instant| observed_at_ms - instant.as_millisecond() < HALF_A_YEAR_MS);
            match this_years {
                Some(instant) => instant,
                None => at(Date::new(this_year + 1, month, day).map_err(|_| Unresolved::Invalid)?)?,
            }
        }
        // Today, or the next day (of that weekday, when one was printed) it is still ahead.
        None => (0..=7)
            .filter_map(|days: i64| local_now.date().checked_add(days.days()).ok())
            .filter(|date| {
                clock
                    .weekday
                    .is_none_or(|weekday| date.weekday() == weekday)
            })
            .filter_map(|date| at(date).ok())
            .find(|instant| *instant > observed)
            .ok_or(Unresolved::Invalid)?,
    };
    if let Some(abbreviation) = &clock.abbreviation
        && !zone
            .to_offset_info(instant)
            .abbreviation()
            .eq_ignore_ascii_case(abbreviation)
    {
        return Err(Unresolved::Ambiguous);
    }
    Ok(instant.as_millisecond())
}

/// A cursor over the words of a statement.
struct Words<'t> {
    /// The text read.
    start: &'t str,
    rest: &'t str,
    /// A weekday skipped on the way.
    weekday: Option<Weekday>,
}

impl<'t> Words<'t> {
    fn new(text: &'t str) -> Self {
        let text = crate::redact::prefix(text, 80);
        Self {
            start: text,
            rest: text,
            weekday: None,
        }
    }

    fn trim(&mut self) {
        self.rest = self
            .rest
            .trim_start_matches(|c: char| c.is_whitespace() || c == ',');
    }

    /// The next word (up to white space or a comma) without taking it.
    fn peek(&self) -> &'t str {
        let end = self
            .rest
            // A bracket or a quote closes the statement ("reset at 2026-07-14
            // 07:49:08]", a JSON string's end).
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ']' | '"' | '\u{3002}'))
            .unwrap_or(self.rest.len());
        &self.rest[..end]
    }

    fn take(&mut self, bytes: usize) {
        self.rest = &self.rest[bytes..];
        self.trim();
    }

    /// Skips `at`, `on`, `the` and weekday names.
    fn skip_fillers(&mut self) {
        self.trim();
        loop {
            let word = self.peek();
            let lower = word.to_ascii_lowercase();
            let weekday = WEEKDAYS
                .iter()
                .find(|(name, _)| abbreviates(&lower, name))
                .map(|(_, weekday)| *weekday);
            if weekday.is_some() {
                self.weekday = weekday;
            } else if word.is_empty() || !matches!(lower.as_str(), "at" | "on" | "the") {
                return;
            }
            self.take(word.len());
        }
    }

    /// `Oct 6`, `Jul 5th, 2026`, `2026-12-01`, `12/1/2026`.
    fn date(&mut self) -> Option<(i8, i8, Option<i16>)> {
        let word = self.peek();
        if let Some(date) = numeric_date(word) {
            self.take(word.len());
            return Some(date);
        }
        let lower = word.to_ascii_lowercase();
        let month = MONTHS.iter().position(|name| abbreviates(&lower, name))?;
        let saved = self.rest;
        self.take(word.len());
        let day_word = self.peek();
        let digits = day_word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        let suffix = &day_word[digits.len()..];
        let day = digits
            .parse::<i8>()
            .ok()
            .filter(|day| (1..=31).contains(day));
        let ordinal = matches!(
            suffix.to_ascii_lowercase().as_str(),
            "" | "st" | "nd" | "rd" | "th"
        );
        let Some(day) = day.filter(|_| ordinal && !day_word.contains(':')) else {
            // Not a date after all ("Jan at 3pm"): the words are read again as a time.
            self.rest = saved;
            return None;
        };
        self.take(day_word.len());
        let year_word = self.peek();
        let year = (year_word.len() == 4)
            .then(|| year_word.parse::<i16>().ok())
            .flatten()
            .filter(|year| (1970..=9999).contains(year));
        if year.is_some() {
            self.take(year_word.len());
        }
        Some((month as i8 + 1, day, year))
    }

    /// `3pm`, `3 pm`, `12:50am`, `10:57 PM`, `15:00`, `15:00:30`.
    fn time(&mut self) -> Option<Time> {
        let word = self.peek();
        let split = word
            .find(|c: char| !(c.is_ascii_digit() || c == ':'))
            .unwrap_or(word.len());
        let (clock, glued) = word.split_at(split);
        let mut parts = clock.split(':');
        let hour: i8 = parts.next()?.parse().ok()?;
        let minute: i8 = match parts.next() {
            Some(minutes) if minutes.len() == 2 => minutes.parse().ok()?,
            Some(_) => return None,
            None => 0,
        };
        let second: i8 = match parts.next() {
            Some(seconds) if seconds.len() == 2 => seconds.parse().ok()?,
            Some(_) => return None,
            None => 0,
        };
        if parts.next().is_some() {
            return None;
        }
        let has_minutes = clock.contains(':');
        let mut consumed = word.len();
        let meridiem = if glued.is_empty() {
            // `10:57 PM`: the marker may be the next word.
            let after = &self.rest[word.len()..];
            let next_start = after.len() - after.trim_start().len();
            let next = Words::new(after.trim_start()).peek();
            match meridiem(next) {
                Some(pm) => {
                    consumed = word.len() + next_start + next.len();
                    Some(pm)
                }
                None => None,
            }
        } else {
            Some(meridiem(glued)?)
        };
        let hour = match meridiem {
            Some(pm) if (1..=12).contains(&hour) => hour % 12 + if pm { 12 } else { 0 },
            Some(_) => return None,
            // A 24-hour time needs its minutes: a bare number is not a time.
            None if has_minutes && (0..=23).contains(&hour) => hour,
            None => return None,
        };
        let time = Time::new(hour, minute, second, 0).ok()?;
        self.take(consumed);
        Some(time)
    }

    /// `(America/New_York)`, `America/New_York`, `GMT-3`, `UTC+05:30`, `UTC`, `Z`; or
    /// an abbreviation (`PST`, `CEST`).
    fn zone(&mut self) -> Option<Printed> {
        let printed = self.peek();
        let word = printed
            .trim_start_matches('(')
            .trim_end_matches(['.', ')', ';']);
        let upper = word.to_ascii_uppercase();
        let zone = if let Some(offset) = ["GMT", "UTC", "Z"]
            .iter()
            .find_map(|prefix| upper.strip_prefix(prefix))
            .and_then(offset_seconds)
        {
            Some(Printed::Zone(TimeZone::fixed(
                Offset::from_seconds(offset).ok()?,
            )))
        } else if word.contains('/') {
            time_zone(word).map(Printed::Zone)
        } else if (2..=5).contains(&word.len())
            && word.bytes().all(|byte| byte.is_ascii_uppercase())
        {
            Some(Printed::Abbreviation(word.to_owned()))
        } else {
            None
        };
        if zone.is_some() {
            // Up to the zone's closing parenthesis, not the sentence's full stop.
            let end = printed.trim_end_matches(['.', ';']).len();
            self.rest = &self.rest[end..];
        }
        zone
    }
}

/// `am`, `a.m.`, `pm`, `p.m.` (any case): whether it is afternoon.
fn meridiem(word: &str) -> Option<bool> {
    let lower = word
        .trim_end_matches(['.', ')', ';', ','])
        .replace('.', "")
        .to_ascii_lowercase();
    match lower.as_str() {
        "am" => Some(false),
        "pm" => Some(true),
        _ => None,
    }
}

/// What follows `GMT`/`UTC`: nothing, `-3`, `+2`, `+05:30`, `+0530`, in seconds.
fn offset_seconds(rest: &str) -> Option<i32> {
    if rest.is_empty() {
        return Some(0);
    }
    let (sign, digits) = match rest.as_bytes()[0] {
        b'+' => (1, &rest[1..]),
        b'-' => (-1, &rest[1..]),
        _ => return None,
    };
    let (hours, minutes) = match digits.split_once(':') {
        Some((hours, minutes)) => (hours, minutes),
        None if digits.len() == 4 && digits.is_ascii() => digits.split_at(2),
        None => (digits, "0"),
    };
    let hours: i32 = hours
        .parse()
        .ok()
        .filter(|hours| (0..=14).contains(hours))?;
    let minutes: i32 = minutes
        .parse()
        .ok()
        .filter(|minutes| (0..60).contains(minutes))?;
    Some(sign * (hours * 3600 + minutes * 60))
}

/// `2026-12-01` (year first) or `12/1/2026` (month first, as US English prints it).
fn numeric_date(word: &str) -> Option<(i8, i8, Option<i16>)> {
    let (separator, year_first) = if word.contains('-') {
        ('-', true)
    } else {
        ('/', false)
    };
    let parts: Vec<&str> = word.split(separator).collect();
    let [first, second, third] = parts.as_slice() else {
        return None;
    };
    let (year, month, day) = if year_first {
        (first, second, third)
    } else {
        (third, first, second)
    };
    if year.len() != 4 {
        return None;
    }
    Some((
        month.parse().ok()?,
        day.parse().ok()?,
        Some(year.parse().ok()?),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const OBSERVED: i64 = 1_796_004_000_000; // 2026-11-30T02:00:00Z

    /// A statement, the evidence's zone, and the instant expected (or why none).
    type Case<'a> = (
        &'a str,
        Option<&'a str>,
        Result<&'a str, Option<Unresolved>>,
    );

    /// `text` resolved at OBSERVED with `fallback`, as RFC 3339, or why not.
    fn resolved(text: &str, fallback: Option<&str>) -> Result<String, Option<Unresolved>> {
        let clock = parse(text).ok_or(None)?;
        let fallback = fallback.map(|name| time_zone(name).unwrap());
        resolve(&clock, OBSERVED, fallback.as_ref())
            .map(|ms| jiff::Timestamp::from_millisecond(ms).unwrap().to_string())
            .map_err(Some)
    }

    #[test]
    fn statements_resolve_to_their_next_occurrence_in_their_zone() {
        // 2026-11-30T02:00:00Z is 2026-11-29 23:00 in Santiago (UTC-3 in summer),
        // 21:00 in New York, 11:00 in Tokyo.
        let cases: &[Case] = &[
            ("3pm (America/Santiago)", None, Ok("2026-11-30T18:00:00Z")),
            (
                "12:50am (America/New_York)",
                None,
                Ok("2026-11-30T05:50:00Z"),
            ),
            ("11pm (America/New_York)", None, Ok("2026-11-30T04:00:00Z")),
            // Already past today in New York: tomorrow.
            ("8pm (America/New_York)", None, Ok("2026-12-01T01:00:00Z")),
            ("10:57 PM GMT-3", None, Ok("2026-12-01T01:57:00Z")),
            ("6pm UTC+2.", None, Ok("2026-11-30T16:00:00Z")),
            ("15:00 UTC", None, Ok("2026-11-30T15:00:00Z")),
            ("9am GMT+05:30", None, Ok("2026-11-30T03:30:00Z")),
            // No zone printed: the evidence's.
            ("3pm", Some("Europe/Berlin"), Ok("2026-11-30T14:00:00Z")),
            ("3pm", None, Err(Some(Unresolved::NoZone))),
            // An abbreviation confirms the evidence's zone, or names no instant.
            (
                "3:45 PM PST",
                Some("America/Los_Angeles"),
                Ok("2026-11-30T23:45:00Z"),
            ),
            ("3pm CET", Some("Europe/Berlin"), Ok("2026-11-30T14:00:00Z")),
            (
                "3pm CET",
                Some("America/New_York"),
                Err(Some(Unresolved::Ambiguous)),
            ),
            ("3pm CET", None, Err(Some(Unresolved::Ambiguous))),
            // Offsets are ASCII; anything else after GMT is not one.
            ("3pm GMT+1é1", Some("UTC"), Ok("2026-11-30T15:00:00Z")),
            // Dates: as given, or their next occurrence without a year.
            ("Mar 6, 1pm (Asia/Tokyo)", None, Ok("2027-03-06T04:00:00Z")),
            ("Dec 1, 1pm (Asia/Tokyo)", None, Ok("2026-12-01T04:00:00Z")),
            // A yearless date just past is this year's (a reset in the past).
            ("Nov 29, 11pm (UTC)", None, Ok("2026-11-29T23:00:00Z")),
            // A month not followed by a day is no date, and no time either.
            ("Jan at 3pm (UTC)", None, Err(None)),
            (
                "Jul 5th, 2026 8:19 PM",
                Some("UTC"),
                Ok("2026-07-05T20:19:00Z"),
            ),
            ("Dec 2nd, 2026 8:19 PM", None, Err(Some(Unresolved::NoZone))),
            (
                "12/1/2026, 10:57:00 PM GMT-3",
                None,
                Ok("2026-12-02T01:57:00Z"),
            ),
            ("2026-12-01 at 00:00 UTC", None, Ok("2026-12-01T00:00:00Z")),
            // 2026-11-30 is a Monday.
            (
                "Tuesday at 9am (Europe/London)",
                None,
                Ok("2026-12-01T09:00:00Z"),
            ),
            ("Mon 1am (Europe/London)", None, Ok("2026-12-07T01:00:00Z")),
            ("Mon 3am (Europe/London)", None, Ok("2026-11-30T03:00:00Z")),
            // A word that starts like a month is not one.
            ("decided 3pm", Some("UTC"), Err(None)),
            ("Feb 30, 1pm (UTC)", None, Err(Some(Unresolved::Invalid))),
            // Not a wall-clock time.
            ("in 5 minutes", None, Err(None)),
            ("3 (America/New_York)", None, Err(None)),
            ("25:00 UTC", None, Err(None)),
            ("13pm UTC", None, Err(None)),
        ];
        for (text, fallback, expected) in cases {
            let expected = (*expected).map(str::to_owned);
            assert_eq!(resolved(text, *fallback), expected, "{text}");
        }
    }

    #[test]
    fn a_time_in_a_dst_gap_moves_forward() {
        // 2027-03-14 02:30 does not exist in New York.
        let clock = parse("Mar 14, 2027 2:30am (America/New_York)").unwrap();
        let ms = resolve(&clock, OBSERVED, None).unwrap();
        assert_eq!(
            jiff::Timestamp::from_millisecond(ms).unwrap().to_string(),
            "2027-03-14T07:30:00Z"
        );
    }

    #[test]
    fn a_time_in_a_dst_fold_is_the_earlier_one() {
        // 2026-11-01 01:30 happens twice in New York: first in EDT (UTC-4).
        let clock = parse("Nov 1, 2026 1:30am (America/New_York)").unwrap();
        let ms = resolve(&clock, OBSERVED, None).unwrap();
        assert_eq!(
            jiff::Timestamp::from_millisecond(ms).unwrap().to_string(),
            "2026-11-01T05:30:00Z"
        );
    }

    #[test]
    fn zone_names_come_from_the_bundled_database_only() {
        assert!(time_zone("Europe/Berlin").is_some());
        assert!(time_zone("UTC").is_some());
        assert!(time_zone("/etc/passwd").is_none());
        assert!(time_zone("../../etc/passwd").is_none());
        assert!(time_zone("").is_none());
    }
}
