//! The provider's key, read from the environment at call time.
//!
//! The key is never cached, logged, formatted or put into evidence: errors name the
//! variable only, and the header carrying the key is marked sensitive so reqwest's
//! own `Debug` output hides it. It is held for the length of one call, so that
//! whatever the provider sends back (an error message quoting the key, a proxy's
//! page printing the request's headers, a model repeating it) is scrubbed of it
//! before anything else sees it: [`ApiKey::scrub`].

use reqwest::header::{HeaderName, HeaderValue};

/// What replaces the key where a provider echoed it (the catalogue's word for a
/// removed secret).
const REDACTED: &str = "[redacted]";

/// The shortest piece of the key's beginning that is scrubbed from the end of a
/// text: a body cut at its cap, or a stream cut short, can end part-way through
/// an echoed key. Shorter pieces give little of the key away and are too common
/// (`sk-ant-`) to take out of every text that ends with them.
const MIN_TRAILING_PIECE: usize = 8;

/// A key read from the environment; its `Debug` shows no part of it.
pub(crate) struct ApiKey(String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("ApiKey(..)")
    }
}

/// Why a configured key could not be used; the text names the variable, never its value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum KeyError {
    /// The variable is not set.
    #[error("the environment variable {variable} that holds this provider's key is not set")]
    NotSet {
        /// The variable's name.
        variable: String,
    },
    /// The variable is set to nothing (or only spaces).
    #[error("the environment variable {variable} that holds this provider's key is empty")]
    Empty {
        /// The variable's name.
        variable: String,
    },
    /// The value cannot travel in an HTTP header (not visible ASCII).
    #[error(
        "the environment variable {variable} that holds this provider's key has characters an HTTP header cannot carry"
    )]
    NotHeaderSafe {
        /// The variable's name.
        variable: String,
    },
}

/// Reads the key from `variable`, or `None` when no variable is configured.
pub(crate) fn read_key(variable: Option<&str>) -> Result<Option<ApiKey>, KeyError> {
    let Some(variable) = variable else {
        return Ok(None);
    };
    let value = match std::env::var(variable) {
        Ok(value) => value,
        Err(std::env::VarError::NotPresent) => {
            return Err(KeyError::NotSet {
                variable: variable.to_owned(),
            });
        }
        Err(std::env::VarError::NotUnicode(_)) => {
            return Err(KeyError::NotHeaderSafe {
                variable: variable.to_owned(),
            });
        }
    };
    let trimmed = value.trim();
    if trimmed.is_empty() {
        return Err(KeyError::Empty {
            variable: variable.to_owned(),
        });
    }
    // Checked here so a bad key fails with the variable's name, not reqwest's text.
    if HeaderValue::from_str(trimmed).is_err() {
        return Err(KeyError::NotHeaderSafe {
            variable: variable.to_owned(),
        });
    }
    Ok(Some(ApiKey(trimmed.to_owned())))
}

impl ApiKey {
    /// `text` with every trace of the key replaced by `[redacted]`: the key as it
    /// was sent, as a JSON string spells it (a key may hold `"`, `\` or `/`,
    /// which a JSON body escapes, and which the catalogue reads back unescaped),
    /// and a piece of at least eight characters of its beginning that ends the text.
    ///
    /// Shape-based redaction (`catalogue::redact_secrets`) removes what looks like
    /// a key; this removes the key that was actually sent, whatever it looks like.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut scrubbed = text.to_owned();
        for spelling in self.spellings() {
            if scrubbed.contains(spelling.as_str()) {
                scrubbed = scrubbed.replace(spelling.as_str(), REDACTED);
            }
        }
        // The key is visible ASCII (`read_key` checked), so every length is a
        // character boundary.
        let shortest = MIN_TRAILING_PIECE.min(self.0.len());
        if let Some(piece) = (shortest..self.0.len())
            .rev()
            .map(|length| &self.0[..length])
            .find(|piece| scrubbed.ends_with(piece))
        {
            scrubbed.truncate(scrubbed.len() - piece.len());
            scrubbed.push_str(REDACTED);
        }
        scrubbed
    }

    /// A scrubber for text that arrives in pieces (an answer as it streams).
    pub(crate) fn stream_scrubber(&self) -> StreamScrubber<'_> {
        StreamScrubber {
            key: self,
            spellings: self.spellings(),
            held: String::new(),
        }
    }

    /// The key as sent, and as a JSON string escapes it (with and without the
    /// optional escape of `/`), each once.
    fn spellings(&self) -> Vec<String> {
        let quoted = serde_json::to_string(&self.0).expect("a string always serializes");
        let escaped = quoted[1..quoted.len() - 1].to_owned();
        let escaped_solidus = escaped.replace('/', "\\/");
        let mut spellings = vec![self.0.clone()];
        for spelling in [escaped, escaped_solidus] {
            if !spellings.contains(&spelling) {
                spellings.push(spelling);
            }
        }
        spellings
    }

    /// The header carrying the key, marked sensitive: `x-api-key: KEY` or
    /// `authorization: Bearer KEY`.
    pub(crate) fn header(&self, bearer: bool) -> (HeaderName, HeaderValue) {
        let (name, text) = if bearer {
            (reqwest::header::AUTHORIZATION, format!("Bearer {}", self.0))
        } else {
            (HeaderName::from_static("x-api-key"), self.0.clone())
        };
        let mut value =
            HeaderValue::from_str(&text).expect("read_key checked the key fits in a header");
        value.set_sensitive(true);
        (name, value)
    }
}

/// Scrubs the key from text that arrives in pieces: each piece is passed on as
/// soon as no spelling of the key can still complete across it, so what it passes
/// on, joined, is what [`ApiKey::scrub`] makes of the whole text. It holds back only
/// an ending that is the beginning of a spelling of the key (at most the key's
/// length), which in an answer is almost never.
pub(crate) struct StreamScrubber<'k> {
    key: &'k ApiKey,
    spellings: Vec<String>,
    held: String,
}

impl StreamScrubber<'_> {
    /// What of `piece` (after whatever was held back) can be passed on now,
    /// scrubbed; empty when it all may still be part of the key.
    pub(crate) fn push(&mut self, piece: &str) -> String {
        self.held.push_str(piece);
        for spelling in &self.spellings {
            if self.held.contains(spelling.as_str()) {
                self.held = self.held.replace(spelling.as_str(), REDACTED);
            }
        }
        // Every spelling is ASCII (the key is visible ASCII, its escapes too), so
        // an ending equal to the beginning of one starts at a character boundary.
        let hold = self
            .spellings
            .iter()
            .filter_map(|spelling| {
                (1..spelling.len().min(self.held.len() + 1))
                    .rev()
                    .find(|length| self.held.ends_with(&spelling[..*length]))
            })
            .max()
            .unwrap_or(0);
        let kept = self.held.split_off(self.held.len() - hold);
        std::mem::replace(&mut self.held, kept)
    }

    /// What was held back when the text ends, scrubbed as the end of a text is
    /// (a piece of the key's beginning that ends the text is taken out too).
    pub(crate) fn finish(self) -> String {
        self.key.scrub(&self.held)
    }
}

#[cfg(test)]
mod tests {
    use super::{ApiKey, KeyError};

    /// Split anywhere, the pieces a stream scrubber passes on join into what
    /// `scrub` makes of the whole text, and none of them holds the key.
    #[test]
    fn a_streamed_text_is_scrubbed_as_the_whole_text_is() {
        let key = ApiKey("k3yValue0123456789".to_owned());
        let texts = [
            "no key here at all",
            "the key k3yValue0123456789 in the middle",
            "k3yValue0123456789k3yValue0123456789 twice, touching",
            "k3y k3yV k3yValue01234 almost, then k3yValue0123456789",
            "ends on the key's beginning k3yValue012",
            "a JSON spelling \"k3yValue0123456789\" too",
        ];
        for text in texts {
            for first in 0..=text.len() {
                for second in first..=text.len() {
                    let mut scrubber = key.stream_scrubber();
                    let pieces = [
                        scrubber.push(&text[..first]),
                        scrubber.push(&text[first..second]),
                        scrubber.push(&text[second..]),
                        scrubber.finish(),
                    ];
                    assert_eq!(
                        pieces.concat(),
                        key.scrub(text),
                        "{text:?} at {first}, {second}"
                    );
                    for piece in &pieces {
                        assert!(!piece.contains("k3yValue0123456789"), "{piece:?}");
                    }
                }
            }
        }
    }

    /// Each row: a key, a text a provider sent back, and the text once scrubbed.
    #[test]
    fn every_trace_of_the_key_is_scrubbed() {
        let rows: &[(&str, &str, &str)] = &[
            ("k3yValue0123456789", "nothing to see", "nothing to see"),
            (
                "k3yValue0123456789",
                "Incorrect API key provided: k3yValue0123456789.",
                "Incorrect API key provided: [redacted].",
            ),
            (
                "k3yValue0123456789",
                "authorization: Bearer k3yValue0123456789, again k3yValue0123456789",
                "authorization: Bearer [redacted], again [redacted]",
            ),
            // Cut at a body's cap part-way through the key.
            (
                "k3yValue0123456789",
                "credential k3yValue01",
                "credential [redacted]",
            ),
            // A piece shorter than eight characters is left.
            (
                "k3yValue0123456789",
                "ends with k3yValu",
                "ends with k3yValu",
            ),
            // The key's beginning elsewhere than at the end is not the key.
            (
                "k3yValue0123456789",
                "k3yValue01 and more",
                "k3yValue01 and more",
            ),
            // A key with characters a JSON string escapes.
            (
                "ab/cd\\ef\"gh-0123456789",
                r#"{"message":"bad key ab/cd\\ef\"gh-0123456789"}"#,
                r#"{"message":"bad key [redacted]"}"#,
            ),
            (
                "ab/cd\\ef\"gh-0123456789",
                r#"{"message":"bad key ab\/cd\\ef\"gh-0123456789"}"#,
                r#"{"message":"bad key [redacted]"}"#,
            ),
            (
                "ab/cd\\ef\"gh-0123456789",
                "raw ab/cd\\ef\"gh-0123456789 too",
                "raw [redacted] too",
            ),
            // A key shorter than the shortest piece: only whole.
            ("short", "the key: short", "the key: [redacted]"),
            ("short", "the key: shor", "the key: shor"),
        ];
        for (key, text, scrubbed) in rows {
            let key = ApiKey((*key).to_owned());
            assert_eq!(key.scrub(text), *scrubbed, "{text:?}");
        }
    }

    #[test]
    fn debug_and_errors_name_no_key() {
        let key = ApiKey("sk-secret-value".to_owned());
        assert_eq!(format!("{key:?}"), "ApiKey(..)");
        let (_, value) = key.header(true);
        assert!(!format!("{value:?}").contains("sk-secret"));
        let error = KeyError::NotSet {
            variable: "ANTHROPIC_API_KEY".to_owned(),
        };
        assert_eq!(
            error.to_string(),
            "the environment variable ANTHROPIC_API_KEY that holds this provider's key is not set"
        );
    }
}
