//! Providers as they arrive from a form or the API (SPEC 1, 6): kind, family,
//! base URL and the *name* of the environment variable that holds the key.
//! A key itself is never accepted: the checks here refuse anything but a
//! variable name the server allows.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::errors::{ErrorCode, FieldError};
use crate::path::FieldPath;
use crate::profile::NAME_MAX_CHARS;
use crate::read;

/// The wire protocol a provider speaks.
///
/// ```
/// assert_eq!(policy::ProviderKind::Anthropic.default_family(), policy::ProviderFamily::Anthropic);
/// assert_eq!(serde_json::to_value(policy::ProviderKind::OpenaiCompatible).unwrap(), "openai_compatible");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// `POST {base_url}/v1/messages`, streaming.
    Anthropic,
    /// `POST {base_url}/v1/chat/completions`, streaming.
    Openai,
    /// The OpenAI protocol served by someone else (vLLM, Ollama, OpenRouter, ...).
    OpenaiCompatible,
    /// An in-process provider that fails on a script: demos and tests.
    Simulated,
}

impl ProviderKind {
    /// Every kind, in the order forms list them.
    pub const ALL: [ProviderKind; 4] = [
        Self::Anthropic,
        Self::Openai,
        Self::OpenaiCompatible,
        Self::Simulated,
    ];

    /// The snake_case name, as in JSON.
    ///
    /// ```
    /// assert_eq!(policy::ProviderKind::Simulated.as_str(), "simulated");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::OpenaiCompatible => "openai_compatible",
            Self::Simulated => "simulated",
        }
    }

    /// The family whose errors to expect when none is given: the kind itself,
    /// and the generic OpenAI-compatible shapes for `simulated`.
    pub fn default_family(self) -> ProviderFamily {
        match self {
            Self::Anthropic => ProviderFamily::Anthropic,
            Self::Openai => ProviderFamily::Openai,
            Self::OpenaiCompatible | Self::Simulated => ProviderFamily::OpenaiCompatible,
        }
    }

    /// Whether the kind needs a base URL (a simulated provider has none).
    pub fn needs_base_url(self) -> bool {
        self != Self::Simulated
    }

    /// Whether the kind needs a key (local OpenAI-compatible servers often do not).
    pub fn needs_key(self) -> bool {
        matches!(self, Self::Anthropic | Self::Openai)
    }
}

/// Whose errors a provider sends: selects the catalogue's rules.
///
/// ```
/// assert_eq!(policy::ProviderFamily::AzureOpenai.as_str(), "azure_openai");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderFamily {
    /// Anthropic's API.
    Anthropic,
    /// OpenAI's API.
    Openai,
    /// Azure OpenAI.
    AzureOpenai,
    /// Google Gemini (and Vertex AI).
    Gemini,
    /// AWS Bedrock.
    Bedrock,
    /// OpenRouter.
    Openrouter,
    /// Mistral.
    Mistral,
    /// Groq.
    Groq,
    /// DeepSeek.
    Deepseek,
    /// Ollama.
    Ollama,
    /// Any other OpenAI-compatible server.
    OpenaiCompatible,
}

impl ProviderFamily {
    /// Every family, in the order forms list them.
    pub const ALL: [ProviderFamily; 11] = [
        Self::Anthropic,
        Self::Openai,
        Self::AzureOpenai,
        Self::Gemini,
        Self::Bedrock,
        Self::Openrouter,
        Self::Mistral,
        Self::Groq,
        Self::Deepseek,
        Self::Ollama,
        Self::OpenaiCompatible,
    ];

    /// The snake_case name, as in JSON and in the catalogue's evidence.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Anthropic => "anthropic",
            Self::Openai => "openai",
            Self::AzureOpenai => "azure_openai",
            Self::Gemini => "gemini",
            Self::Bedrock => "bedrock",
            Self::Openrouter => "openrouter",
            Self::Mistral => "mistral",
            Self::Groq => "groq",
            Self::Deepseek => "deepseek",
            Self::Ollama => "ollama",
            Self::OpenaiCompatible => "openai_compatible",
        }
    }
}

/// A provider after the shape checks.
///
/// ```
/// use serde_json::json;
/// let draft = policy::normalize_provider(
///     &json!({"name": "Anthropic", "kind": "anthropic", "base_url": "https://api.anthropic.com", "api_key_env": "ANTHROPIC_API_KEY"}),
///     &[],
/// ).unwrap();
/// assert_eq!(draft.family, policy::ProviderFamily::Anthropic);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderDraft {
    /// A name people recognise, trimmed.
    pub name: String,
    /// The wire protocol.
    pub kind: ProviderKind,
    /// Whose errors to expect.
    pub family: ProviderFamily,
    /// The base URL, without a trailing slash; empty for a simulated provider.
    pub base_url: String,
    /// The name of the environment variable that holds the key, if the kind needs one.
    pub api_key_env: Option<String>,
    /// The revision the client last saw (updates only).
    pub revision: Option<u64>,
}

/// Whether the server lets a provider read the variable `name`: any name that
/// ends in `_API_KEY`, plus the names given with `--allow-key-env`.
///
/// ```
/// assert!(policy::key_env_allowed("ANTHROPIC_API_KEY", &[]));
/// assert!(!policy::key_env_allowed("DATABASE_PASSWORD", &[]));
/// assert!(policy::key_env_allowed("DATABASE_PASSWORD", &["DATABASE_PASSWORD".to_string()]));
/// ```
pub fn key_env_allowed(name: &str, extra_allowed: &[String]) -> bool {
    name.ends_with("_API_KEY") || extra_allowed.iter().any(|allowed| allowed == name)
}

/// Checks a provider's shape. `extra_allowed_key_envs` are the names the
/// server allows beyond `*_API_KEY`. With `revision_required`, updates must
/// carry the revision they were made from.
///
/// ```
/// use serde_json::json;
/// let errors = policy::normalize_provider(
///     &json!({"name": "x", "kind": "openai", "base_url": "ftp://x", "api_key_env": "sk-live-123"}),
///     &[],
/// ).unwrap_err();
/// let fields: Vec<&str> = errors.iter().map(|error| error.field.as_str()).collect();
/// assert_eq!(fields, ["base_url", "api_key_env"]);
/// ```
pub fn normalize_provider(
    value: &Value,
    extra_allowed_key_envs: &[String],
) -> Result<ProviderDraft, Vec<FieldError>> {
    normalize_provider_with(value, extra_allowed_key_envs, false)
}

/// [`normalize_provider`] for an update: `revision` is required.
///
/// ```
/// use serde_json::json;
/// let body = json!({"name": "Local", "kind": "openai_compatible", "base_url": "http://127.0.0.1:8000", "revision": 2});
/// assert_eq!(policy::normalize_provider_update(&body, &[]).unwrap().revision, Some(2));
/// ```
pub fn normalize_provider_update(
    value: &Value,
    extra_allowed_key_envs: &[String],
) -> Result<ProviderDraft, Vec<FieldError>> {
    normalize_provider_with(value, extra_allowed_key_envs, true)
}

const PROVIDER_FIELDS: &[&str] = &[
    "name",
    "kind",
    "family",
    "base_url",
    "api_key_env",
    "revision",
];

fn normalize_provider_with(
    value: &Value,
    extra_allowed_key_envs: &[String],
    revision_required: bool,
) -> Result<ProviderDraft, Vec<FieldError>> {
    let root = FieldPath::root();
    let mut errors = Vec::new();
    let Some(map) = read::object(value, &root, PROVIDER_FIELDS, &mut errors) else {
        return Err(errors);
    };
    let present = |name: &str| map.get(name).filter(|value| !value.is_null());
    let name = read::required(map, "name", &root, &mut errors)
        .and_then(|name| read::text(name, &root.field("name"), NAME_MAX_CHARS, &mut errors));
    let kind_options: Vec<(&str, ProviderKind)> = ProviderKind::ALL
        .iter()
        .map(|kind| (kind.as_str(), *kind))
        .collect();
    let kind = read::required(map, "kind", &root, &mut errors)
        .and_then(|kind| read::one_of(kind, &root.field("kind"), &kind_options, &mut errors));
    let family_options: Vec<(&str, ProviderFamily)> = ProviderFamily::ALL
        .iter()
        .map(|family| (family.as_str(), *family))
        .collect();
    let family = present("family")
        .map(|family| read::one_of(family, &root.field("family"), &family_options, &mut errors));

    let base_url = match (present("base_url"), kind) {
        (Some(url), _) => read::text(url, &root.field("base_url"), 2_000, &mut errors)
            .and_then(|url| check_base_url(&url, &root.field("base_url"), &mut errors)),
        (None, Some(kind)) if kind.needs_base_url() => {
            errors.push(FieldError::new(
                &root.field("base_url"),
                ErrorCode::Required,
                "is required for this kind",
            ));
            None
        }
        (None, _) => Some(String::new()),
    };

    let api_key_env = match (present("api_key_env"), kind) {
        (Some(env), _) => read::text(env, &root.field("api_key_env"), 200, &mut errors)
            .and_then(|env| {
                check_key_env(
                    env,
                    &root.field("api_key_env"),
                    extra_allowed_key_envs,
                    &mut errors,
                )
            })
            .map(Some),
        (None, Some(kind)) if kind.needs_key() => {
            errors.push(FieldError::new(
                &root.field("api_key_env"),
                ErrorCode::Required,
                "is required for this kind: the name of the environment variable that holds the key",
            ));
            None
        }
        (None, _) => Some(None),
    };

    let revision = match present("revision") {
        Some(revision) => read::bounded(
            revision,
            &root.field("revision"),
            crate::document::Bounds {
                min: 1,
                max: i64::MAX as u64,
            },
            &mut errors,
        ),
        None if revision_required => {
            errors.push(FieldError::new(
                &root.field("revision"),
                ErrorCode::Required,
                "is required: send the revision you last read",
            ));
            None
        }
        None => None,
    };

    match (name, kind, base_url, api_key_env) {
        (Some(name), Some(kind), Some(base_url), Some(api_key_env)) if errors.is_empty() => {
            Ok(ProviderDraft {
                name,
                kind,
                family: family.flatten().unwrap_or(kind.default_family()),
                base_url,
                api_key_env,
                revision,
            })
        }
        _ => Err(errors),
    }
}

/// `http(s)://host[:port][/path]`: no credentials, query or fragment (a key
/// must never hide in a URL), no white space. The trailing slash is dropped.
fn check_base_url(url: &str, path: &FieldPath, errors: &mut Vec<FieldError>) -> Option<String> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let problem = match rest {
        None => Some("must start with http:// or https://"),
        Some(rest) => {
            let host = rest.split('/').next().unwrap_or("");
            if host.is_empty() {
                Some("must name a host")
            } else if host.contains('@') {
                Some("must not carry credentials: name the key's environment variable in api_key_env")
            } else if rest.contains('?') || rest.contains('#') {
                Some("must not have a query or fragment")
            } else if rest.chars().any(char::is_whitespace) {
                Some("must not contain spaces")
            } else {
                None
            }
        }
    };
    match problem {
        Some(message) => {
            errors.push(FieldError::new(path, ErrorCode::Type, message));
            None
        }
        None => Some(url.trim_end_matches('/').to_owned()),
    }
}

fn check_key_env(
    name: String,
    path: &FieldPath,
    extra_allowed: &[String],
    errors: &mut Vec<FieldError>,
) -> Option<String> {
    let well_formed = name
        .chars()
        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit());
    if !well_formed {
        // Never echo the value: it may be a key pasted into the wrong field.
        errors.push(FieldError::new(
            path,
            ErrorCode::Type,
            "must be the NAME of an environment variable (capital letters, digits and _), never the key itself",
        ));
        return None;
    }
    if !key_env_allowed(&name, extra_allowed) {
        errors.push(FieldError::new(
            path,
            ErrorCode::Enum,
            "must end in _API_KEY, or be allowed with --allow-key-env",
        ));
        return None;
    }
    Some(name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(value: Value) -> Vec<(String, &'static str)> {
        normalize_provider(&value, &[])
            .unwrap_err()
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect()
    }

    #[test]
    fn defaults_by_kind() {
        let simulated =
            normalize_provider(&json!({"name": "Sim", "kind": "simulated"}), &[]).unwrap();
        assert_eq!(simulated.family, ProviderFamily::OpenaiCompatible);
        assert_eq!(
            (simulated.base_url.as_str(), simulated.api_key_env),
            ("", None)
        );

        let local = normalize_provider(
            &json!({"name": "vLLM", "kind": "openai_compatible", "family": "ollama", "base_url": "http://127.0.0.1:11434/"}),
            &[],
        )
        .unwrap();
        assert_eq!(local.family, ProviderFamily::Ollama);
        assert_eq!(local.base_url, "http://127.0.0.1:11434");
    }

    #[test]
    fn required_and_enum_errors() {
        assert_eq!(
            fields(json!({"kind": "anthropic"})),
            [
                ("name".to_owned(), "required"),
                ("base_url".to_owned(), "required"),
                ("api_key_env".to_owned(), "required"),
            ]
        );
        assert_eq!(
            fields(json!({"name": "x", "kind": "grpc", "family": "acme", "api_key": "sk-1"})),
            [
                ("api_key".to_owned(), "unknown_field"),
                ("kind".to_owned(), "enum"),
                ("family".to_owned(), "enum"),
            ]
        );
    }

    #[test]
    fn a_key_is_never_taken_for_a_variable_name() {
        let secret = "sk-ant-api03-abcdefghijklmnop";
        let errors = normalize_provider(
            &json!({"name": "x", "kind": "anthropic", "base_url": "https://api.anthropic.com", "api_key_env": secret}),
            &[],
        )
        .unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "api_key_env");
        assert!(!serde_json::to_string(&errors).unwrap().contains(secret));
    }

    #[test]
    fn allowlist() {
        let body = json!({"name": "x", "kind": "openai", "base_url": "https://api.openai.com", "api_key_env": "HOME"});
        assert_eq!(
            normalize_provider(&body, &[]).unwrap_err()[0].code,
            ErrorCode::Enum
        );
        assert!(normalize_provider(&body, &["HOME".to_owned()]).is_ok());
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
        ] {
            let body = json!({"name": "x", "kind": "openai_compatible", "base_url": url});
            assert_eq!(normalize_provider(&body, &[]).is_ok(), ok, "{url}");
        }
    }
}
