//! Dynamic profiles on the wire (SPEC 6): what a client sends, what it gets
//! back, and the checks that need no database. The server adds the ones that
//! do (a unique name, providers and candidate ids that exist).

use policy::{
    CEILING_TOKENS_BOUNDS, ErrorCode, EscalationSettings, FieldError, FieldPath,
    MAX_ESCALATIONS_BOUNDS, MAX_TOKENS_BOUNDS, NAME_MAX_CHARS, PolicyDocument, normalize_policy,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use validator::Validate;

use crate::checks::{ID_MAX, MODEL_MAX, field_errors};
use crate::ids::{CandidateId, ProfileId, ProviderId, Revision};
use crate::providers::with_revision;
use crate::time::Timestamp;

// The bound in the type `validator` compares with.
const NAME_MAX: u64 = NAME_MAX_CHARS as u64;

/// The longest a profile may let a gateway call wait by default, in seconds
/// (an hour, as the `x-switchback-deadline-ms` header allows).
pub const GATEWAY_DEADLINE_S_MAX: u32 = 3_600;
const GATEWAY_DEADLINE_MAX: i64 = GATEWAY_DEADLINE_S_MAX as i64;
const MAX_ESCALATIONS_MIN: i64 = MAX_ESCALATIONS_BOUNDS.min as i64;
const MAX_ESCALATIONS_MAX: i64 = MAX_ESCALATIONS_BOUNDS.max as i64;
const CEILING_TOKENS_MIN: i64 = CEILING_TOKENS_BOUNDS.min as i64;
const CEILING_TOKENS_MAX: i64 = CEILING_TOKENS_BOUNDS.max as i64;
const MAX_TOKENS_MIN: i64 = MAX_TOKENS_BOUNDS.min as i64;
const MAX_TOKENS_MAX: i64 = MAX_TOKENS_BOUNDS.max as i64;

/// A policy document as sent: version 2, a version-1 rule map (normalized to
/// version 2), or `null` for the defaults. The policy crate's readers check
/// it number by number; it is the one raw JSON value of the contract.
///
/// ```
/// let sent = api::PolicyInput::new(serde_json::json!({"default": "try_next"}));
/// assert_eq!(sent.normalize(&policy::FieldPath::root()).unwrap().transient.on_exhausted, policy::OnExhausted::Skip);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::PolicyInputSchema))]
pub struct PolicyInput(Value);

impl PolicyInput {
    /// A document as sent.
    pub fn new(document: Value) -> Self {
        Self(document)
    }

    /// The document as sent.
    pub fn as_json(&self) -> &Value {
        &self.0
    }

    /// The version-2 document it normalizes to, or its errors at paths under `path`.
    pub fn normalize(&self, path: &FieldPath) -> Result<PolicyDocument, Vec<FieldError>> {
        normalize_policy(&self.0, path)
    }
}

impl From<PolicyDocument> for PolicyInput {
    fn from(document: PolicyDocument) -> Self {
        Self(serde_json::to_value(document).unwrap_or(Value::Null))
    }
}

/// Token escalation after a `max_tokens` stop, as sent; both fields are
/// required when it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct EscalationRequest {
    /// How many times a truncated answer is sent again with twice the tokens: 0..=3.
    #[validate(range(min = MAX_ESCALATIONS_MIN, max = MAX_ESCALATIONS_MAX))]
    #[cfg_attr(feature = "openapi", schema(minimum = 0, maximum = 3))]
    pub max_escalations: i64,
    /// The most tokens an escalated answer may ask for: 1..=1000000.
    #[validate(range(min = CEILING_TOKENS_MIN, max = CEILING_TOKENS_MAX))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000))]
    pub ceiling_tokens: i64,
}

impl From<EscalationSettings> for EscalationRequest {
    fn from(settings: EscalationSettings) -> Self {
        Self {
            max_escalations: i64::from(settings.max_escalations),
            ceiling_tokens: i64::from(settings.ceiling_tokens),
        }
    }
}

/// One candidate as sent: a candidate without `id` is new; one with an `id`
/// keeps it (the id must belong to the profile).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CandidateRequest {
    /// The candidate's id, to keep it; left out for a new candidate.
    #[validate(length(min = 1, max = ID_MAX))]
    pub id: Option<CandidateId>,
    /// The provider it dispatches to.
    #[validate(length(min = 1, max = ID_MAX))]
    pub provider_id: ProviderId,
    /// The model name, as the provider knows it; stored without surrounding white space.
    #[validate(length(min = 1, max = MODEL_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// The token budget of one answer: 1..=1000000.
    #[validate(range(min = MAX_TOKENS_MIN, max = MAX_TOKENS_MAX))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1_000_000))]
    pub max_tokens: i64,
    /// Token escalation; the defaults (1 escalation, 32768 tokens) when left out.
    #[validate(nested)]
    pub escalation: Option<EscalationRequest>,
    /// The recovery policy; the defaults when left out.
    pub policy: Option<PolicyInput>,
}

/// A dynamic profile to create (`POST /api/profiles`) or the new state of one
/// to update (`PUT /api/profiles/{id}`, which must carry the `revision` it read).
///
/// ```
/// use api::{CandidateRequest, ProfileRequest};
/// let request = ProfileRequest {
///     name: "Coding".into(),
///     revision: None,
///     candidates: vec![CandidateRequest {
///         id: None,
///         provider_id: "p-1".into(),
///         model: "claude-sonnet".into(),
///         enabled: true,
///         max_tokens: 4096,
///         escalation: None,
///         policy: Some(api::PolicyInput::new(serde_json::json!({"default": "try_next"}))),
///     }],
///     gateway_deadline_s: None,
/// };
/// let spec = request.check().unwrap();
/// assert_eq!(spec.candidates[0].policy.hard.on_exhausted, policy::OnExhausted::Skip);
/// assert_eq!(spec.candidates[0].escalation, policy::EscalationSettings::default());
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileRequest {
    /// A name people recognise, unique regardless of case; stored without
    /// surrounding white space.
    #[validate(length(min = 1, max = NAME_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// The revision this update was made from; required by `PUT`, ignored by `POST`.
    #[validate(range(min = 1))]
    pub revision: Option<Revision>,
    /// The candidates, in the order routes try them; at least one.
    #[validate(length(min = 1, message = "needs at least one candidate"), nested)]
    #[cfg_attr(feature = "openapi", schema(min_items = 1))]
    pub candidates: Vec<CandidateRequest>,
    /// How long a gateway call through this profile may wait, in seconds, when
    /// its client does not say (`x-switchback-deadline-ms`): 1..=3600; the
    /// server's default, 120, when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(range(min = 1, max = GATEWAY_DEADLINE_MAX))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3600))]
    pub gateway_deadline_s: Option<i64>,
}

impl crate::read::Request for ProfileRequest {}
impl crate::read::Request for CandidateRequest {}

/// A profile after the checks: trimmed, every policy normalized to version 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileSpec {
    /// See [`ProfileRequest::name`].
    pub name: String,
    /// The candidates, in the user's order.
    pub candidates: Vec<CandidateSpec>,
    /// See [`ProfileRequest::gateway_deadline_s`].
    pub gateway_deadline_s: Option<u32>,
}

/// One candidate after the checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CandidateSpec {
    /// The id sent, for an existing candidate.
    pub id: Option<CandidateId>,
    /// The provider it dispatches to.
    pub provider_id: ProviderId,
    /// The model name.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// The token budget of one answer.
    pub max_tokens: u32,
    /// Token escalation.
    pub escalation: EscalationSettings,
    /// The recovery policy, version 2.
    pub policy: PolicyDocument,
}

impl ProfileRequest {
    /// Every error at once, or the profile these values describe. Lengths
    /// count every character sent; names and models are stored trimmed.
    pub fn check(&self) -> Result<ProfileSpec, Vec<FieldError>> {
        let request = self;
        let root = FieldPath::root();
        let mut errors = field_errors(request.validate(), &root);
        let candidates_path = root.field("candidates");
        let mut candidates = Vec::with_capacity(request.candidates.len());
        for (index, candidate) in request.candidates.iter().enumerate() {
            let path = candidates_path.index(index);
            let policy = match &candidate.policy {
                Some(sent) => sent.normalize(&path.field("policy")),
                None => Ok(PolicyDocument::default()),
            };
            match policy {
                Ok(policy) => candidates.push(CandidateSpec {
                    id: candidate.id.clone(),
                    provider_id: candidate.provider_id.clone(),
                    model: candidate.model.trim().to_owned(),
                    enabled: candidate.enabled,
                    max_tokens: u32::try_from(candidate.max_tokens).unwrap_or(0),
                    escalation: candidate.escalation.map_or_else(
                        EscalationSettings::default,
                        |sent| EscalationSettings {
                            max_escalations: u32::try_from(sent.max_escalations).unwrap_or(0),
                            ceiling_tokens: u32::try_from(sent.ceiling_tokens).unwrap_or(0),
                        },
                    ),
                    policy,
                }),
                Err(found) => errors.extend(found),
            }
        }
        // Ids the client sends must be distinct.
        let mut first_of: std::collections::HashMap<&CandidateId, usize> =
            std::collections::HashMap::new();
        for (index, candidate) in request.candidates.iter().enumerate() {
            let Some(id) = &candidate.id else { continue };
            let first = *first_of.entry(id).or_insert(index);
            if first != index {
                errors.push(FieldError::new(
                    &candidates_path.index(index).field("id"),
                    ErrorCode::Unique,
                    format!("repeats the id of candidate {}", first + 1),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ProfileSpec {
            name: request.name.trim().to_owned(),
            candidates,
            gateway_deadline_s: request
                .gateway_deadline_s
                .and_then(|seconds| u32::try_from(seconds).ok()),
        })
    }

    /// [`ProfileRequest::check`] for an update, with the revision it was
    /// made from (required).
    pub fn check_update(&self) -> Result<(ProfileSpec, Revision), Vec<FieldError>> {
        with_revision(self.check(), self.revision)
    }
}

/// A dynamic profile as the API answers it, candidates in order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProfileView {
    /// Stable id.
    pub id: ProfileId,
    /// Name, unique regardless of case.
    pub name: String,
    /// Send this back with an update.
    pub revision: Revision,
    /// The candidates in the user's order.
    pub candidates: Vec<CandidateView>,
    /// How long a gateway call through it may wait by default, in seconds;
    /// absent: the server's default (120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_deadline_s: Option<u32>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// One candidate, with its stored version-2 policy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CandidateView {
    /// Stable id: send it back to keep the candidate.
    pub id: CandidateId,
    /// The provider it dispatches to.
    pub provider_id: ProviderId,
    /// The model name.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// Token budget of one answer, 1..=1000000.
    pub max_tokens: u32,
    /// Token escalation after a `max_tokens` stop.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::EscalationSchema))]
    pub escalation: EscalationSettings,
    /// The version-2 policy document.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::PolicySchema))]
    pub policy: PolicyDocument,
}

impl From<&CandidateView> for CandidateRequest {
    fn from(view: &CandidateView) -> Self {
        Self {
            id: Some(view.id.clone()),
            provider_id: view.provider_id.clone(),
            model: view.model.clone(),
            enabled: view.enabled,
            max_tokens: i64::from(view.max_tokens),
            escalation: Some(view.escalation.into()),
            policy: Some(view.policy.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::read::Read;

    fn candidate() -> Value {
        json!({"provider_id": "p1", "model": "m", "enabled": true, "max_tokens": 1000})
    }

    fn read(body: &Value) -> Read<ProfileRequest> {
        Read::from_json(body)
    }

    fn errors_of(body: Value) -> Vec<(String, &'static str)> {
        read(&body)
            .check(ProfileRequest::check)
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect()
    }

    fn pairs(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter().map(|(f, c)| ((*f).to_owned(), *c)).collect()
    }

    #[test]
    fn absent_policy_and_escalation_take_the_defaults() {
        let spec = read(&json!({"name": " a ", "candidates": [candidate()]}))
            .check(ProfileRequest::check)
            .unwrap();
        assert_eq!(spec.name, "a");
        assert_eq!(spec.candidates[0].policy, PolicyDocument::default());
        assert_eq!(spec.candidates[0].escalation, EscalationSettings::default());
    }

    #[test]
    fn every_error_with_candidate_paths() {
        let mut second = candidate();
        second["max_tokens"] = json!(1_000_001);
        second["policy"] = json!({"version": 2});
        second["colour"] = json!("red");
        let mut third = candidate();
        third["model"] = json!("  ");
        third["enabled"] = json!("yes");
        assert_eq!(
            errors_of(json!({"name": 7, "candidates": [candidate(), second, third]})),
            pairs(&[
                ("name", "type"),
                ("candidates[1].colour", "unknown_field"),
                ("candidates[1].max_tokens", "range"),
                ("candidates[1].policy.transient", "required"),
                ("candidates[1].policy.hard", "required"),
                ("candidates[2].model", "required"),
                ("candidates[2].enabled", "type"),
            ])
        );
    }

    #[test]
    fn max_tokens_boundaries() {
        for (max_tokens, ok) in [
            (json!(0), false),
            (json!(1), true),
            (json!(1_000_000), true),
            (json!(1_000_001), false),
            (json!(-1), false),
            (json!(1.5), false),
            (json!("10"), false),
        ] {
            let mut one = candidate();
            one["max_tokens"] = max_tokens.clone();
            let result =
                read(&json!({"name": "n", "candidates": [one]})).check(ProfileRequest::check);
            assert_eq!(result.is_ok(), ok, "max_tokens {max_tokens}");
        }
    }

    #[test]
    fn escalation_needs_both_fields_within_bounds() {
        let mut one = candidate();
        one["escalation"] = json!({"max_escalations": 4});
        assert_eq!(
            errors_of(json!({"name": "n", "candidates": [one]})),
            pairs(&[
                ("candidates[0].escalation.max_escalations", "range"),
                ("candidates[0].escalation.ceiling_tokens", "required"),
            ])
        );
    }

    #[test]
    fn repeated_ids_and_missing_fields() {
        let mut first = candidate();
        first["id"] = json!("c1");
        let mut second = candidate();
        second["id"] = json!("c1");
        assert_eq!(
            errors_of(json!({"name": "n", "candidates": [first, second, {}]})),
            pairs(&[
                ("candidates[1].id", "unique"),
                ("candidates[2].provider_id", "required"),
                ("candidates[2].model", "required"),
                ("candidates[2].enabled", "required"),
                ("candidates[2].max_tokens", "required"),
            ])
        );
        assert_eq!(
            errors_of(json!({"candidates": "none", "extra": 1})),
            pairs(&[
                ("extra", "unknown_field"),
                ("name", "required"),
                ("candidates", "type")
            ])
        );
        assert_eq!(
            errors_of(json!({"name": "n", "candidates": []})),
            pairs(&[("candidates", "required")])
        );
    }

    #[test]
    fn revision_is_required_on_update_and_positive() {
        let body = json!({"name": "n", "candidates": [candidate()]});
        assert!(read(&body).check(ProfileRequest::check_update).is_err());
        let mut with_revision = body.clone();
        with_revision["revision"] = json!(3);
        assert_eq!(
            read(&with_revision)
                .check(ProfileRequest::check_update)
                .unwrap()
                .1,
            Revision::new(3)
        );
        with_revision["revision"] = json!(0);
        assert_eq!(
            read(&with_revision)
                .check(ProfileRequest::check_update)
                .unwrap_err()[0]
                .code,
            ErrorCode::Range
        );
    }

    #[test]
    fn a_conflicting_legacy_policy_is_refused_with_its_path() {
        let mut one = candidate();
        one["policy"] = json!({"rate_limited": "retry_same", "overloaded": "try_next"});
        let errors = read(&json!({"name": "n", "candidates": [one]}))
            .check(ProfileRequest::check)
            .unwrap_err();
        assert_eq!(errors[0].field, "candidates[0].policy");
        assert_eq!(errors[0].code, ErrorCode::Conflict);
        assert!(
            errors[0].message.contains("rate_limited") && errors[0].message.contains("overloaded")
        );
    }

    #[test]
    fn a_gateway_deadline_is_seconds_up_to_an_hour() {
        let spec =
            read(&json!({"name": "n", "candidates": [candidate()], "gateway_deadline_s": 600}))
                .check(ProfileRequest::check)
                .unwrap();
        assert_eq!(spec.gateway_deadline_s, Some(600));
        let spec = read(&json!({"name": "n", "candidates": [candidate()]}))
            .check(ProfileRequest::check)
            .unwrap();
        assert_eq!(spec.gateway_deadline_s, None, "the server's default");
        for bad in [0, 3_601, -5] {
            let errors =
                read(&json!({"name": "n", "candidates": [candidate()], "gateway_deadline_s": bad}))
                    .check(ProfileRequest::check)
                    .unwrap_err();
            assert_eq!(errors[0].field, "gateway_deadline_s", "{bad}");
            assert_eq!(errors[0].code, ErrorCode::Range, "{bad}");
        }
    }

    #[test]
    fn a_stored_candidate_sends_back_what_it_is() {
        let view = CandidateView {
            id: "c1".into(),
            provider_id: "p1".into(),
            model: "m".into(),
            enabled: false,
            max_tokens: 10,
            escalation: EscalationSettings::default(),
            policy: PolicyDocument::default(),
        };
        let request = ProfileRequest {
            name: "n".into(),
            revision: Some(Revision::FIRST),
            candidates: vec![CandidateRequest::from(&view)],
            gateway_deadline_s: None,
        };
        let (spec, _) = request.check_update().unwrap();
        assert_eq!(spec.candidates[0].id, Some(view.id.clone()));
        assert_eq!(spec.candidates[0].policy, view.policy);
        assert!(!spec.candidates[0].enabled);
    }
}
