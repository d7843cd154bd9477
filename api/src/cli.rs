//! The checks of a `cli` provider's settings ([`policy::CliConfig`]): what it
//! runs, where, with which variables, and the zone it prints resets in.

use policy::{CliConfig, CliPreset, ErrorCode, FieldError, FieldPath};
use serde::{Deserialize, Serialize};

use policy::looks_like_a_secret;

use crate::providers::KeyEnvRules;

/// The most words a command may have, program included.
pub const COMMAND_MAX_WORDS: usize = 64;

/// The longest word of a command, and the longest working directory, in characters.
pub const WORD_MAX_CHARS: usize = 4_096;

/// The most variables passed through.
pub const ENV_MAX_NAMES: usize = 64;

/// The longest time zone name, in characters.
pub const TIME_ZONE_MAX_CHARS: usize = 64;

/// A `cli` provider's settings as a client sends them: every field but the
/// preset may be left out ([`CliConfig`] says what each is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CliRequest {
    /// See [`CliConfig::preset`].
    pub preset: CliPreset,
    /// See [`CliConfig::command`]; the preset's when left out or empty.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// See [`CliConfig::working_dir`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// See [`CliConfig::env`]; none when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Vec<String>>,
    /// See [`CliConfig::time_zone`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_zone: Option<String>,
}

impl CliRequest {
    /// The settings this request describes.
    pub fn config(&self) -> CliConfig {
        CliConfig {
            preset: self.preset,
            command: self.command.clone().unwrap_or_default(),
            working_dir: self.working_dir.clone(),
            env: self.env.clone().unwrap_or_default(),
            time_zone: self.time_zone.clone(),
        }
    }
}

impl From<&CliConfig> for CliRequest {
    fn from(config: &CliConfig) -> Self {
        Self {
            preset: config.preset,
            command: Some(config.command.clone()).filter(|command| !command.is_empty()),
            working_dir: config.working_dir.clone(),
            env: Some(config.env.clone()).filter(|env| !env.is_empty()),
            time_zone: config.time_zone.clone(),
        }
    }
}

/// Every error of `cli`, each addressed under `path`.
///
/// ```
/// use policy::{CliConfig, CliPreset, FieldPath};
/// let mut cli = CliConfig::preset(CliPreset::ClaudeCode);
/// cli.env = vec!["HOME".into(), "GITHUB_TOKEN".into()];
/// cli.working_dir = Some("work".into());
/// let errors = api::check_cli(&cli, &api::KeyEnvRules::default(), &FieldPath::root().field("cli"));
/// let fields: Vec<_> = errors.iter().map(|error| error.field.as_str()).collect();
/// assert_eq!(fields, ["cli.working_dir", "cli.env[1]"]);
/// ```
pub fn check(cli: &CliConfig, keys: &KeyEnvRules, path: &FieldPath) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let command = path.field("command");
    if cli.preset == CliPreset::Generic && cli.command.is_empty() {
        errors.push(FieldError::new(
            &command,
            ErrorCode::Required,
            "is required for the generic preset: the program to run and its arguments",
        ));
    }
    if cli.command.len() > COMMAND_MAX_WORDS {
        errors.push(FieldError::new(
            &command,
            ErrorCode::Range,
            format!("has at most {COMMAND_MAX_WORDS} words"),
        ));
    }
    for (index, word) in cli.command.iter().enumerate() {
        let at = command.index(index);
        if word.chars().count() > WORD_MAX_CHARS || word.contains('\0') {
            errors.push(FieldError::new(
                &at,
                ErrorCode::Range,
                format!("must be at most {WORD_MAX_CHARS} characters, without NUL"),
            ));
        } else if index == 0 && word.trim().is_empty() {
            errors.push(FieldError::new(
                &at,
                ErrorCode::Required,
                "names the program to run",
            ));
        }
    }
    if let Some(dir) = &cli.working_dir {
        if dir.chars().count() > WORD_MAX_CHARS || dir.contains('\0') {
            errors.push(FieldError::new(
                &path.field("working_dir"),
                ErrorCode::Range,
                format!("must be at most {WORD_MAX_CHARS} characters, without NUL"),
            ));
        } else if !dir.starts_with('/') {
            errors.push(FieldError::new(
                &path.field("working_dir"),
                ErrorCode::Type,
                "must be an absolute path (starting with /)",
            ));
        }
    }
    let env = path.field("env");
    if cli.env.len() > ENV_MAX_NAMES {
        errors.push(FieldError::new(
            &env,
            ErrorCode::Range,
            format!("has at most {ENV_MAX_NAMES} names"),
        ));
    }
    for (index, name) in cli.env.iter().enumerate() {
        let at = env.index(index);
        let allowed = keys.allows(name);
        if !allowed && !is_env_name(name) {
            errors.push(FieldError::new(
                &at,
                ErrorCode::Type,
                "must be the NAME of an environment variable (letters, digits and _), never its value",
            ));
        } else if !allowed && looks_like_a_secret(name) {
            errors.push(FieldError::new(
                &at,
                ErrorCode::Enum,
                "looks like a secret: it must end in _API_KEY, or be allowed with --allow-key-env",
            ));
        } else if cli.env[..index].contains(name) {
            errors.push(FieldError::new(&at, ErrorCode::Unique, "is named twice"));
        }
    }
    if let Some(zone) = &cli.time_zone
        && !is_zone_name(zone)
    {
        errors.push(FieldError::new(
            &path.field("time_zone"),
            ErrorCode::Type,
            "must be an IANA time zone name, such as Europe/Berlin",
        ));
    }
    errors
}

/// An environment variable's name: letters, digits and `_`, not starting
/// with a digit.
fn is_env_name(name: &str) -> bool {
    !name.is_empty()
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !name.starts_with(|c: char| c.is_ascii_digit())
}

/// An IANA zone name's form (`UTC`, `Europe/Berlin`, `America/Argentina/Salta`,
/// `Etc/GMT+2`); whether the zone exists the server checks against the
/// catalogue's zones (the browser has none).
fn is_zone_name(zone: &str) -> bool {
    zone.chars().count() <= TIME_ZONE_MAX_CHARS
        && zone.split('/').all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic())
                && part
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '+'))
        })
}
