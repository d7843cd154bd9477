//! Where provider keys come from: environment variables, named by providers
//! and read through one injected [`Secrets`], so tests never depend on the
//! host's environment. A key's value never leaves this module's callers'
//! hands: pages and answers only say whether a variable is set.

use std::collections::BTreeMap;

/// The source of provider keys.
pub trait Secrets: Send + Sync + 'static {
    /// The value of the variable `name`, when it is set and not empty.
    fn read(&self, name: &str) -> Option<String>;

    /// Whether the variable `name` is set and not empty.
    fn is_set(&self, name: &str) -> bool {
        self.read(name).is_some()
    }
}

/// The process environment: what `switchback serve` uses.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProcessSecrets;

impl Secrets for ProcessSecrets {
    fn read(&self, name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|value| !value.is_empty())
    }
}

/// A fixed set of variables: what tests use.
///
/// ```
/// use server::secrets::{FixedSecrets, Secrets};
/// let secrets = FixedSecrets::new([("ANTHROPIC_API_KEY", "sk-test"), ("EMPTY_API_KEY", "")]);
/// assert!(secrets.is_set("ANTHROPIC_API_KEY"));
/// assert!(!secrets.is_set("EMPTY_API_KEY"));
/// assert!(!secrets.is_set("OPENAI_API_KEY"));
/// ```
#[derive(Debug, Default, Clone)]
pub struct FixedSecrets {
    values: BTreeMap<String, String>,
}

impl FixedSecrets {
    /// Exactly these variables.
    pub fn new<'a>(values: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        Self {
            values: values
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        }
    }
}

impl Secrets for FixedSecrets {
    fn read(&self, name: &str) -> Option<String> {
        self.values
            .get(name)
            .filter(|value| !value.is_empty())
            .cloned()
    }
}
