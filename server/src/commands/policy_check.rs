//! `switchback policy check FILE`: normalize a policy document (version 1,
//! version 2, or `null` for the defaults) and print the version-2 result, or
//! every field error.

use std::path::Path;

use policy::{FieldError, FieldPath, normalize_policy};
use serde::Serialize;

/// What `policy check` prints, and how it exits.
#[derive(Debug, PartialEq, Eq)]
pub struct Outcome {
    /// The text for stdout: the normalized document or `{"errors": [...]}`.
    pub stdout: String,
    /// A message for stderr when the file could not be read or parsed.
    pub stderr: Option<String>,
    /// 0 when the document is valid, 1 otherwise.
    pub exit_code: u8,
}

#[derive(Serialize)]
struct Errors<'a> {
    errors: &'a [FieldError],
}

/// Check the policy document in the file at `path`.
pub fn check_file(path: &Path) -> Outcome {
    match std::fs::read_to_string(path) {
        Ok(text) => check_text(&text),
        Err(error) => failure(format!("cannot read {}: {error}", path.display())),
    }
}

/// Check a policy document given as JSON text.
pub fn check_text(text: &str) -> Outcome {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(value) => value,
        Err(error) => return failure(format!("not valid JSON: {error}")),
    };
    match normalize_policy(&value, &FieldPath::root()) {
        Ok(document) => Outcome {
            stdout: to_pretty_json(&document),
            stderr: None,
            exit_code: 0,
        },
        Err(errors) => Outcome {
            stdout: to_pretty_json(&Errors { errors: &errors }),
            stderr: None,
            exit_code: 1,
        },
    }
}

fn failure(message: String) -> Outcome {
    Outcome {
        stdout: String::new(),
        stderr: Some(message),
        exit_code: 1,
    }
}

fn to_pretty_json(value: &impl Serialize) -> String {
    serde_json::to_string_pretty(value).expect("policy types serialize") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parsed(outcome: &Outcome) -> Value {
        serde_json::from_str(&outcome.stdout).unwrap()
    }

    #[test]
    fn a_legacy_map_prints_its_version_2_form() {
        let outcome = check_text(r#"{"default": "try_next"}"#);
        assert_eq!(outcome.exit_code, 0);
        let document = parsed(&outcome);
        assert_eq!(document["version"], 2);
        assert_eq!(document["transient"]["retry"]["enabled"], false);
        assert_eq!(document["transient"]["on_exhausted"], "skip");
    }

    #[test]
    fn null_is_the_defaults() {
        let outcome = check_text("null");
        assert_eq!(outcome.exit_code, 0);
        assert_eq!(parsed(&outcome)["transient"]["retry"]["max_retries"], 2);
    }

    #[test]
    fn field_errors_are_printed_all_at_once() {
        let outcome =
            check_text(r#"{"retry_same": 1, "overloaded": "sometimes", "default": "stop"}"#);
        assert_eq!(outcome.exit_code, 1);
        let errors = parsed(&outcome)["errors"].as_array().unwrap().clone();
        assert!(errors.len() >= 2, "{errors:?}");
        assert!(errors.iter().all(|error| error["field"].is_string()
            && error["code"].is_string()
            && error["message"].is_string()));
        assert!(errors.contains(&json!({"field": "overloaded", "code": "enum", "message": errors.iter().find(|e| e["field"] == "overloaded").unwrap()["message"]})));
    }

    #[test]
    fn malformed_json_and_missing_files_are_clear_messages() {
        let outcome = check_text("{not json");
        assert_eq!(outcome.exit_code, 1);
        assert!(outcome.stderr.unwrap().starts_with("not valid JSON"));

        let outcome = check_file(Path::new("/no/such/policy.json"));
        assert_eq!(outcome.exit_code, 1);
        assert!(outcome.stderr.unwrap().contains("/no/such/policy.json"));
    }
}
