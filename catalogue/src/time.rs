//! Reading and writing the time formats providers use. Pure: no clock here.

/// Parses an RFC 3339 timestamp into unix milliseconds.
pub(crate) fn parse_rfc3339_ms(text: &str) -> Option<i64> {
    let timestamp: jiff::Timestamp = text.trim().parse().ok()?;
    Some(timestamp.as_millisecond())
}

/// Parses an HTTP-date (`Sun, 06 Nov 1994 08:49:37 GMT`) into unix milliseconds.
pub(crate) fn parse_http_date_ms(text: &str) -> Option<i64> {
    let time = httpdate::parse_http_date(text.trim()).ok()?;
    let since_epoch = time.duration_since(std::time::UNIX_EPOCH).ok()?;
    i64::try_from(since_epoch.as_millis()).ok()
}

/// Formats unix milliseconds as RFC 3339 in UTC (`2026-11-30T02:00:20Z`), or `None`
/// outside the representable range.
pub(crate) fn format_rfc3339(unix_ms: i64) -> Option<String> {
    jiff::Timestamp::from_millisecond(unix_ms)
        .ok()
        .map(|timestamp| timestamp.to_string())
}

/// Parses a non-negative decimal number of `unit_ms` units into whole milliseconds,
/// rounding up so that a retry never fires early. `Err(true)` when negative.
pub(crate) fn parse_number_ms(text: &str, unit_ms: f64) -> Result<u64, bool> {
    let text = text.trim();
    let value: f64 = text.parse().map_err(|_| false)?;
    if !value.is_finite() {
        return Err(false);
    }
    if value < 0.0 {
        return Err(true);
    }
    let milliseconds = (value * unit_ms).ceil();
    if milliseconds > 1e15 {
        return Err(false);
    }
    Ok(milliseconds as u64)
}

/// Parses a Go-style duration (`1s`, `6m0s`, `20ms`, `9m38.016s`, `1h2m`, `0.5s`) or a
/// protobuf duration (`39s`, `20.04466179s`) into milliseconds, rounding up.
/// `Err(true)` when negative, `Err(false)` when unparsable.
pub(crate) fn parse_go_duration_ms(text: &str) -> Result<u64, bool> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('-') {
        return match parse_go_duration_ms(rest) {
            Ok(0) => Ok(0),
            Ok(_) => Err(true),
            Err(_) => Err(false),
        };
    }
    if text.is_empty() {
        return Err(false);
    }
    let bytes = text.as_bytes();
    let mut index = 0;
    let mut total_ms = 0.0_f64;
    while index < bytes.len() {
        let number_start = index;
        while index < bytes.len() && (bytes[index].is_ascii_digit() || bytes[index] == b'.') {
            index += 1;
        }
        if number_start == index {
            return Err(false);
        }
        let number: f64 = text[number_start..index].parse().map_err(|_| false)?;
        let unit_start = index;
        while index < bytes.len() && !(bytes[index].is_ascii_digit() || bytes[index] == b'.') {
            index += 1;
        }
        let unit_ms = match &text[unit_start..index] {
            "h" => 3_600_000.0,
            "m" => 60_000.0,
            "s" => 1_000.0,
            "ms" => 1.0,
            "us" | "µs" => 0.001,
            "ns" => 0.000_001,
            _ => return Err(false),
        };
        total_ms += number * unit_ms;
    }
    if !total_ms.is_finite() || total_ms > 1e15 {
        return Err(false);
    }
    Ok(total_ms.ceil() as u64)
}

/// Parses a spelled-out duration such as `5 days 22 hours 11 minutes`, `~158 min`,
/// `2 hours` or `30 seconds` into milliseconds; stops at the first word that is not a
/// number or a unit. `None` when no number-unit pair was read.
pub(crate) fn parse_spelled_duration_ms(text: &str) -> Option<u64> {
    let mut total_ms = 0.0_f64;
    let mut pending: Option<f64> = None;
    let mut pairs = 0;
    for raw_word in text.split(|c: char| c.is_whitespace() || c == ',') {
        let word = raw_word.trim_matches(|c: char| matches!(c, '~' | '.' | ')' | '(' | ';' | ':'));
        if word.is_empty() || word == "and" {
            continue;
        }
        if let Some(number) = pending {
            let unit_ms = spelled_unit_ms(word)?;
            total_ms += number * unit_ms;
            pairs += 1;
            pending = None;
            continue;
        }
        // A number, optionally glued to its unit (`158min`, `5d`).
        let split = word
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(word.len());
        let Ok(number) = word[..split].parse::<f64>() else {
            break;
        };
        if split == word.len() {
            pending = Some(number);
        } else {
            let Some(unit_ms) = spelled_unit_ms(&word[split..]) else {
                break;
            };
            total_ms += number * unit_ms;
            pairs += 1;
        }
    }
    if pairs == 0 || !total_ms.is_finite() || total_ms > 1e15 {
        return None;
    }
    Some(total_ms.ceil() as u64)
}

fn spelled_unit_ms(word: &str) -> Option<f64> {
    let unit = word.to_ascii_lowercase();
    let unit_ms = match unit.as_str() {
        "d" | "day" | "days" => 86_400_000.0,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000.0,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000.0,
        "ms" | "millisecond" | "milliseconds" => 1.0,
        _ => return None,
    };
    Some(unit_ms)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations() {
        let cases: [(&str, Result<u64, bool>); 14] = [
            ("1s", Ok(1_000)),
            ("6m0s", Ok(360_000)),
            ("20ms", Ok(20)),
            ("9m38.016s", Ok(578_016)),
            ("1h2m", Ok(3_720_000)),
            ("0.5s", Ok(500)),
            ("20.04466179s", Ok(20_045)),
            ("39s", Ok(39_000)),
            ("7.66s", Ok(7_660)),
            ("-1s", Err(true)),
            ("", Err(false)),
            ("soon", Err(false)),
            ("5x", Err(false)),
            ("s", Err(false)),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_go_duration_ms(text), expected, "{text}");
        }
    }

    #[test]
    fn spelled_durations() {
        let cases: [(&str, Option<u64>); 7] = [
            ("5 days 22 hours 11 minutes.", Some(511_860_000)),
            ("4 days 20 hours 9 minutes", Some(418_140_000)),
            ("~158 min", Some(9_480_000)),
            ("30 seconds or so", Some(30_000)),
            ("2 hours and 5 minutes", Some(7_500_000)),
            ("at 9:28 PM", None),
            ("later", None),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_spelled_duration_ms(text), expected, "{text}");
        }
    }

    #[test]
    fn numbers_and_dates() {
        assert_eq!(parse_number_ms("20", 1_000.0), Ok(20_000));
        assert_eq!(parse_number_ms("1.5", 1_000.0), Ok(1_500));
        assert_eq!(parse_number_ms("-3", 1_000.0), Err(true));
        assert_eq!(parse_number_ms("NaN", 1_000.0), Err(false));
        assert_eq!(parse_number_ms("abc", 1.0), Err(false));
        assert_eq!(
            parse_rfc3339_ms("2026-11-30T02:00:20Z"),
            Some(1_796_004_020_000)
        );
        assert_eq!(
            parse_http_date_ms("Mon, 30 Nov 2026 02:00:20 GMT"),
            Some(1_796_004_020_000)
        );
        assert_eq!(
            format_rfc3339(1_796_004_020_000).as_deref(),
            Some("2026-11-30T02:00:20Z")
        );
        assert_eq!(parse_rfc3339_ms("3pm"), None);
    }
}
