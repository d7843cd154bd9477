//! Semantic codes and their classes (SPEC 2.2).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// How Switchback treats a failure: the class decides which policy section applies.
///
/// ```
/// use policy::{Class, SemanticCode};
/// assert_eq!(Class::Transient.as_str(), "transient");
/// assert!(Class::Hard.codes().contains(&SemanticCode::AuthFailed));
/// assert!(!Class::Outside.is_recoverable());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// Passing trouble on the provider's side or the network: retrying may help.
    Transient,
    /// A condition that persists until someone or something changes it (a limit resets,
    /// a key is fixed): retrying soon rarely helps, another candidate may.
    Hard,
    /// The failure lies outside what recovery can fix (the request itself, a filter, an
    /// unknown error): never recovered automatically.
    Outside,
}

impl Class {
    /// Every class, in SPEC order.
    ///
    /// ```
    /// assert_eq!(policy::Class::ALL.map(|class| class.as_str()), ["transient", "hard", "outside"]);
    /// ```
    pub const ALL: [Class; 3] = [Class::Transient, Class::Hard, Class::Outside];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::Class::Outside.as_str(), "outside");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Hard => "hard",
            Self::Outside => "outside",
        }
    }

    /// The codes of this class, in SPEC order.
    ///
    /// ```
    /// use policy::{Class, SemanticCode};
    /// assert_eq!(Class::Transient.codes().len(), 5);
    /// assert_eq!(Class::Outside.codes().last(), Some(&SemanticCode::Unknown));
    /// ```
    pub fn codes(self) -> &'static [SemanticCode] {
        let all = &SemanticCode::ALL;
        match self {
            Self::Transient => &all[0..5],
            Self::Hard => &all[5..12],
            Self::Outside => &all[12..17],
        }
    }

    /// Whether a policy section governs this class (`transient` and `hard`); `outside`
    /// codes are never recovered automatically.
    ///
    /// ```
    /// assert!(policy::Class::Hard.is_recoverable());
    /// ```
    pub fn is_recoverable(self) -> bool {
        self != Self::Outside
    }

    /// A one-line explanation for the editor's section headings.
    ///
    /// ```
    /// assert!(policy::Class::Transient.explanation().contains("retry"));
    /// ```
    pub fn explanation(self) -> &'static str {
        match self {
            Self::Transient => {
                "Passing trouble such as overload, rate limits, outages, network errors and timeouts: a retry after a pause often succeeds."
            }
            Self::Hard => {
                "Conditions that last until something changes, such as a usage limit, quota, credits, a bad key or a missing model: usually better to move to the next candidate."
            }
            Self::Outside => {
                "Failures recovery cannot fix, such as a bad request, an over-long context, a content filter or an unknown error: Switchback stops or asks a person."
            }
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

/// The catalogue's verdict on what went wrong, independent of the provider (SPEC 2.2).
/// Every code has exactly one [`Class`].
///
/// ```
/// use policy::{Class, SemanticCode};
/// let code: SemanticCode = "rate_limited".parse().unwrap();
/// assert_eq!(code, SemanticCode::RateLimited);
/// assert_eq!(code.class(), Class::Transient);
/// assert_eq!(code.family(), Some("throttling"));
/// assert_eq!(serde_json::to_value(code).unwrap(), "rate_limited");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SemanticCode {
    /// The provider is over capacity.
    Overloaded,
    /// Too many requests or tokens for the current rate limit.
    RateLimited,
    /// The provider failed internally.
    ServerError,
    /// The connection failed or broke.
    Network,
    /// The provider or the connection took too long.
    Timeout,
    /// A subscription's usage window is used up.
    UsageLimited,
    /// A quota is used up until it resets.
    QuotaExhausted,
    /// The account has no credits or a billing problem.
    InsufficientCredits,
    /// The key is wrong, expired, or lacks permission.
    AuthFailed,
    /// No key was configured.
    CredentialsMissing,
    /// The model does not exist, is retired, or is not enabled.
    ModelUnavailable,
    /// The provider is set up wrongly: base URL, unsupported parameter, region.
    ProviderMisconfigured,
    /// The caller's input is invalid.
    InvalidRequest,
    /// The conversation is longer than the model's context.
    ContextLengthExceeded,
    /// A content filter refused the request or the answer.
    ContentFiltered,
    /// The request was cancelled.
    Cancelled,
    /// The evidence matched nothing in the catalogue.
    Unknown,
}

/// The name given to [`SemanticCode::from_str`] is not a semantic code.
///
/// ```
/// let error = "teapot".parse::<policy::SemanticCode>().unwrap_err();
/// assert_eq!(error.to_string(), "`teapot` is not a semantic code");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a semantic code")]
pub struct UnknownCode(pub String);

impl SemanticCode {
    /// Every code, grouped by class in SPEC order: transient, hard, outside.
    ///
    /// ```
    /// use policy::SemanticCode;
    /// assert_eq!(SemanticCode::ALL.len(), 17);
    /// assert_eq!(SemanticCode::ALL[0], SemanticCode::Overloaded);
    /// ```
    pub const ALL: [SemanticCode; 17] = [
        Self::Overloaded,
        Self::RateLimited,
        Self::ServerError,
        Self::Network,
        Self::Timeout,
        Self::UsageLimited,
        Self::QuotaExhausted,
        Self::InsufficientCredits,
        Self::AuthFailed,
        Self::CredentialsMissing,
        Self::ModelUnavailable,
        Self::ProviderMisconfigured,
        Self::InvalidRequest,
        Self::ContextLengthExceeded,
        Self::ContentFiltered,
        Self::Cancelled,
        Self::Unknown,
    ];

    /// The snake_case name, as in JSON and in legacy rule maps.
    ///
    /// ```
    /// assert_eq!(policy::SemanticCode::ContextLengthExceeded.as_str(), "context_length_exceeded");
    /// ```
    pub fn as_str(self) -> &'static str {
        self.facts().0
    }

    /// The one class this code belongs to.
    ///
    /// ```
    /// use policy::{Class, SemanticCode};
    /// assert_eq!(SemanticCode::QuotaExhausted.class(), Class::Hard);
    /// assert_eq!(SemanticCode::Unknown.class(), Class::Outside);
    /// ```
    pub fn class(self) -> Class {
        self.facts().1
    }

    /// The family the SPEC names in brackets (e.g. `capacity` for `overloaded`), if any.
    ///
    /// ```
    /// use policy::SemanticCode;
    /// assert_eq!(SemanticCode::Overloaded.family(), Some("capacity"));
    /// assert_eq!(SemanticCode::Network.family(), None);
    /// ```
    pub fn family(self) -> Option<&'static str> {
        self.facts().2
    }

    /// A one-line explanation an editor shows next to the code.
    ///
    /// ```
    /// assert!(policy::SemanticCode::UsageLimited.explanation().contains("subscription"));
    /// ```
    pub fn explanation(self) -> &'static str {
        self.facts().3
    }

    /// (name, class, family, explanation): one row per code keeps them in one place.
    #[rustfmt::skip]
    fn facts(self) -> (&'static str, Class, Option<&'static str>, &'static str) {
        use Class::{Hard, Outside, Transient};
        match self {
            Self::Overloaded => ("overloaded", Transient, Some("capacity"), "The provider is over capacity right now."),
            Self::RateLimited => ("rate_limited", Transient, Some("throttling"), "Too many requests or tokens for the current rate limit."),
            Self::ServerError => ("server_error", Transient, Some("outage"), "The provider failed internally or is having an outage."),
            Self::Network => ("network", Transient, None, "The connection was refused, reset, or closed early."),
            Self::Timeout => ("timeout", Transient, None, "The provider or the connection took too long to answer."),
            Self::UsageLimited => ("usage_limited", Hard, Some("subscription window"), "A subscription's usage window is used up until it resets."),
            Self::QuotaExhausted => ("quota_exhausted", Hard, Some("quota with reset"), "A quota is used up until its stated reset."),
            Self::InsufficientCredits => ("insufficient_credits", Hard, Some("credits/billing"), "The account is out of credits or has a billing problem."),
            Self::AuthFailed => ("auth_failed", Hard, Some("bad/expired key, permission"), "The API key is wrong, expired, or not allowed to do this."),
            Self::CredentialsMissing => ("credentials_missing", Hard, None, "No API key is configured for this provider."),
            Self::ModelUnavailable => ("model_unavailable", Hard, Some("not found, retired, not enabled"), "The model does not exist, is retired, or is not enabled for this account."),
            Self::ProviderMisconfigured => ("provider_misconfigured", Hard, Some("bad base URL, unsupported parameter for that provider, region"), "The provider is set up wrongly: base URL, an unsupported parameter, or region."),
            Self::InvalidRequest => ("invalid_request", Outside, Some("the caller's input"), "The request itself is invalid; sending it elsewhere will not help."),
            Self::ContextLengthExceeded => ("context_length_exceeded", Outside, None, "The conversation is longer than the model's context window."),
            Self::ContentFiltered => ("content_filtered", Outside, None, "A content filter refused the request or the answer."),
            Self::Cancelled => ("cancelled", Outside, None, "The request was cancelled."),
            Self::Unknown => ("unknown", Outside, None, "The error matched nothing known; Switchback stops rather than guesses."),
        }
    }
}

impl fmt::Display for SemanticCode {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str(self.as_str())
    }
}

impl FromStr for SemanticCode {
    type Err = UnknownCode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
            .ok_or_else(|| UnknownCode(name.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::{Class, SemanticCode};

    /// SPEC 2.2, one row per code: (code, class, family).
    const TABLE: [(&str, Class, Option<&str>); 17] = [
        ("overloaded", Class::Transient, Some("capacity")),
        ("rate_limited", Class::Transient, Some("throttling")),
        ("server_error", Class::Transient, Some("outage")),
        ("network", Class::Transient, None),
        ("timeout", Class::Transient, None),
        ("usage_limited", Class::Hard, Some("subscription window")),
        ("quota_exhausted", Class::Hard, Some("quota with reset")),
        ("insufficient_credits", Class::Hard, Some("credits/billing")),
        (
            "auth_failed",
            Class::Hard,
            Some("bad/expired key, permission"),
        ),
        ("credentials_missing", Class::Hard, None),
        (
            "model_unavailable",
            Class::Hard,
            Some("not found, retired, not enabled"),
        ),
        (
            "provider_misconfigured",
            Class::Hard,
            Some("bad base URL, unsupported parameter for that provider, region"),
        ),
        (
            "invalid_request",
            Class::Outside,
            Some("the caller's input"),
        ),
        ("context_length_exceeded", Class::Outside, None),
        ("content_filtered", Class::Outside, None),
        ("cancelled", Class::Outside, None),
        ("unknown", Class::Outside, None),
    ];

    #[test]
    fn every_code_has_exactly_one_class() {
        assert_eq!(SemanticCode::ALL.len(), TABLE.len());
        for (code, (name, class, family)) in SemanticCode::ALL.into_iter().zip(TABLE) {
            assert_eq!(code.as_str(), name);
            assert_eq!(code.class(), class, "{name}");
            assert_eq!(code.family(), family, "{name}");
            assert!(!code.explanation().is_empty(), "{name}");
            assert_eq!(name.parse::<SemanticCode>(), Ok(code));
            assert_eq!(serde_json::to_value(code).unwrap(), name);
            assert_eq!(
                serde_json::from_value::<SemanticCode>(name.into()).unwrap(),
                code
            );
            // Exactly one class lists the code.
            let listing: Vec<Class> = Class::ALL
                .into_iter()
                .filter(|class| class.codes().contains(&code))
                .collect();
            assert_eq!(listing, vec![class], "{name}");
        }
    }

    #[test]
    fn classes_partition_the_codes() {
        let total: usize = Class::ALL.iter().map(|class| class.codes().len()).sum();
        assert_eq!(total, SemanticCode::ALL.len());
        for class in Class::ALL {
            assert!(
                class.codes().iter().all(|code| code.class() == class),
                "{class}"
            );
            assert_eq!(serde_json::to_value(class).unwrap(), class.as_str());
        }
        assert!("Overloaded".parse::<SemanticCode>().is_err());
        assert!("default".parse::<SemanticCode>().is_err());
    }
}
