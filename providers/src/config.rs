//! How to reach one provider.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::simulated::SimulatedStep;

/// How to reach one provider: what it speaks, whose errors to expect, where it is
/// and which environment variable holds its key. Holds no secret, so it may be
/// logged and stored: the key itself is read from the environment at call time.
///
/// ```
/// let config: providers::ProviderConfig = serde_json::from_value(serde_json::json!({
///     "kind": "anthropic",
///     "family": "anthropic",
///     "base_url": "https://api.anthropic.com",
///     "api_key_env": "ANTHROPIC_API_KEY",
/// })).unwrap();
/// assert_eq!(config.timeouts, providers::Timeouts::default());
/// assert!(config.script.is_empty());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderConfig {
    /// The wire protocol.
    pub kind: policy::ProviderKind,
    /// Whose errors to expect: the `provider` of the evidence a failure leaves.
    pub family: policy::ProviderFamily,
    /// Scheme, host and optional path prefix, without `/v1/...` (`https://api.openai.com`,
    /// `http://localhost:11434`); empty for a simulated provider.
    #[serde(default)]
    pub base_url: String,
    /// The name of the environment variable holding the key (never the key itself);
    /// `None` sends no key (local OpenAI-compatible servers).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// How long to wait for the connection, the first byte and each next event.
    #[serde(default)]
    pub timeouts: Timeouts,
    /// The script of a simulated provider (see [`crate::simulated`]); ignored by the others.
    #[serde(default)]
    pub script: Vec<SimulatedStep>,
    /// What a `cli` provider runs (see [`crate::cli`]); ignored by the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli: Option<policy::CliConfig>,
}

impl ProviderConfig {
    /// A simulated provider that plays `script`, with the kind's default family.
    ///
    /// ```
    /// let config = providers::ProviderConfig::simulated(Vec::new());
    /// assert_eq!(config.family, policy::ProviderFamily::OpenaiCompatible);
    /// ```
    pub fn simulated(script: Vec<SimulatedStep>) -> Self {
        Self {
            kind: policy::ProviderKind::Simulated,
            family: policy::ProviderKind::Simulated.default_family(),
            base_url: String::new(),
            api_key_env: None,
            timeouts: Timeouts::default(),
            script,
            cli: None,
        }
    }
}

/// How long a call may wait at each stage, in milliseconds. A stage that takes
/// longer fails the call with `Transport::Timeout`.
///
/// ```
/// let timeouts: providers::Timeouts = serde_json::from_str(r#"{"idle_ms": 5000}"#).unwrap();
/// assert_eq!(timeouts.idle_ms, 5_000);
/// assert_eq!(timeouts.first_byte_ms, 120_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Timeouts {
    /// Opening the connection: the TCP connect and, for `https`, the TLS handshake.
    pub connect_ms: u64,
    /// From sending the request until the response headers and the first event of the
    /// stream have both arrived (a model may think a long while before its first token).
    pub first_byte_ms: u64,
    /// The longest gap between two events of the stream (keep-alive pings count), and
    /// how long a simulated `hang` waits.
    pub idle_ms: u64,
}

impl Default for Timeouts {
    fn default() -> Self {
        Self {
            connect_ms: 10_000,
            first_byte_ms: 120_000,
            idle_ms: 60_000,
        }
    }
}

impl Timeouts {
    /// `connect_ms` as a duration.
    pub fn connect(&self) -> Duration {
        Duration::from_millis(self.connect_ms)
    }

    /// `first_byte_ms` as a duration.
    pub fn first_byte(&self) -> Duration {
        Duration::from_millis(self.first_byte_ms)
    }

    /// `idle_ms` as a duration.
    pub fn idle(&self) -> Duration {
        Duration::from_millis(self.idle_ms)
    }
}
