//! The provider form's state: what the user typed, and the typed request
//! the `api` crate checks exactly as the server does.

use api::read::Read;
use api::{FieldError, KeyEnvRules, ProviderId, ProviderRequest, ProviderView, Revision};
use policy::{CliPreset, ProviderFamily, ProviderKind};
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
    /// An agent CLI's settings, as typed (sent only for the `cli` kind).
    pub cli: CliFields,
}

/// An agent CLI's settings as the form holds them: lists as text, one
/// argument per line and variable names apart by spaces or commas.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CliFields {
    /// The preset chosen.
    pub preset: CliPreset,
    /// The command, one argument per line; empty for the preset's.
    pub command: String,
    /// The working directory; empty for the server's.
    pub working_dir: String,
    /// The variables it may see.
    pub env: String,
    /// The zone its printed resets are read in; empty for the server's.
    pub time_zone: String,
}

impl Default for CliFields {
    fn default() -> Self {
        Self {
            preset: CliPreset::ClaudeCode,
            command: String::new(),
            working_dir: String::new(),
            env: String::new(),
            time_zone: String::new(),
        }
    }
}

impl CliFields {
    /// The fields for stored settings.
    pub fn from_request(cli: &api::CliRequest) -> Self {
        Self {
            preset: cli.preset,
            command: cli.command.as_deref().unwrap_or_default().join("\n"),
            working_dir: cli.working_dir.clone().unwrap_or_default(),
            env: cli.env.as_deref().unwrap_or_default().join(" "),
            time_zone: cli.time_zone.clone().unwrap_or_default(),
        }
    }

    /// The settings these fields describe: an empty field is left out, so
    /// the preset's command and the server's directory and zone apply; blank
    /// lines are no arguments.
    pub fn request(&self) -> api::CliRequest {
        let optional = |text: &str| Some(text.trim().to_owned()).filter(|text| !text.is_empty());
        let command: Vec<String> = self
            .command
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty())
            .map(str::to_owned)
            .collect();
        let env: Vec<String> = self
            .env
            .split(|c: char| c == ',' || c.is_whitespace())
            .filter(|name| !name.is_empty())
            .map(str::to_owned)
            .collect();
        api::CliRequest {
            preset: self.preset,
            command: Some(command).filter(|command| !command.is_empty()),
            working_dir: optional(&self.working_dir),
            env: Some(env).filter(|env| !env.is_empty()),
            time_zone: optional(&self.time_zone),
        }
    }
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
            cli: CliFields::default(),
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
            cli: view
                .cli
                .as_ref()
                .map(CliFields::from_request)
                .unwrap_or_default(),
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
            cli: (self.kind == ProviderKind::Cli).then(|| self.cli.request()),
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
        // A variable's value typed as its name, or a key in the command.
        let refused_under = |field: &str, code: api::ErrorCode| {
            errors.iter().any(|error| {
                error.code == code
                    && error
                        .field
                        .strip_prefix(field)
                        .is_some_and(|rest| rest.starts_with('['))
            })
        };
        if refused_under("cli.env", api::ErrorCode::Type) {
            self.cli.env.clear();
        }
        if refused_under("cli.command", api::ErrorCode::Type) {
            self.cli.command.clear();
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
                "cli.preset" => match CliPreset::ALL
                    .into_iter()
                    .find(|preset| preset.as_str() == value)
                {
                    Some(preset) => form.cli.preset = preset,
                    None => unread.push(FieldError::new(
                        &api::FieldPath::root().field("cli").field("preset"),
                        api::ErrorCode::Enum,
                        format!(
                            "must be one of {}",
                            CliPreset::ALL.map(CliPreset::as_str).join(", ")
                        ),
                    )),
                },
                "cli.command" => form.cli.command.clone_from(value),
                "cli.working_dir" => form.cli.working_dir.clone_from(value),
                "cli.env" => form.cli.env.clone_from(value),
                "cli.time_zone" => form.cli.time_zone.clone_from(value),
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
    fn an_agent_clis_settings_are_typed_as_text_and_checked_like_the_server() {
        let mut form = ProviderForm::new_provider();
        form.name = "Claude".into();
        form.kind = ProviderKind::Cli;
        let none = KeyEnvRules::default();
        assert_eq!(form.validate(&none), vec![], "the preset alone will do");
        let sent = form.request().cli.expect("sent for a cli");
        assert_eq!(
            (sent.command, sent.env, sent.working_dir),
            (None, None, None),
            "empty fields left out"
        );
        form.cli.command = "claude\n -p \n\n--model\n{model}\n".into();
        form.cli.env = "PATH, HOME\nGITHUB_TOKEN".into();
        form.cli.working_dir = "relative".into();
        let fields: Vec<String> = form
            .validate(&none)
            .into_iter()
            .map(|error| error.field)
            .collect();
        assert_eq!(
            fields,
            ["cli.working_dir", "cli.env[2]"],
            "an error names the variable's place"
        );
        form.cli.working_dir = "/srv/work".into();
        assert_eq!(
            form.validate(&KeyEnvRules::new(vec!["GITHUB_TOKEN".into()])),
            vec![]
        );
        let sent = form.request().cli.unwrap();
        assert_eq!(
            sent.command.unwrap(),
            ["claude", "-p", "--model", "{model}"]
        );
        assert_eq!(sent.env.unwrap(), ["PATH", "HOME", "GITHUB_TOKEN"]);
        // Read back from what the server stores, the same settings.
        assert_eq!(
            CliFields::from_request(&form.request().cli.unwrap()).request(),
            form.request().cli.unwrap()
        );
        // Any other kind sends none.
        form.kind = ProviderKind::Simulated;
        assert_eq!(form.request().cli, None);
    }

    #[test]
    fn a_plain_post_reads_an_agent_clis_settings() {
        let pairs: Vec<(String, String)> = [
            ("name", "Codex"),
            ("kind", "cli"),
            ("cli.preset", "codex"),
            ("cli.command", "codex\r\nexec\r\n--json"),
            ("cli.env", "PATH HOME"),
            ("cli.time_zone", "Europe/Berlin"),
        ]
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect();
        let (form, unread) = ProviderForm::from_pairs(&pairs);
        assert_eq!(unread, vec![]);
        let cli = form.request().cli.unwrap();
        assert_eq!(
            (cli.preset, cli.command.unwrap(), cli.time_zone),
            (
                CliPreset::Codex,
                vec!["codex".to_owned(), "exec".to_owned(), "--json".to_owned()],
                Some("Europe/Berlin".to_owned())
            )
        );
        let (_, unread) =
            ProviderForm::from_pairs(&[("cli.preset".to_owned(), "aider".to_owned())]);
        assert_eq!(unread[0].field, "cli.preset");
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
