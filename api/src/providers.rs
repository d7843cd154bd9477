//! Providers on the wire (SPEC 1, 6): what a client sends, what it gets back,
//! and the checks in between. A key is never accepted: only the *name* of
//! the environment variable that holds it, and only a name the server allows.

use policy::{
    CliConfig, ErrorCode, FieldError, FieldPath, NAME_MAX_CHARS, ProviderFamily, ProviderKind,
};
use serde::{Deserialize, Serialize};
use validator::{Validate, ValidationError};

use crate::checks::{field_errors, refusal};
use crate::ids::{ProviderId, Revision};
use crate::time::Timestamp;

/// The longest base URL, in characters.
pub const BASE_URL_MAX_CHARS: usize = 2_000;

/// The longest key variable name, in characters.
pub const KEY_ENV_MAX_CHARS: usize = 200;

// The bounds in the type `validator` compares lengths with.
const NAME_MAX: u64 = NAME_MAX_CHARS as u64;
const BASE_URL_MAX: u64 = BASE_URL_MAX_CHARS as u64;
const KEY_ENV_MAX: u64 = KEY_ENV_MAX_CHARS as u64;

/// A provider to create (`POST /api/providers`) or the new state of one to
/// update (`PUT /api/providers/{id}`, which must carry the `revision` it read).
///
/// ```
/// use api::{KeyEnvRules, ProviderRequest};
/// use policy::{ProviderFamily, ProviderKind};
/// let request = ProviderRequest {
///     name: " Anthropic ".into(),
///     kind: ProviderKind::Anthropic,
///     family: None,
///     base_url: Some("https://api.anthropic.com/".into()),
///     api_key_env: Some("ANTHROPIC_API_KEY".into()),
///     timeouts: None,
///     script: None,
///     cli: None,
///     revision: None,
/// };
/// let spec = request.check(&KeyEnvRules::default()).unwrap();
/// assert_eq!((spec.name.as_str(), spec.family), ("Anthropic", ProviderFamily::Anthropic));
/// assert_eq!(spec.base_url, "https://api.anthropic.com");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderRequest {
    /// A name people recognise, unique regardless of case; stored without
    /// surrounding white space.
    #[validate(length(min = 1, max = NAME_MAX), custom(function = "crate::checks::not_blank"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 100))]
    pub name: String,
    /// The wire protocol.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ProviderKindSchema))]
    pub kind: ProviderKind,
    /// Whose errors to expect; the kind's own family when left out.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::ProviderFamilySchema>))]
    pub family: Option<ProviderFamily>,
    /// `http(s)://host[:port][/path]`, without credentials, query or
    /// fragment. Required for every kind but `simulated`.
    #[validate(length(min = 1, max = BASE_URL_MAX), custom(function = "check_base_url"))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 2000))]
    pub base_url: Option<String>,
    /// The NAME of the environment variable that holds the key: one that
    /// ends in `_API_KEY`, or one allowed with `--allow-key-env`. Required
    /// for `anthropic` and `openai`.
    #[validate(length(min = 1, max = KEY_ENV_MAX))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub api_key_env: Option<String>,
    /// Call timeouts; the defaults (connect 10 s, first byte 120 s, idle 60 s)
    /// when left out of a create, the stored ones when left out of an update.
    #[validate(nested)]
    pub timeouts: Option<TimeoutsRequest>,
    /// A `simulated` provider's script of outcomes, one per call (see the
    /// README's "Simulated providers"); the server checks each step. Left out
    /// of an update, the stored script is kept.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<crate::openapi::SimulatedStepSchema>>))]
    pub script: Option<serde_json::Value>,
    /// What a `cli` provider runs (required for `cli`, and only for it): a
    /// preset (`claude_code`, `codex`, `gemini_cli`, `generic`), and, each
    /// optional, its `command` (the program, then its arguments, with
    /// `{model}` and `{prompt}` filled in at each call; never run through a
    /// shell; the preset's when empty), its `working_dir` (absolute), the
    /// names in `env` passed through from the server's environment (every
    /// other variable is cleared; a name that looks like a secret must end in
    /// `_API_KEY` or be allowed with `--allow-key-env`), and the `time_zone`
    /// it prints resets in. It runs a program on the server: only someone
    /// holding the admin token (or anyone, on an open loopback server) can
    /// set it, as every change.
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::CliSchema>))]
    pub cli: Option<crate::CliRequest>,
    /// The revision this update was made from; required by `PUT`, ignored by `POST`.
    #[validate(range(min = 1))]
    pub revision: Option<Revision>,
}

/// The longest any call timeout may be: one hour, in milliseconds.
pub const TIMEOUT_MAX_MS: u64 = 3_600_000;

/// A provider's call timeouts, in milliseconds, 1..=3600000 each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Validate)]
#[serde(deny_unknown_fields)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimeoutsRequest {
    /// Connecting (TCP and TLS).
    #[validate(range(min = 1, max = TIMEOUT_MAX_MS))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3_600_000))]
    pub connect_ms: u64,
    /// From sending the request to the first byte of the answer.
    #[validate(range(min = 1, max = TIMEOUT_MAX_MS))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3_600_000))]
    pub first_byte_ms: u64,
    /// The longest silence between two pieces of a streamed answer.
    #[validate(range(min = 1, max = TIMEOUT_MAX_MS))]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 3_600_000))]
    pub idle_ms: u64,
}

impl crate::read::Request for ProviderRequest {
    fn depends_on(field: &str) -> &'static [&'static str] {
        match field {
            // Required or not by the kind.
            "base_url" | "api_key_env" => &["kind"],
            _ => &[],
        }
    }
}

/// A provider after the checks: trimmed, its family resolved, its base URL
/// without a trailing slash.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderSpec {
    /// See [`ProviderRequest::name`].
    pub name: String,
    /// See [`ProviderRequest::kind`].
    pub kind: ProviderKind,
    /// Whose errors to expect.
    pub family: ProviderFamily,
    /// The base URL; empty when the kind needs none and none was given.
    pub base_url: String,
    /// The key variable's name, when there is one.
    pub api_key_env: Option<String>,
    /// See [`ProviderRequest::timeouts`].
    pub timeouts: Option<TimeoutsRequest>,
    /// See [`ProviderRequest::script`]: only a `simulated` provider has one.
    pub script: Option<serde_json::Value>,
    /// See [`ProviderRequest::cli`]: only a `cli` provider has one.
    pub cli: Option<CliConfig>,
}

/// Which key variable names the server lets a provider read: any name that
/// ends in `_API_KEY`, and exactly the names given with `--allow-key-env`,
/// whatever their form.
///
/// ```
/// let rules = api::KeyEnvRules::new(vec!["vault_token".into()]);
/// assert!(rules.allows("OPENAI_API_KEY"));
/// assert!(rules.allows("vault_token"));
/// assert!(!rules.allows("VAULT_TOKEN"));
/// assert!(!rules.allows("HOME"));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyEnvRules {
    extra: Vec<String>,
}

impl KeyEnvRules {
    /// The rules with these names allowed beyond `*_API_KEY`.
    pub fn new(extra: Vec<String>) -> Self {
        Self { extra }
    }

    /// Whether a provider may read its key from `name`.
    pub fn allows(&self, name: &str) -> bool {
        self.extra.iter().any(|allowed| allowed == name) || is_api_key_name(name)
    }

    /// A regular expression of the allowed names, for the API's document.
    pub fn pattern(&self) -> String {
        let mut pattern = String::from("^(?:_API_KEY|[A-Z_][A-Z0-9_]*_API_KEY");
        for name in &self.extra {
            pattern.push('|');
            for character in name.chars() {
                if !character.is_ascii_alphanumeric() && character != '_' {
                    pattern.push('\\');
                }
                pattern.push(character);
            }
        }
        pattern.push_str(")$");
        pattern
    }
}

/// `NAME_API_KEY`: capital letters, digits and `_`, not starting with a digit.
fn is_api_key_name(name: &str) -> bool {
    is_conventional_env_name(name) && name.ends_with("_API_KEY")
}

fn is_conventional_env_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

impl ProviderRequest {
    /// Every error at once, or the provider these values describe. Lengths
    /// count every character sent; the name is stored trimmed.
    pub fn check(&self, keys: &KeyEnvRules) -> Result<ProviderSpec, Vec<FieldError>> {
        self.check_as(keys, false)
    }

    /// [`ProviderRequest::check`]; an update may leave out a `cli` provider's
    /// settings (the stored ones are kept).
    fn check_as(
        &self,
        keys: &KeyEnvRules,
        updating: bool,
    ) -> Result<ProviderSpec, Vec<FieldError>> {
        let request = self;
        let root = FieldPath::root();
        let mut errors = field_errors(request.validate(), &root);
        let reported = |errors: &[FieldError], field: &str| errors.iter().any(|e| e.field == field);
        match &request.base_url {
            None if request.kind.needs_base_url() => errors.push(FieldError::new(
                &root.field("base_url"),
                ErrorCode::Required,
                "is required for this kind",
            )),
            _ => {}
        }
        match &request.api_key_env {
            None if request.kind.needs_key() => errors.push(FieldError::new(
                &root.field("api_key_env"),
                ErrorCode::Required,
                "is required for this kind: the name of the environment variable that holds the key",
            )),
            Some(name) if !reported(&errors, "api_key_env") => {
                if let Some(error) = key_env_error(name, keys) {
                    errors.push(error);
                }
            }
            _ => {}
        }
        if request.script.is_some() && request.kind != ProviderKind::Simulated {
            errors.push(FieldError::new(
                &root.field("script"),
                ErrorCode::UnknownField,
                "is only for a simulated provider",
            ));
        }
        match &request.cli {
            None if request.kind == ProviderKind::Cli && !updating => errors.push(FieldError::new(
                &root.field("cli"),
                ErrorCode::Required,
                "is required for a cli provider: at least its preset",
            )),
            Some(_) if request.kind != ProviderKind::Cli => errors.push(FieldError::new(
                &root.field("cli"),
                ErrorCode::UnknownField,
                "is only for a cli provider",
            )),
            Some(cli) => errors.extend(crate::check_cli(&cli.config(), keys, &root.field("cli"))),
            None => {}
        }
        if request.kind == ProviderKind::Cli {
            // A CLI has no URL, and its environment holds only `cli.env`.
            for (field, given) in [
                ("base_url", request.base_url.is_some()),
                ("api_key_env", request.api_key_env.is_some()),
            ] {
                if given {
                    errors.push(FieldError::new(
                        &root.field(field),
                        ErrorCode::UnknownField,
                        "is not for a cli provider: name the variables it gets in cli.env",
                    ));
                }
            }
            // The preset says whose errors they are; only a generic command's
            // family is the provider's to choose.
            let own = request.cli.as_ref().and_then(|cli| cli.preset.family());
            if let (Some(given), Some(own)) = (request.family, own)
                && given != own
            {
                errors.push(FieldError::new(
                    &root.field("family"),
                    ErrorCode::Enum,
                    format!(
                        "is the preset's own, {}: only a generic command takes another",
                        own.as_str()
                    ),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        Ok(ProviderSpec {
            timeouts: request.timeouts,
            script: request.script.clone(),
            cli: request.cli.as_ref().map(crate::CliRequest::config),
            family: request.family.unwrap_or_else(|| {
                match request.cli.as_ref().and_then(|cli| cli.preset.family()) {
                    Some(family) if request.kind == ProviderKind::Cli => family,
                    _ => request.kind.default_family(),
                }
            }),
            base_url: request
                .base_url
                .as_deref()
                .map(|url| url.trim_end_matches('/').to_owned())
                .unwrap_or_default(),
            name: request.name.trim().to_owned(),
            kind: request.kind,
            api_key_env: request.api_key_env.clone(),
        })
    }

    /// [`ProviderRequest::check`] for an update, with the revision it was
    /// made from (required).
    pub fn check_update(
        &self,
        keys: &KeyEnvRules,
    ) -> Result<(ProviderSpec, Revision), Vec<FieldError>> {
        with_revision(self.check_as(keys, true), self.revision)
    }
}

/// An update's checked value and the revision it was made from, or every
/// error, a missing revision among them.
pub(crate) fn with_revision<T>(
    checked: Result<T, Vec<FieldError>>,
    revision: Option<Revision>,
) -> Result<(T, Revision), Vec<FieldError>> {
    match (checked, revision) {
        (Ok(value), Some(revision)) => Ok((value, revision)),
        (checked, _) => {
            let mut errors = checked.err().unwrap_or_default();
            if revision.is_none() {
                errors.push(FieldError::new(
                    &FieldPath::root().field("revision"),
                    ErrorCode::Required,
                    "is required: send the revision you last read",
                ));
            }
            Err(errors)
        }
    }
}

/// Why `name` cannot be a key variable, if it cannot. Never repeats the
/// value: it may be a key pasted into the wrong field.
fn key_env_error(name: &str, keys: &KeyEnvRules) -> Option<FieldError> {
    let path = FieldPath::root().field("api_key_env");
    if keys.allows(name) {
        return None;
    }
    if !is_conventional_env_name(name) && !keys.extra.iter().any(|allowed| allowed == name) {
        return Some(FieldError::new(
            &path,
            ErrorCode::Type,
            "must be the NAME of an environment variable (capital letters, digits and _), never the key itself",
        ));
    }
    Some(FieldError::new(
        &path,
        ErrorCode::Enum,
        "must end in _API_KEY, or be allowed with --allow-key-env",
    ))
}

/// `http(s)://host[:port][/path]`: a host name (letters, digits, `-`, `_`
/// and `.`), an IPv4 address or a bracketed IPv6 one (`[::1]`); a port of up
/// to five digits; a path without white space. No credentials, query or fragment: a key must never
/// hide in a URL. [`BASE_URL_PATTERN`] says the same for the API's document.
fn check_base_url(url: &str) -> Result<(), ValidationError> {
    if url.is_empty() {
        // `length` says so.
        return Ok(());
    }
    let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
    else {
        return Err(refusal(
            ErrorCode::Type,
            "must start with http:// or https://",
        ));
    };
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    if authority.contains('@') {
        return Err(refusal(
            ErrorCode::Type,
            "must not carry credentials: name the key's environment variable in api_key_env",
        ));
    }
    if rest.contains('?') || rest.contains('#') {
        return Err(refusal(
            ErrorCode::Type,
            "must not have a query or fragment",
        ));
    }
    if rest.chars().any(char::is_whitespace) {
        return Err(refusal(ErrorCode::Type, "must not contain spaces"));
    }
    // `host` then `:port`; an IPv6 address is bracketed because of its colons.
    let split_at = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |end| end + 1)
    } else {
        authority.find(':').unwrap_or(authority.len())
    };
    let (host, port) = authority.split_at(split_at);
    let host_ok = match host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
    {
        // Written in hexadecimal groups (an embedded IPv4 form or a zone is not taken).
        Some(address) => {
            address.parse::<std::net::Ipv6Addr>().is_ok()
                && address.bytes().all(|b| b.is_ascii_hexdigit() || b == b':')
        }
        None => {
            !host.is_empty()
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_'))
        }
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|digits| {
            (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
        });
    if !host_ok || !port_ok {
        return Err(refusal(
            ErrorCode::Type,
            "must name a host such as api.openai.com, 127.0.0.1:8000 or [::1]:8000",
        ));
    }
    Ok(())
}

/// An IPv6 address in hexadecimal groups, as `Ipv6Addr` reads one.
#[cfg(feature = "openapi")]
const IPV6: &str = concat!(
    "(([0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}",
    "|([0-9A-Fa-f]{1,4}:){1,7}:",
    "|([0-9A-Fa-f]{1,4}:){1,6}:[0-9A-Fa-f]{1,4}",
    "|([0-9A-Fa-f]{1,4}:){1,5}(:[0-9A-Fa-f]{1,4}){1,2}",
    "|([0-9A-Fa-f]{1,4}:){1,4}(:[0-9A-Fa-f]{1,4}){1,3}",
    "|([0-9A-Fa-f]{1,4}:){1,3}(:[0-9A-Fa-f]{1,4}){1,4}",
    "|([0-9A-Fa-f]{1,4}:){1,2}(:[0-9A-Fa-f]{1,4}){1,5}",
    "|[0-9A-Fa-f]{1,4}:(:[0-9A-Fa-f]{1,4}){1,6}",
    "|:((:[0-9A-Fa-f]{1,4}){1,7}|:))"
);

/// [`check_base_url`]'s rule as a regular expression, for the API's document
/// (`{white}` is the white-space class).
#[cfg(feature = "openapi")]
pub(crate) fn base_url_pattern(white: &str) -> String {
    format!(r"^https?://([A-Za-z0-9._-]+|\[{IPV6}\])(:[0-9]{{1,5}})?(/[^{white}?#]*)?$")
}

/// A provider as the API answers it: the key's variable name and whether it
/// is set on the server, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderView {
    /// Stable id.
    pub id: ProviderId,
    /// Name, unique regardless of case.
    pub name: String,
    /// The wire protocol.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ProviderKindSchema))]
    pub kind: ProviderKind,
    /// Whose errors to expect.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::ProviderFamilySchema))]
    pub family: ProviderFamily,
    /// Base URL (empty for `simulated`).
    pub base_url: String,
    /// The environment variable that holds the key.
    pub api_key_env: Option<String>,
    /// Whether that variable is set (and not empty) on the server.
    pub api_key_env_set: bool,
    /// The call timeouts in force.
    pub timeouts: TimeoutsRequest,
    /// A simulated provider's script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<Vec<crate::openapi::SimulatedStepSchema>>))]
    pub script: Option<serde_json::Value>,
    /// What a `cli` provider runs, as an update would send it back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<crate::openapi::CliSchema>))]
    pub cli: Option<crate::CliRequest>,
    /// Send this back with an update.
    pub revision: Revision,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::read::Read;

    fn errors_of(body: Value, keys: &KeyEnvRules) -> Vec<(String, &'static str)> {
        Read::<ProviderRequest>::from_json(&body)
            .check(|request| request.check(keys))
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect()
    }

    fn spec(body: Value) -> ProviderSpec {
        Read::<ProviderRequest>::from_json(&body)
            .check(|request| request.check(&KeyEnvRules::default()))
            .unwrap()
    }

    fn pairs(list: &[(&str, &'static str)]) -> Vec<(String, &'static str)> {
        list.iter().map(|(f, c)| ((*f).to_owned(), *c)).collect()
    }

    #[test]
    fn defaults_by_kind() {
        let simulated = spec(json!({"name": "Sim", "kind": "simulated"}));
        assert_eq!(simulated.family, ProviderFamily::OpenaiCompatible);
        assert_eq!(
            (simulated.base_url.as_str(), simulated.api_key_env),
            ("", None)
        );
        let local = spec(
            json!({"name": "vLLM", "kind": "openai_compatible", "family": "ollama", "base_url": "http://127.0.0.1:11434/"}),
        );
        assert_eq!(local.family, ProviderFamily::Ollama);
        assert_eq!(local.base_url, "http://127.0.0.1:11434");
    }

    #[test]
    fn required_and_enum_errors() {
        let none = KeyEnvRules::default();
        assert_eq!(
            errors_of(json!({"kind": "anthropic"}), &none),
            pairs(&[
                ("name", "required"),
                ("base_url", "required"),
                ("api_key_env", "required")
            ])
        );
        assert_eq!(
            errors_of(
                json!({"name": "x", "kind": "grpc", "base_url": "ftp://x"}),
                &none
            ),
            pairs(&[("kind", "enum"), ("base_url", "type")]),
            "an unreadable kind hides only what the kind would require"
        );
        assert_eq!(
            errors_of(
                json!({"name": "x", "kind": "grpc", "family": "acme", "api_key": "sk-1"}),
                &none
            ),
            pairs(&[
                ("api_key", "unknown_field"),
                ("kind", "enum"),
                ("family", "enum")
            ])
        );
        assert_eq!(
            errors_of(
                json!({"name": "  ", "kind": "openai", "base_url": "", "api_key_env": "OPENAI_API_KEY"}),
                &none
            ),
            pairs(&[("name", "required"), ("base_url", "required")])
        );
    }

    #[test]
    fn a_key_is_never_taken_for_a_variable_name_nor_repeated() {
        let secret = "sk-ant-api03-abcdefghijklmnop";
        let body = json!({"name": "x", "kind": "anthropic", "base_url": "https://api.anthropic.com", "api_key_env": secret});
        let errors = Read::<ProviderRequest>::from_json(&body)
            .check(|request| request.check(&KeyEnvRules::default()))
            .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(
            (errors[0].field.as_str(), errors[0].code),
            ("api_key_env", ErrorCode::Type)
        );
        assert!(!serde_json::to_string(&errors).unwrap().contains(secret));
    }

    #[test]
    fn allowed_names_are_exactly_the_ones_given() {
        let body = |name: &str| json!({"name": "x", "kind": "openai", "base_url": "https://api.openai.com", "api_key_env": name});
        let none = KeyEnvRules::default();
        assert_eq!(
            errors_of(body("HOME"), &none),
            pairs(&[("api_key_env", "enum")])
        );
        assert_eq!(
            errors_of(body("vault_token"), &none),
            pairs(&[("api_key_env", "type")])
        );
        let rules = KeyEnvRules::new(vec![
            "HOME".into(),
            "vault_token".into(),
            "my-key.v2".into(),
        ]);
        for allowed in ["HOME", "vault_token", "my-key.v2", "OPENAI_API_KEY"] {
            let read = Read::<ProviderRequest>::from_json(&body(allowed));
            assert!(
                read.check(|request| request.check(&rules)).is_ok(),
                "{allowed}"
            );
        }
        assert_eq!(
            errors_of(body("VAULT_TOKEN"), &rules),
            pairs(&[("api_key_env", "enum")])
        );
        assert_eq!(
            rules.pattern(),
            r"^(?:_API_KEY|[A-Z_][A-Z0-9_]*_API_KEY|HOME|vault_token|my\-key\.v2)$"
        );
    }

    #[test]
    fn base_urls() {
        for (url, ok) in [
            ("https://api.openai.com", true),
            ("http://127.0.0.1:8000/v0/", true),
            ("api.openai.com", false),
            ("https://", false),
            ("https://user:key@api.openai.com", false),
            ("https://api.openai.com/?key=1", false),
            ("https://api openai.com", false),
            ("http://[", false),
            ("http://[::1]:8000/v1", true),
            ("http://[::ffff:1.2.3.4]", false),
            ("http://[4d183:aB4e20:0d3]", false),
            ("http://ollama_local:11434", true),
            ("http://[::1", false),
            ("http://host:port", false),
            ("http://host:123456", false),
            ("http://a b.example", false),
            ("http://:80", false),
            ("https://user@host", false),
            ("http://example.com/a@b/c", true),
        ] {
            let body = json!({"name": "x", "kind": "openai_compatible", "base_url": url});
            let read = Read::<ProviderRequest>::from_json(&body);
            let checked = read.check(|request| request.check(&KeyEnvRules::default()));
            assert_eq!(checked.is_ok(), ok, "{url}");
        }
    }

    #[test]
    fn updates_need_their_revision() {
        let body = json!({"name": "Local", "kind": "openai_compatible", "base_url": "http://127.0.0.1:8000"});
        let read = Read::<ProviderRequest>::from_json(&body);
        let errors = read
            .check(|request| request.check_update(&KeyEnvRules::default()))
            .unwrap_err();
        assert_eq!(errors[0].field, "revision");
        let mut with_revision = body.clone();
        with_revision["revision"] = json!(0);
        assert_eq!(
            errors_of(with_revision, &KeyEnvRules::default()),
            pairs(&[("revision", "range")])
        );
    }
}
