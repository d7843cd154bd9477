//! The provider's key, read from the environment at call time.
//!
//! The key is never cached, logged, formatted or put into evidence: errors name the
//! variable only, and the header carrying the key is marked sensitive so reqwest's
//! own `Debug` output hides it.

use reqwest::header::{HeaderName, HeaderValue};

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

#[cfg(test)]
mod tests {
    use super::{ApiKey, KeyError};

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
