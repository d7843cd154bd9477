//! The profile editor's state: what the user typed, field by field, and its
//! translation to the typed request the `api` crate checks exactly as the
//! server does. Numbers stay text until then: the form reads its own number
//! fields (a "1.5" or an empty one is its error), and a policy's numbers go
//! to the policy crate's readers as typed, so they get its messages.
//!
//! Every input's `name` is its field path (`candidates[1].policy.hard.retry.max_retries`),
//! the same path validation errors carry: a plain form post and an error
//! list both address fields by it.

use api::read::Read;
use api::{
    CandidateId, CandidateRequest, CandidateView, ErrorCode, EscalationRequest, FieldError,
    FieldPath, PolicyInput, ProfileId, ProfileRequest, ProfileView, ProviderId, Revision,
};
use policy::{
    EscalationSettings, INITIAL_INTERVAL_MS_BOUNDS, JITTER_PCT_BOUNDS, MAX_RETRIES_BOUNDS,
    MAX_WAIT_S_BOUNDS, OnExhausted, PolicyDocument, PolicySection, SectionClass,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::context::ProviderChoice;

/// A default token budget for a new candidate.
pub const NEW_CANDIDATE_MAX_TOKENS: u32 = 4_096;

/// The whole form.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileForm {
    /// The stored profile's id; `None` while it is a new draft.
    pub id: Option<ProfileId>,
    /// The revision the form was loaded at (updates send it back).
    pub revision: Option<Revision>,
    /// The profile name as typed.
    pub name: String,
    /// The gateway deadline in seconds as typed; empty for the server's default.
    pub gateway_deadline_s: String,
    /// The candidates in order.
    pub candidates: Vec<CandidateForm>,
    /// The next unused [`CandidateForm::key`].
    pub next_key: u32,
}

/// One candidate card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CandidateForm {
    /// Identity within this editing session (DOM ids, keyed lists); not stored.
    pub key: u32,
    /// The stored candidate id; `None` for a candidate added in this form.
    pub id: Option<CandidateId>,
    /// The chosen provider's id (empty when there is no provider to choose).
    pub provider_id: ProviderId,
    /// The model name as typed.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// Max tokens as typed.
    pub max_tokens: String,
    /// Max escalations as typed.
    pub max_escalations: String,
    /// Escalation ceiling as typed.
    pub ceiling_tokens: String,
    /// The transient section.
    pub transient: SectionForm,
    /// The hard section.
    pub hard: SectionForm,
}

/// One policy section as typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SectionForm {
    /// The `Retry` checkbox.
    pub retry_enabled: bool,
    /// `Max retries` as typed.
    pub max_retries: String,
    /// `Initial interval (ms)` as typed.
    pub initial_interval_ms: String,
    /// `Jitter (%)` as typed; left empty it is 0, as the document reads it.
    pub jitter_pct: String,
    /// The `Wait for reset` checkbox.
    pub reset_wait_enabled: bool,
    /// `Max wait (s)` as typed.
    pub max_wait_s: String,
    /// `skip` or `stop`.
    pub on_exhausted: String,
}

impl SectionForm {
    fn from_section(section: &PolicySection) -> Self {
        Self {
            retry_enabled: section.retry.enabled,
            max_retries: section.retry.max_retries.to_string(),
            initial_interval_ms: section.retry.initial_interval_ms.to_string(),
            jitter_pct: section.retry.jitter_pct.to_string(),
            reset_wait_enabled: section.reset_wait.enabled,
            max_wait_s: section.reset_wait.max_wait_s.to_string(),
            on_exhausted: section.on_exhausted.as_str().to_owned(),
        }
    }

    /// The section these values describe, if every number is a valid one.
    pub fn parsed(&self) -> Option<PolicySection> {
        let max_retries = parse_within(&self.max_retries, MAX_RETRIES_BOUNDS)?;
        let mut section = PolicySection::transient_default();
        section.retry.enabled = self.retry_enabled;
        section.retry.max_retries = u32::try_from(max_retries).ok()?;
        section.retry.initial_interval_ms =
            parse_within(&self.initial_interval_ms, INITIAL_INTERVAL_MS_BOUNDS)?;
        section.retry.jitter_pct = if self.jitter_pct.trim().is_empty() {
            0
        } else {
            u32::try_from(parse_within(&self.jitter_pct, JITTER_PCT_BOUNDS)?).ok()?
        };
        section.reset_wait.enabled = self.reset_wait_enabled;
        section.reset_wait.max_wait_s = parse_within(&self.max_wait_s, MAX_WAIT_S_BOUNDS)?;
        section.on_exhausted = match self.on_exhausted.as_str() {
            "skip" => OnExhausted::Skip,
            "stop" => OnExhausted::Stop,
            _ => return None,
        };
        Some(section)
    }

    fn to_json(&self) -> Value {
        let mut retry = Map::new();
        retry.insert("enabled".into(), Value::Bool(self.retry_enabled));
        insert_number(&mut retry, "max_retries", &self.max_retries);
        insert_number(&mut retry, "initial_interval_ms", &self.initial_interval_ms);
        insert_number(&mut retry, "jitter_pct", &self.jitter_pct);
        let mut reset_wait = Map::new();
        reset_wait.insert("enabled".into(), Value::Bool(self.reset_wait_enabled));
        insert_number(&mut reset_wait, "max_wait_s", &self.max_wait_s);
        json!({
            "retry": retry,
            "reset_wait": reset_wait,
            "on_exhausted": self.on_exhausted,
        })
    }
}

fn parse_within(text: &str, bounds: policy::Bounds) -> Option<u64> {
    text.trim()
        .parse::<u64>()
        .ok()
        .filter(|value| bounds.contains(*value))
}

/// A number field as JSON: an integer when the text is one, else the text
/// itself (so validation reports its type), and nothing when empty (so
/// validation reports it required).
fn insert_number(map: &mut Map<String, Value>, name: &str, text: &str) {
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    let value = match serde_json::from_str::<Value>(text) {
        Ok(number @ Value::Number(_)) => number,
        _ => Value::String(text.to_owned()),
    };
    map.insert(name.to_owned(), value);
}

/// A number field of the request, read from its text as the API reads a
/// JSON number ([`policy::json_integer`]); what does not read is recorded at
/// `path` and stands as 0 (the record is what is reported).
fn whole_number(text: &str, path: &FieldPath, errors: &mut Vec<FieldError>) -> i64 {
    let text = text.trim();
    if text.is_empty() {
        errors.push(FieldError::new(path, ErrorCode::Required, "is required"));
        return 0;
    }
    let json = serde_json::from_str::<Value>(text).unwrap_or(Value::Null);
    let (code, message) = match policy::json_integer(&json) {
        policy::JsonInteger::Integer(integer) => match i64::try_from(integer) {
            Ok(number) => return number,
            Err(_) => (ErrorCode::Range, "is out of range"),
        },
        policy::JsonInteger::OutOfRange => (ErrorCode::Range, "is out of range"),
        policy::JsonInteger::Fraction => (ErrorCode::Type, "must be an integer, not a fraction"),
        policy::JsonInteger::NotANumber => (ErrorCode::Type, "must be an integer"),
    };
    errors.push(FieldError::new(path, code, message));
    0
}

impl CandidateForm {
    /// A new candidate with the default policy on `provider_id`.
    pub fn new(key: u32, provider_id: ProviderId) -> Self {
        let escalation = EscalationSettings::default();
        let policy = PolicyDocument::default();
        Self {
            key,
            id: None,
            provider_id,
            model: String::new(),
            enabled: true,
            max_tokens: NEW_CANDIDATE_MAX_TOKENS.to_string(),
            max_escalations: escalation.max_escalations.to_string(),
            ceiling_tokens: escalation.ceiling_tokens.to_string(),
            transient: SectionForm::from_section(&policy.transient),
            hard: SectionForm::from_section(&policy.hard),
        }
    }

    fn from_view(key: u32, view: &CandidateView) -> Self {
        Self {
            key,
            id: Some(view.id.clone()),
            provider_id: view.provider_id.clone(),
            model: view.model.clone(),
            enabled: view.enabled,
            max_tokens: view.max_tokens.to_string(),
            max_escalations: view.escalation.max_escalations.to_string(),
            ceiling_tokens: view.escalation.ceiling_tokens.to_string(),
            transient: SectionForm::from_section(&view.policy.transient),
            hard: SectionForm::from_section(&view.policy.hard),
        }
    }

    /// The section of `class`.
    pub fn section(&self, class: SectionClass) -> &SectionForm {
        match class {
            SectionClass::Transient => &self.transient,
            SectionClass::Hard => &self.hard,
        }
    }

    /// The section of `class`, to change.
    pub fn section_mut(&mut self, class: SectionClass) -> &mut SectionForm {
        match class {
            SectionClass::Transient => &mut self.transient,
            SectionClass::Hard => &mut self.hard,
        }
    }

    /// The request this card makes, and the errors of its number fields
    /// (which read as 0 when they do not parse), at paths under `path`.
    fn request(&self, path: &FieldPath, errors: &mut Vec<FieldError>) -> CandidateRequest {
        let escalation = path.field("escalation");
        CandidateRequest {
            id: self.id.clone(),
            provider_id: self.provider_id.clone(),
            model: self.model.clone(),
            enabled: self.enabled,
            max_tokens: whole_number(&self.max_tokens, &path.field("max_tokens"), errors),
            escalation: Some(EscalationRequest {
                max_escalations: whole_number(
                    &self.max_escalations,
                    &escalation.field("max_escalations"),
                    errors,
                ),
                ceiling_tokens: whole_number(
                    &self.ceiling_tokens,
                    &escalation.field("ceiling_tokens"),
                    errors,
                ),
            }),
            policy: Some(PolicyInput::new(json!({
                "version": 2,
                "transient": self.transient.to_json(),
                "hard": self.hard.to_json(),
            }))),
        }
    }
}

impl ProfileForm {
    /// A new profile: one candidate on the first provider.
    pub fn new_draft(providers: &[ProviderChoice]) -> Self {
        let provider_id = providers
            .first()
            .map_or_else(|| ProviderId::new(""), |p| p.id.clone());
        Self {
            id: None,
            revision: None,
            name: String::new(),
            gateway_deadline_s: String::new(),
            candidates: vec![CandidateForm::new(0, provider_id)],
            next_key: 1,
        }
    }

    /// The form for a stored profile.
    pub fn from_view(view: &ProfileView) -> Self {
        let candidates: Vec<CandidateForm> = view
            .candidates
            .iter()
            .zip(0..)
            .map(|(candidate, key)| CandidateForm::from_view(key, candidate))
            .collect();
        Self {
            id: Some(view.id.clone()),
            revision: Some(view.revision),
            name: view.name.clone(),
            gateway_deadline_s: view
                .gateway_deadline_s
                .map(|seconds| seconds.to_string())
                .unwrap_or_default(),
            next_key: u32::try_from(candidates.len()).unwrap_or(u32::MAX),
            candidates,
        }
    }

    /// The request these values make, and the errors of the number fields
    /// that do not parse.
    pub fn request(&self) -> (ProfileRequest, Vec<FieldError>) {
        let mut errors = Vec::new();
        let candidates_path = FieldPath::root().field("candidates");
        let candidates = self
            .candidates
            .iter()
            .enumerate()
            .map(|(index, candidate)| candidate.request(&candidates_path.index(index), &mut errors))
            .collect();
        // Empty is "the server's default"; anything else must be a number.
        let deadline = self.gateway_deadline_s.trim();
        let gateway_deadline_s = (!deadline.is_empty()).then(|| {
            whole_number(
                deadline,
                &FieldPath::root().field("gateway_deadline_s"),
                &mut errors,
            )
        });
        let request = ProfileRequest {
            name: self.name.clone(),
            revision: self.revision,
            candidates,
            gateway_deadline_s,
        };
        (request, errors)
    }

    /// The request, ready for the checks (the same as the server's).
    pub fn to_request(&self) -> Read<ProfileRequest> {
        let (request, errors) = self.request();
        Read::built(&request, errors)
    }

    /// Every field error, from the same checks the server runs.
    pub fn validate(&self) -> Vec<FieldError> {
        let updating = self.id.is_some();
        self.to_request()
            .check(|request| match updating {
                true => request.check_update().map(drop),
                false => request.check().map(drop),
            })
            .err()
            .unwrap_or_default()
    }

    /// The candidate with `key`.
    pub fn candidate(&self, key: u32) -> Option<&CandidateForm> {
        self.candidates
            .iter()
            .find(|candidate| candidate.key == key)
    }

    /// The candidate with `key`, to change.
    pub fn candidate_mut(&mut self, key: u32) -> Option<&mut CandidateForm> {
        self.candidates
            .iter_mut()
            .find(|candidate| candidate.key == key)
    }

    /// Where the candidate with `key` stands (0-based).
    pub fn position(&self, key: u32) -> Option<usize> {
        self.candidates
            .iter()
            .position(|candidate| candidate.key == key)
    }

    /// The model of the next enabled candidate after `key`, if any: where a
    /// skip goes.
    pub fn next_enabled_model(&self, key: u32) -> Option<String> {
        let position = self.position(key)?;
        self.candidates[position + 1..]
            .iter()
            .find(|candidate| candidate.enabled)
            .map(|candidate| display_model(&candidate.model))
    }

    /// Apply a structural edit (add, move, remove).
    pub fn apply(&mut self, op: &EditOp, providers: &[ProviderChoice]) {
        match *op {
            EditOp::Add => {
                let provider_id = self
                    .candidates
                    .last()
                    .map(|candidate| candidate.provider_id.clone())
                    .or_else(|| providers.first().map(|p| p.id.clone()))
                    .unwrap_or_else(|| ProviderId::new(""));
                self.candidates
                    .push(CandidateForm::new(self.next_key, provider_id));
                self.next_key += 1;
            }
            EditOp::MoveUp(position) if position > 0 && position < self.candidates.len() => {
                self.candidates.swap(position - 1, position);
            }
            EditOp::MoveDown(position) if position + 1 < self.candidates.len() => {
                self.candidates.swap(position, position + 1);
            }
            EditOp::Remove(position) if position < self.candidates.len() => {
                self.candidates.remove(position);
            }
            _ => {}
        }
    }

    /// The form a plain HTML post describes (no JavaScript): inputs are named
    /// by their field paths; an unchecked checkbox is simply absent.
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form = Self {
            id: None,
            revision: None,
            name: String::new(),
            gateway_deadline_s: String::new(),
            candidates: Vec::new(),
            next_key: 0,
        };
        for (name, value) in pairs {
            match name.as_str() {
                "id" => {
                    form.id = Some(value.trim())
                        .filter(|id| !id.is_empty())
                        .map(ProfileId::new)
                }
                "revision" => form.revision = value.trim().parse().ok().map(Revision::new),
                "name" => form.name.clone_from(value),
                "gateway_deadline_s" => form.gateway_deadline_s.clone_from(value),
                _ => {
                    if let Some((index, rest)) = split_candidate(name) {
                        // Bounded: a post cannot make the form grow without limit.
                        if index < MAX_FORM_CANDIDATES {
                            while form.candidates.len() <= index {
                                let key = u32::try_from(form.candidates.len()).unwrap_or(u32::MAX);
                                form.candidates.push(CandidateForm::unchecked(key));
                            }
                            form.candidates[index].set(rest, value);
                        }
                    }
                }
            }
        }
        form.next_key = form
            .candidates
            .iter()
            .map(|candidate| candidate.key + 1)
            .max()
            .unwrap_or(0);
        form
    }
}

/// The most candidates a plain form post may describe.
const MAX_FORM_CANDIDATES: usize = 50;

/// A structural edit of the form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EditOp {
    /// Add a candidate at the end.
    Add,
    /// Move the candidate at this position up.
    MoveUp(usize),
    /// Move the candidate at this position down.
    MoveDown(usize),
    /// Remove the candidate at this position.
    Remove(usize),
}

impl EditOp {
    /// The value of this edit's plain-form button: the inverse of [`EditOp::parse`].
    pub fn to_value(&self) -> String {
        match self {
            Self::Add => "add".to_owned(),
            Self::MoveUp(position) => format!("up:{position}"),
            Self::MoveDown(position) => format!("down:{position}"),
            Self::Remove(position) => format!("remove:{position}"),
        }
    }

    /// The structural edit a plain post asks for with its `op` button, if any.
    pub fn from_pairs(pairs: &[(String, String)]) -> Option<Self> {
        pairs
            .iter()
            .find(|(name, _)| name == "op")
            .and_then(|(_, value)| Self::parse(value))
    }

    /// The value of a plain form's `op` button: `add`, `up:1`, `down:0`, `remove:2`.
    pub fn parse(text: &str) -> Option<Self> {
        let (name, position) = match text.split_once(':') {
            Some((name, position)) => (name, position.parse().ok()?),
            None => (text, 0),
        };
        match name {
            "add" => Some(Self::Add),
            "up" => Some(Self::MoveUp(position)),
            "down" => Some(Self::MoveDown(position)),
            "remove" => Some(Self::Remove(position)),
            _ => None,
        }
    }
}

/// `candidates[3].model` -> `(3, "model")`.
fn split_candidate(name: &str) -> Option<(usize, &str)> {
    let rest = name.strip_prefix("candidates[")?;
    let (index, rest) = rest.split_once("].")?;
    Some((index.parse().ok()?, rest))
}

impl CandidateForm {
    /// A candidate as a plain post starts it: every checkbox unchecked until
    /// the post says otherwise.
    fn unchecked(key: u32) -> Self {
        let mut candidate = Self::new(key, ProviderId::new(""));
        candidate.enabled = false;
        candidate.max_tokens.clear();
        candidate.max_escalations.clear();
        candidate.ceiling_tokens.clear();
        for section in [&mut candidate.transient, &mut candidate.hard] {
            *section = SectionForm {
                retry_enabled: false,
                max_retries: String::new(),
                initial_interval_ms: String::new(),
                jitter_pct: String::new(),
                reset_wait_enabled: false,
                max_wait_s: String::new(),
                on_exhausted: String::new(),
            };
        }
        candidate
    }

    fn set(&mut self, field: &str, value: &str) {
        let checked = !value.is_empty();
        match field {
            "key" => {}
            "id" => {
                self.id = Some(value.trim())
                    .filter(|id| !id.is_empty())
                    .map(CandidateId::new)
            }
            "provider_id" => self.provider_id = ProviderId::new(value),
            "model" => self.model = value.to_owned(),
            "enabled" => self.enabled = checked,
            "max_tokens" => self.max_tokens = value.to_owned(),
            "escalation.max_escalations" => self.max_escalations = value.to_owned(),
            "escalation.ceiling_tokens" => self.ceiling_tokens = value.to_owned(),
            _ => {
                let Some((class, rest)) = field
                    .strip_prefix("policy.transient.")
                    .map(|rest| (SectionClass::Transient, rest))
                    .or_else(|| {
                        field
                            .strip_prefix("policy.hard.")
                            .map(|rest| (SectionClass::Hard, rest))
                    })
                else {
                    return;
                };
                let section = self.section_mut(class);
                match rest {
                    "retry.enabled" => section.retry_enabled = checked,
                    "retry.max_retries" => section.max_retries = value.to_owned(),
                    "retry.initial_interval_ms" => section.initial_interval_ms = value.to_owned(),
                    "retry.jitter_pct" => section.jitter_pct = value.to_owned(),
                    "reset_wait.enabled" => section.reset_wait_enabled = checked,
                    "reset_wait.max_wait_s" => section.max_wait_s = value.to_owned(),
                    "on_exhausted" => section.on_exhausted = value.to_owned(),
                    _ => {}
                }
            }
        }
    }
}

/// A model name for sentences: the name, or "the next candidate" while empty.
pub fn display_model(model: &str) -> String {
    let model = model.trim();
    if model.is_empty() {
        "the next candidate".to_owned()
    } else {
        model.to_owned()
    }
}

/// The field path of a candidate's field: `candidates[1].model`.
pub fn candidate_path(position: usize, field: &str) -> String {
    format!("candidates[{position}].{field}")
}

/// The field path of a section's field: `candidates[1].policy.hard.retry.max_retries`.
pub fn section_path(position: usize, class: SectionClass, field: &str) -> String {
    format!("candidates[{position}].policy.{}.{field}", class.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::ErrorCode;

    fn provider() -> ProviderChoice {
        ProviderChoice {
            id: "p1".into(),
            name: "Anthropic".into(),
        }
    }

    fn valid_draft() -> ProfileForm {
        let mut form = ProfileForm::new_draft(&[provider()]);
        form.name = "Coding".into();
        form.candidates[0].model = "model-alpha".into();
        form
    }

    #[test]
    fn a_new_draft_needs_a_name_and_a_model() {
        let errors: Vec<(String, ErrorCode)> = ProfileForm::new_draft(&[provider()])
            .validate()
            .into_iter()
            .map(|error| (error.field, error.code))
            .collect();
        assert_eq!(
            errors,
            [
                ("name".to_owned(), ErrorCode::Required),
                ("candidates[0].model".to_owned(), ErrorCode::Required),
            ]
        );
        assert_eq!(valid_draft().validate(), vec![]);
    }

    #[test]
    fn typed_numbers_reach_validation_as_typed() {
        let mut form = valid_draft();
        form.candidates[0].transient.max_retries = "11".into();
        form.candidates[0].hard.initial_interval_ms = "1.5".into();
        form.candidates[0].hard.max_wait_s = "".into();
        form.candidates[0].max_tokens = "lots".into();
        let errors: Vec<(String, ErrorCode)> = form
            .validate()
            .into_iter()
            .map(|error| (error.field, error.code))
            .collect();
        assert_eq!(
            errors,
            [
                ("candidates[0].max_tokens".to_owned(), ErrorCode::Type),
                (
                    "candidates[0].policy.transient.retry.max_retries".to_owned(),
                    ErrorCode::Range
                ),
                (
                    "candidates[0].policy.hard.retry.initial_interval_ms".to_owned(),
                    ErrorCode::Type
                ),
                (
                    "candidates[0].policy.hard.reset_wait.max_wait_s".to_owned(),
                    ErrorCode::Required
                ),
            ]
        );
    }

    #[test]
    fn jitter_is_optional_bounded_and_reaches_the_document() {
        let mut form = valid_draft();
        let section = |form: &ProfileForm| form.candidates[0].transient.parsed();
        assert_eq!(section(&form).map(|s| s.retry.jitter_pct), Some(0));
        form.candidates[0].transient.jitter_pct = "".into();
        assert_eq!(form.validate(), vec![]);
        assert_eq!(section(&form).map(|s| s.retry.jitter_pct), Some(0));
        form.candidates[0].transient.jitter_pct = " 25 ".into();
        let checked = form.to_request().check(ProfileRequest::check).unwrap();
        assert_eq!(checked.candidates[0].policy.transient.retry.jitter_pct, 25);
        assert_eq!(section(&form).map(|s| s.retry.jitter_pct), Some(25));
        for (bad, code) in [
            ("51", ErrorCode::Range),
            ("-1", ErrorCode::Range),
            ("2.5", ErrorCode::Type),
        ] {
            form.candidates[0].transient.jitter_pct = bad.into();
            let errors: Vec<(String, ErrorCode)> = form
                .validate()
                .into_iter()
                .map(|error| (error.field, error.code))
                .collect();
            assert_eq!(
                errors,
                [(
                    "candidates[0].policy.transient.retry.jitter_pct".to_owned(),
                    code
                )],
                "{bad}"
            );
            assert_eq!(section(&form), None, "{bad}");
        }
    }

    #[test]
    fn round_trips_through_the_stored_shape() {
        let form = valid_draft();
        let draft = form.to_request().check(ProfileRequest::check).unwrap();
        assert_eq!(draft.candidates[0].policy, PolicyDocument::default());
        assert_eq!(
            draft.candidates[0].escalation,
            EscalationSettings::default()
        );
        assert_eq!(draft.candidates[0].max_tokens, NEW_CANDIDATE_MAX_TOKENS);
    }

    #[test]
    fn an_empty_gateway_deadline_is_the_servers_and_a_bad_one_is_its_fields_error() {
        let mut form = valid_draft();
        assert_eq!(form.request().0.gateway_deadline_s, None);
        form.gateway_deadline_s = " 90 ".into();
        let checked = form.to_request().check(ProfileRequest::check).unwrap();
        assert_eq!(checked.gateway_deadline_s, Some(90));
        for bad in ["1.5", "soon", "0", "7200"] {
            form.gateway_deadline_s = bad.into();
            let fields: Vec<String> = form.validate().into_iter().map(|e| e.field).collect();
            assert_eq!(fields, ["gateway_deadline_s"], "{bad}");
        }
    }

    #[test]
    fn structural_edits_keep_keys() {
        let mut form = valid_draft();
        form.apply(&EditOp::Add, &[provider()]);
        form.apply(&EditOp::Add, &[provider()]);
        let keys = |form: &ProfileForm| form.candidates.iter().map(|c| c.key).collect::<Vec<_>>();
        assert_eq!(keys(&form), [0, 1, 2]);
        form.apply(&EditOp::MoveUp(2), &[]);
        assert_eq!(keys(&form), [0, 2, 1]);
        form.apply(&EditOp::MoveDown(0), &[]);
        assert_eq!(keys(&form), [2, 0, 1]);
        form.apply(&EditOp::MoveUp(0), &[]);
        form.apply(&EditOp::MoveDown(2), &[]);
        assert_eq!(keys(&form), [2, 0, 1], "moves past either end do nothing");
        form.apply(&EditOp::Remove(1), &[]);
        assert_eq!(keys(&form), [2, 1]);
        assert_eq!(form.candidates[0].provider_id.as_str(), "p1");
    }

    #[test]
    fn next_enabled_model_skips_disabled_candidates() {
        let mut form = valid_draft();
        form.apply(&EditOp::Add, &[]);
        form.apply(&EditOp::Add, &[]);
        form.candidates[1].enabled = false;
        form.candidates[2].model = "model-gamma".into();
        assert_eq!(form.next_enabled_model(0).as_deref(), Some("model-gamma"));
        assert_eq!(form.next_enabled_model(2), None);
    }

    #[test]
    fn a_plain_post_reads_back_into_the_same_form() {
        let mut form = valid_draft();
        form.id = Some("profile-1".into());
        form.revision = Some(Revision::new(3));
        form.candidates[0].id = Some("c-1".into());
        form.candidates[0].hard.retry_enabled = true;
        form.candidates[0].transient.reset_wait_enabled = false;
        form.candidates[0].transient.on_exhausted = "stop".into();
        form.gateway_deadline_s = "600".into();
        let pairs = form_pairs(&form);
        assert_eq!(ProfileForm::from_pairs(&pairs), form);
    }

    /// What a browser posts for `form`: checked boxes only.
    fn form_pairs(form: &ProfileForm) -> Vec<(String, String)> {
        let mut pairs = vec![
            (
                "id".to_owned(),
                form.id
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            ),
            (
                "revision".to_owned(),
                form.revision.map(|r| r.to_string()).unwrap_or_default(),
            ),
            ("name".to_owned(), form.name.clone()),
            (
                "gateway_deadline_s".to_owned(),
                form.gateway_deadline_s.clone(),
            ),
        ];
        for (position, candidate) in form.candidates.iter().enumerate() {
            let path = |field: &str| candidate_path(position, field);
            pairs.push((
                path("id"),
                candidate
                    .id
                    .as_ref()
                    .map(ToString::to_string)
                    .unwrap_or_default(),
            ));
            pairs.push((path("provider_id"), candidate.provider_id.to_string()));
            pairs.push((path("model"), candidate.model.clone()));
            if candidate.enabled {
                pairs.push((path("enabled"), "on".into()));
            }
            pairs.push((path("max_tokens"), candidate.max_tokens.clone()));
            pairs.push((
                path("escalation.max_escalations"),
                candidate.max_escalations.clone(),
            ));
            pairs.push((
                path("escalation.ceiling_tokens"),
                candidate.ceiling_tokens.clone(),
            ));
            for class in SectionClass::ALL {
                let section = candidate.section(class);
                let path = |field: &str| section_path(position, class, field);
                if section.retry_enabled {
                    pairs.push((path("retry.enabled"), "on".into()));
                }
                pairs.push((path("retry.max_retries"), section.max_retries.clone()));
                pairs.push((
                    path("retry.initial_interval_ms"),
                    section.initial_interval_ms.clone(),
                ));
                pairs.push((path("retry.jitter_pct"), section.jitter_pct.clone()));
                if section.reset_wait_enabled {
                    pairs.push((path("reset_wait.enabled"), "on".into()));
                }
                pairs.push((path("reset_wait.max_wait_s"), section.max_wait_s.clone()));
                pairs.push((path("on_exhausted"), section.on_exhausted.clone()));
            }
        }
        pairs
    }

    #[test]
    fn edit_ops_parse() {
        assert_eq!(EditOp::parse("add"), Some(EditOp::Add));
        assert_eq!(EditOp::parse("up:2"), Some(EditOp::MoveUp(2)));
        assert_eq!(EditOp::parse("down:0"), Some(EditOp::MoveDown(0)));
        assert_eq!(EditOp::parse("remove:1"), Some(EditOp::Remove(1)));
        assert_eq!(EditOp::parse("remove:x"), None);
        assert_eq!(EditOp::parse("save"), None);
        for op in [
            EditOp::Add,
            EditOp::MoveUp(3),
            EditOp::MoveDown(0),
            EditOp::Remove(9),
        ] {
            assert_eq!(EditOp::parse(&op.to_value()), Some(op));
        }
    }

    #[test]
    fn a_post_cannot_grow_the_form_without_bound() {
        let form = ProfileForm::from_pairs(&[("candidates[999999].model".into(), "m".into())]);
        assert!(form.candidates.is_empty());
    }
}
