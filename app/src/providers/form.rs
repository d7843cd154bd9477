//! The provider form's state: what the user typed, and the typed request
//! the `api` crate checks exactly as the server does.

use api::read::Read;
use api::{FieldError, KeyEnvRules, ProviderId, ProviderRequest, ProviderView, Revision};
use policy::{ProviderFamily, ProviderKind};
use serde::{Deserialize, Serialize};

/// A provider form (add or edit).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderForm {
    /// The stored provider's id; `None` when adding.
    pub id: Option<ProviderId>,
    /// The revision it was loaded at.
    pub revision: Option<Revision>,
    /// Name as typed.
    pub name: String,
    /// The kind chosen.
    pub kind: ProviderKind,
    /// The family chosen; `None` for the kind's own.
    pub family: Option<ProviderFamily>,
    /// Base URL as typed.
    pub base_url: String,
    /// Key variable name as typed.
    pub api_key_env: String,
    /// A `cli` provider's settings as stored: set through the API, sent back
    /// unchanged (the form does not edit them).
    pub cli: Option<api::CliRequest>,
}

impl ProviderForm {
    /// An empty form for a new provider.
    pub fn new_provider() -> Self {
        Self {
            id: None,
            revision: None,
            name: String::new(),
            kind: ProviderKind::Anthropic,
            family: None,
            base_url: String::new(),
            api_key_env: String::new(),
            cli: None,
        }
    }

    /// The form for a stored provider.
    pub fn from_view(view: &ProviderView) -> Self {
        Self {
            id: Some(view.id.clone()),
            revision: Some(view.revision),
            name: view.name.clone(),
            kind: view.kind,
            family: Some(view.family),
            base_url: view.base_url.clone(),
            api_key_env: view.api_key_env.clone().unwrap_or_default(),
            cli: view.cli.clone(),
        }
    }

    /// The request these values make: empty optional fields are left out.
    pub fn request(&self) -> ProviderRequest {
        let optional = |text: &str| Some(text.trim().to_owned()).filter(|text| !text.is_empty());
        ProviderRequest {
            name: self.name.clone(),
            kind: self.kind,
            family: self.family,
            base_url: optional(&self.base_url),
            api_key_env: optional(&self.api_key_env),
            // Left out of an update, the stored timeouts and script are kept.
            timeouts: None,
            script: None,
            cli: self.cli.clone().filter(|_| self.kind == ProviderKind::Cli),
            revision: self.revision,
        }
    }

    /// [`ProviderForm::request`], ready for the checks.
    pub fn to_request(&self) -> Read<ProviderRequest> {
        Read::clean(&self.request())
    }

    /// Every field error, from the same checks the server runs.
    pub fn validate(&self, keys: &KeyEnvRules) -> Vec<FieldError> {
        let updating = self.id.is_some();
        self.to_request()
            .check(|request| match updating {
                true => request.check_update(keys).map(drop),
                false => request.check(keys).map(drop),
            })
            .err()
            .unwrap_or_default()
    }

    /// Forgets what a refusal says may be a secret, so a page never shows it
    /// again: a refused key variable (a key pasted into the wrong field), and
    /// a refused base URL that carries credentials, a query or a fragment.
    pub fn forget_refused_secrets(&mut self, errors: &[FieldError]) {
        let refused = |field: &str| errors.iter().any(|error| error.field == field);
        if refused("api_key_env") {
            self.api_key_env.clear();
        }
        if refused("base_url") && self.base_url.contains(['@', '?', '#']) {
            self.base_url.clear();
        }
    }

    /// The form a plain HTML post describes, and the errors of the choices
    /// it does not offer (a kind or family that is not one), which
    /// [`ProviderForm::to_request_with`] reports with the rest.
    pub fn from_pairs(pairs: &[(String, String)]) -> (Self, Vec<FieldError>) {
        let mut form = Self::new_provider();
        let mut unread = Vec::new();
        let not_one_of = |field: &str, names: &[&str]| {
            FieldError::new(
                &api::FieldPath::root().field(field),
                api::ErrorCode::Enum,
                format!("must be one of {}", names.join(", ")),
            )
        };
        for (name, value) in pairs {
            match name.as_str() {
                "id" => {
                    form.id = Some(value.trim())
                        .filter(|id| !id.is_empty())
                        .map(ProviderId::new)
                }
                "revision" => form.revision = value.trim().parse().ok().map(Revision::new),
                "name" => form.name.clone_from(value),
                "kind" => match ProviderKind::ALL
                    .into_iter()
                    .find(|kind| kind.as_str() == value)
                {
                    Some(kind) => form.kind = kind,
                    None => unread.push(not_one_of(
                        "kind",
                        &ProviderKind::ALL.map(ProviderKind::as_str),
                    )),
                },
                "family" if value.is_empty() => form.family = None,
                "family" => match ProviderFamily::ALL
                    .into_iter()
                    .find(|family| family.as_str() == value)
                {
                    Some(family) => form.family = Some(family),
                    None => unread.push(not_one_of(
                        "family",
                        &ProviderFamily::ALL.map(ProviderFamily::as_str),
                    )),
                },
                "base_url" => form.base_url.clone_from(value),
                "api_key_env" => form.api_key_env.clone_from(value),
                _ => {}
            }
        }
        (form, unread)
    }

    /// [`ProviderForm::to_request`], with errors the form found on its own.
    pub fn to_request_with(&self, errors: Vec<FieldError>) -> Read<ProviderRequest> {
        Read::built(&self.request(), errors)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_optional_fields_are_left_out_and_checked_like_the_server() {
        let mut form = ProviderForm::new_provider();
        form.name = "Anthropic".into();
        form.base_url = "https://api.anthropic.com".into();
        form.api_key_env = "ANTHROPIC_API_KEY".into();
        let none = KeyEnvRules::default();
        assert_eq!(form.validate(&none), vec![]);
        form.api_key_env = "VAULT_TOKEN".into();
        assert_eq!(form.validate(&none)[0].field, "api_key_env");
        assert_eq!(
            form.validate(&KeyEnvRules::new(vec!["VAULT_TOKEN".into()])),
            vec![]
        );
        form.kind = ProviderKind::Simulated;
        form.base_url.clear();
        form.api_key_env = "  ".into();
        assert_eq!(form.validate(&none), vec![]);
        let spec = form
            .to_request()
            .check(|request| request.check(&none))
            .unwrap();
        assert_eq!((spec.base_url.as_str(), spec.api_key_env), ("", None));
    }

    #[test]
    fn an_edit_needs_its_revision() {
        let mut form = ProviderForm::new_provider();
        form.id = Some("p1".into());
        form.name = "Local".into();
        form.kind = ProviderKind::Simulated;
        assert_eq!(form.validate(&KeyEnvRules::default())[0].field, "revision");
        form.revision = Some(Revision::new(2));
        assert_eq!(form.validate(&KeyEnvRules::default()), vec![]);
    }

    #[test]
    fn a_choice_the_form_does_not_offer_is_an_error() {
        let pairs = [("name", "N"), ("kind", "grpc"), ("family", "acme")]
            .map(|(a, b)| (a.to_owned(), b.to_owned()));
        let (form, unread) = ProviderForm::from_pairs(&pairs);
        let fields: Vec<(String, api::ErrorCode)> = form
            .to_request_with(unread)
            .check(|request| request.check(&KeyEnvRules::default()))
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code))
            .collect();
        assert_eq!(
            fields,
            [
                ("kind".to_owned(), api::ErrorCode::Enum),
                ("family".to_owned(), api::ErrorCode::Enum),
            ]
        );
    }

    #[test]
    fn a_plain_post_reads_back() {
        let pairs: Vec<(String, String)> = [
            ("id", "p1"),
            ("revision", "2"),
            ("name", "N"),
            ("kind", "openai"),
            ("family", ""),
            ("base_url", "https://x"),
            ("api_key_env", "OPENAI_API_KEY"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let (form, unread) = ProviderForm::from_pairs(&pairs);
        assert_eq!(unread, vec![]);
        assert_eq!(
            (
                form.id.as_ref().map(ProviderId::as_str),
                form.revision,
                form.kind,
                form.family
            ),
            (
                Some("p1"),
                Some(Revision::new(2)),
                ProviderKind::Openai,
                None
            )
        );
    }
}
