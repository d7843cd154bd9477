//! Switchback's provider-error catalogue: deterministic classification of the
//! evidence a failed attempt leaves behind. Server side only.

/// The catalogue version stored with every classification it makes.
pub const CATALOGUE_VERSION: &str = "2026.12.0";

/// The meaning of an HTTP status that arrives with nothing else to read (SPEC 2.4):
/// `(semantic code, class)`, or `None` when the bare status says nothing certain.
///
/// ```
/// assert_eq!(catalogue::bare_status(529), Some(("overloaded", "transient")));
/// assert_eq!(catalogue::bare_status(418), None);
/// ```
pub fn bare_status(status: u16) -> Option<(&'static str, &'static str)> {
    match status {
        408 => Some(("timeout", "transient")),
        429 => Some(("rate_limited", "transient")),
        500 | 502 => Some(("server_error", "transient")),
        503 | 529 => Some(("overloaded", "transient")),
        504 => Some(("timeout", "transient")),
        401 | 403 => Some(("auth_failed", "hard")),
        402 => Some(("insufficient_credits", "hard")),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn well_known_statuses_and_the_rest() {
        for status in [408, 429, 500, 502, 503, 504, 529] {
            assert_eq!(
                super::bare_status(status).map(|(_, class)| class),
                Some("transient"),
                "{status}"
            );
        }
        assert_eq!(super::bare_status(401), Some(("auth_failed", "hard")));
        assert_eq!(super::bare_status(403), Some(("auth_failed", "hard")));
        assert_eq!(
            super::bare_status(402),
            Some(("insufficient_credits", "hard"))
        );
        for status in [200, 400, 404, 418, 501] {
            assert_eq!(super::bare_status(status), None, "{status}");
        }
    }
}
