//! The provider form's state: what the user typed, and the API body that the
//! policy crate validates exactly as the server does.

use policy::{FieldError, ProviderKind};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::model::ProviderView;

/// A provider form (add or edit).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProviderForm {
    /// The stored provider's id; `None` when adding.
    pub id: Option<String>,
    /// The revision it was loaded at.
    pub revision: Option<i64>,
    /// Name as typed.
    pub name: String,
    /// Kind (`anthropic`, ...).
    pub kind: String,
    /// Family, or empty for the kind's default.
    pub family: String,
    /// Base URL as typed.
    pub base_url: String,
    /// Key variable name as typed.
    pub api_key_env: String,
}

impl ProviderForm {
    /// An empty form for a new provider.
    pub fn new_provider() -> Self {
        Self {
            kind: ProviderKind::Anthropic.as_str().to_owned(),
            ..Self::default()
        }
    }

    /// The form for a stored provider.
    pub fn from_view(view: &ProviderView) -> Self {
        Self {
            id: Some(view.id.clone()),
            revision: Some(view.revision),
            name: view.name.clone(),
            kind: view.kind.clone(),
            family: view.family.clone(),
            base_url: view.base_url.clone(),
            api_key_env: view.api_key_env.clone().unwrap_or_default(),
        }
    }

    /// The API body: empty optional fields are left out.
    pub fn to_json(&self) -> Value {
        let mut body = Map::new();
        body.insert("name".into(), json!(self.name));
        body.insert("kind".into(), json!(self.kind));
        for (name, value) in [
            ("family", &self.family),
            ("base_url", &self.base_url),
            ("api_key_env", &self.api_key_env),
        ] {
            if !value.trim().is_empty() {
                body.insert(name.into(), json!(value.trim()));
            }
        }
        if let Some(revision) = self.revision {
            body.insert("revision".into(), json!(revision));
        }
        Value::Object(body)
    }

    /// Every field error, from the policy crate.
    pub fn validate(&self, allowed_key_envs: &[String]) -> Vec<FieldError> {
        let body = self.to_json();
        let result = if self.id.is_some() {
            policy::normalize_provider_update(&body, allowed_key_envs)
        } else {
            policy::normalize_provider(&body, allowed_key_envs)
        };
        result.err().unwrap_or_default()
    }

    /// The form a plain HTML post describes.
    pub fn from_pairs(pairs: &[(String, String)]) -> Self {
        let mut form = Self::default();
        for (name, value) in pairs {
            match name.as_str() {
                "id" => form.id = Some(value.clone()).filter(|id| !id.is_empty()),
                "revision" => form.revision = value.trim().parse().ok(),
                "name" => form.name = value.clone(),
                "kind" => form.kind = value.clone(),
                "family" => form.family = value.clone(),
                "base_url" => form.base_url = value.clone(),
                "api_key_env" => form.api_key_env = value.clone(),
                _ => {}
            }
        }
        form
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
        assert_eq!(form.validate(&[]), vec![]);
        form.api_key_env = "VAULT_TOKEN".into();
        assert_eq!(form.validate(&[])[0].field, "api_key_env");
        assert_eq!(form.validate(&["VAULT_TOKEN".to_owned()]), vec![]);
        form.kind = "simulated".into();
        form.base_url.clear();
        form.api_key_env.clear();
        assert_eq!(
            form.to_json(),
            json!({"name": "Anthropic", "kind": "simulated"})
        );
        assert_eq!(form.validate(&[]), vec![]);
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
        let form = ProviderForm::from_pairs(&pairs);
        assert_eq!(
            (form.id.as_deref(), form.revision, form.kind.as_str()),
            (Some("p1"), Some(2), "openai")
        );
    }
}
