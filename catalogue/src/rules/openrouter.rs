//! OpenRouter's own errors (`{"error":{"code","message","metadata"}}`); an upstream
//! provider's error nested in `error.metadata.raw` is classified by that provider's
//! rules first. Source: <https://openrouter.ai/docs/errors>.

use policy::SemanticCode::*;

use super::{Rule, rule};

#[rustfmt::skip]
pub(crate) const RULES: &[Rule] = &[
    rule("openrouter.insufficient_credits", InsufficientCredits).text(&["insufficient credits"]),
    rule("openrouter.requires_more_credits", InsufficientCredits).text(&["requires more credits"]),
    rule("openrouter.input_flagged", ContentFiltered).text(&["input was flagged"]),
    rule("openrouter.no_endpoints_support", ProviderMisconfigured).text(&["no endpoints found that support"]),
    rule("openrouter.no_endpoints_data_policy", ProviderMisconfigured).text(&["no endpoints found matching your data policy"]),
    rule("openrouter.no_endpoints", ModelUnavailable).text(&["no endpoints found for"]),
    rule("openrouter.not_a_valid_model", ModelUnavailable).text(&["is not a valid model id"]),
    rule("openrouter.rate_limited_upstream", RateLimited).text(&["rate-limited upstream"]),
    rule("openrouter.no_auth_credentials", CredentialsMissing).text(&["no auth credentials found"]),
    rule("openrouter.user_not_found", AuthFailed).text(&["user not found"]),
];
