//! OpenAPI schemas for the types whose JSON is written by hand (the policy
//! crate's documents and enums, the lenient evidence fields), and the rules
//! a schema derive cannot state (a provider's fields that its kind requires,
//! the key variables this server allows, the revision an update requires).
//!
//! Enum schemas are built from the policy crate's own lists, so a new code or
//! kind reaches the document by itself; a test in the server compares the
//! whole document with `api/openapi.json`.

use std::borrow::Cow;

use policy::{
    CEILING_TOKENS_BOUNDS, Class, Confidence, ErrorCode, INITIAL_INTERVAL_MS_BOUNDS,
    JITTER_PCT_BOUNDS, LegacyAction, MAX_ESCALATIONS_BOUNDS, MAX_RETRIES_BOUNDS, MAX_WAIT_S_BOUNDS,
    OnExhausted, ProviderFamily, ProviderKind, SemanticCode,
};
use serde_json::{Value, json};
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::Schema;

use crate::providers::KeyEnvRules;

/// A schema utoipa knows by name only (fields and bodies refer to it by
/// name); [`refine`] writes what it is into the document.
macro_rules! named_schema {
    ($(#[$doc:meta])* $name:ident, $title:literal) => {
        $(#[$doc])*
        pub struct $name;

        impl utoipa::PartialSchema for $name {
            fn schema() -> RefOr<Schema> {
                RefOr::T(Schema::Object(utoipa::openapi::schema::Object::new()))
            }
        }

        impl utoipa::ToSchema for $name {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($title)
            }
        }
    };
}

/// A schema written by hand as JSON: utoipa's own schema model cannot hold
/// everything JSON Schema says (`propertyNames`, `not`, `null` types), so the
/// JSON is written into the document by [`refine`].
macro_rules! json_schema {
    ($(#[$doc:meta])* $name:ident, $title:literal, $json:expr) => {
        named_schema!($(#[$doc])* $name, $title);

        impl $name {
            /// The schema, as JSON.
            pub fn json() -> Value {
                $json
            }
        }
    };
}

json_schema!(
    /// `anthropic`, `openai`, `openai_compatible`, `simulated` or `cli`.
    ProviderKindSchema,
    "ProviderKind",
    json!({"type": "string", "description": "The wire protocol.",
           "enum": ProviderKind::ALL.map(ProviderKind::as_str)})
);

json_schema!(
    /// What a `cli` provider runs.
    CliSchema,
    "Cli",
    json!({"type": "object", "additionalProperties": false, "required": ["preset"],
        "description": "What a cli provider runs: a preset, and optionally its command, working directory, the environment variables passed through, and the time zone it prints resets in.",
        "properties": {
            "preset": {"type": "string", "enum": policy::CliPreset::ALL.map(policy::CliPreset::as_str)},
            "command": {"type": "array", "maxItems": crate::COMMAND_MAX_WORDS,
                "items": {"type": "string", "maxLength": crate::WORD_MAX_CHARS, "pattern": "^[^\\u0000]*$"},
                // The program: as the others, and not blank (`items` is for the rest).
                "prefixItems": [{"type": "string", "maxLength": crate::WORD_MAX_CHARS,
                    "allOf": [{"pattern": "^[^\\u0000]*$"},
                              {"pattern": format!("[^{}]", crate::checks::WHITE_SPACE_CLASS)}]}],
                "description": "The program (not blank), then its arguments; {model} and {prompt} are filled in at each call (without {prompt}, the prompt goes to standard input). Never run through a shell. The preset's when empty; the generic preset needs one. An argument that holds a key or token (one the server's redaction recognises, such as sk-ant-...) is refused with `type`: a key goes in a variable the CLI may see."},
            "working_dir": {"type": "string", "pattern": "^/[^\\u0000]*$", "maxLength": crate::WORD_MAX_CHARS},
            "env": {"type": "array", "maxItems": crate::ENV_MAX_NAMES, "uniqueItems": true,
                "items": {"type": "string"},
                "description": "The environment variables passed through; every other one is cleared. A name that holds KEY, TOKEN, SECRET, PASSWORD or CREDENTIAL (in any case) must be a key variable the server allows."},
            "time_zone": {"type": "string", "maxLength": crate::TIME_ZONE_MAX_CHARS,
                "pattern": "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z][A-Za-z0-9_+-]*)*$",
                "description": "The IANA zone the CLI prints its resets in (one the server knows); the server's when left out."}
        },
        // The generic preset runs only the command it is given.
        "anyOf": [
            {"properties": {"preset": {"enum": ["claude_code", "codex", "gemini_cli"]}}},
            {"required": ["command"], "properties": {"command": {"minItems": 1}}}
        ]})
);

json_schema!(
    /// Whose errors to expect.
    ProviderFamilySchema,
    "ProviderFamily",
    json!({"type": "string", "description": "Whose errors to expect.",
           "enum": ProviderFamily::ALL.map(ProviderFamily::as_str)})
);

json_schema!(
    /// A semantic code (SPEC 2.2).
    SemanticCodeSchema,
    "SemanticCode",
    json!({"type": "string", "enum": SemanticCode::ALL.map(SemanticCode::as_str)})
);

json_schema!(
    /// `transient`, `hard` or `outside`.
    ClassSchema,
    "Class",
    json!({"type": "string", "enum": Class::ALL.map(Class::as_str)})
);

json_schema!(
    /// `high`, `medium` or `low`.
    ConfidenceSchema,
    "Confidence",
    json!({"type": "string", "enum": Confidence::ALL.map(Confidence::as_str)})
);

json_schema!(
    /// One step of a simulated provider's script (see the README's "Simulated providers").
    SimulatedStepSchema,
    "SimulatedStep",
    {
        let delay = json!({"type": "integer", "minimum": 0, "maximum": 600_000,
            "description": "Milliseconds to wait before the outcome."});
        let evidence = json!({"$ref": "#/components/schemas/EvidenceRequest"});
        json!({"description": "What one call answers: a reply (optionally cut at max_tokens), an error (optionally after partial text), or a hang.",
            "oneOf": [
                {"type": "object", "additionalProperties": false, "required": ["reply"],
                 "properties": {"reply": {"type": "string"}, "stop": {"type": "string", "enum": ["end", "max_tokens"]}, "delay_ms": delay}},
                {"type": "object", "additionalProperties": false, "required": ["error"],
                 "properties": {"error": evidence, "partial": {"type": "string"}, "delay_ms": delay}},
                {"type": "object", "additionalProperties": false, "required": ["hang"],
                 "properties": {"hang": {"type": "boolean", "enum": [true]}, "delay_ms": delay}}]})
    }
);

json_schema!(
    /// A route's state (SPEC 5).
    RouteStateSchema,
    "RouteState",
    json!({"type": "string", "enum": policy::route::RouteState::ALL.map(policy::route::RouteState::as_str)})
);

json_schema!(
    /// A person's action on a route (SPEC 5).
    ManualActionSchema,
    "ManualAction",
    json!({"type": "string", "enum": policy::route::ManualAction::ALL.map(policy::route::ManualAction::as_str)})
);

json_schema!(
    /// Why a route is held or stopped (SPEC 5).
    RouteCauseSchema,
    "RouteCause",
    json!({"type": "string", "enum": policy::route::RouteCause::ALL.map(policy::route::RouteCause::as_str)})
);

json_schema!(
    /// One field error.
    FieldErrorSchema,
    "FieldError",
    json!({"type": "object", "required": ["field", "code", "message"], "properties": {
        "field": {"type": "string", "description": "The field's path, e.g. `candidates[1].policy.hard.retry.max_retries`; empty for the body itself."},
        "code": {"type": "string", "enum": ErrorCode::ALL.map(ErrorCode::as_str)},
        "message": {"type": "string"}}})
);

/// The version-2 document as JSON Schema: every field required but `retry.jitter_pct`
/// (absent is 0), bounds as SPEC 3 gives them.
fn policy_document() -> Value {
    let section = json!({
        "type": "object", "additionalProperties": false,
        "required": ["retry", "reset_wait", "on_exhausted"],
        "properties": {
            "retry": {"type": "object", "additionalProperties": false,
                "required": ["enabled", "max_retries", "initial_interval_ms"],
                "properties": {
                    "enabled": {"type": "boolean"},
                    "max_retries": {"type": "integer", "minimum": MAX_RETRIES_BOUNDS.min, "maximum": MAX_RETRIES_BOUNDS.max},
                    "initial_interval_ms": {"type": "integer", "minimum": INITIAL_INTERVAL_MS_BOUNDS.min, "maximum": INITIAL_INTERVAL_MS_BOUNDS.max},
                    "jitter_pct": {"type": "integer", "minimum": JITTER_PCT_BOUNDS.min, "maximum": JITTER_PCT_BOUNDS.max, "default": 0,
                        "description": "How far each backoff delay may move, in percent either way; seeded by the task id and the retry ordinal. Absent is 0, and 0 is not written."}}},
            "reset_wait": {"type": "object", "additionalProperties": false,
                "required": ["enabled", "max_wait_s"],
                "properties": {
                    "enabled": {"type": "boolean"},
                    "max_wait_s": {"type": "integer", "minimum": MAX_WAIT_S_BOUNDS.min, "maximum": MAX_WAIT_S_BOUNDS.max}}},
            "on_exhausted": {"type": "string", "enum": OnExhausted::ALL.map(OnExhausted::as_str)}}});
    json!({"type": "object", "additionalProperties": false,
        "description": "A version-2 policy document (SPEC 3).",
        "required": ["version", "transient", "hard"],
        "properties": {"version": {"type": "integer", "enum": [2]}, "transient": section, "hard": section}})
}

json_schema!(
    /// A version-2 policy document, as stored and answered.
    PolicySchema,
    "PolicyDocument",
    policy_document()
);

json_schema!(
    /// A policy as sent: version 2, a version-1 rule map, or `null` for the defaults.
    PolicyInputSchema,
    "PolicyInput",
    {
        let keys: Vec<&str> = Class::Transient
            .codes()
            .iter()
            .chain(Class::Hard.codes())
            .map(|code| code.as_str())
            .chain([policy::LEGACY_DEFAULT_KEY])
            .collect();
        json!({"description": "Version 2; or a version-1 rule map of codes (or `default`) to actions, normalized to version 2 and refused when its codes of one class disagree; or null for the defaults.",
            "oneOf": [policy_document(),
                {"type": "object", "not": {"required": ["version"]},
                 "propertyNames": {"enum": keys},
                 "additionalProperties": {"type": "string", "enum": LegacyAction::ALL.map(LegacyAction::as_str)}}]})
    }
);

json_schema!(
    /// Token escalation as stored and answered.
    EscalationSchema,
    "EscalationSettings",
    json!({"type": "object", "required": ["max_escalations", "ceiling_tokens"], "properties": {
        "max_escalations": {"type": "integer", "minimum": MAX_ESCALATIONS_BOUNDS.min, "maximum": MAX_ESCALATIONS_BOUNDS.max},
        "ceiling_tokens": {"type": "integer", "minimum": CEILING_TOKENS_BOUNDS.min, "maximum": CEILING_TOKENS_BOUNDS.max}}})
);

json_schema!(
    /// A header value: text, or a number, boolean or list of them; `null` is absent.
    HeaderValueSchema,
    "HeaderValue",
    json!({"description": "Text, a number, a boolean or null (left out); a list is joined with \", \", each item as text or as its JSON.",
        "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}, {"type": "array"}]})
);

json_schema!(
    /// An HTTP status: a number, or a number written as text.
    HttpStatusSchema,
    "HttpStatus",
    json!({"oneOf": [{"type": "integer", "minimum": 100, "maximum": 999},
        {"type": "string", "pattern": format!(
            "^[{white}]*0*[1-9][0-9]{{2}}[{white}]*$",
            white = crate::checks::WHITE_SPACE_CLASS
        )}]})
);

json_schema!(
    /// A body: text, or JSON kept as its JSON text.
    BodyTextSchema,
    "BodyText",
    json!({"oneOf": [{"type": "string"}, {"type": "object"}, {"type": "array"}]})
);

named_schema!(
    /// A provider's new state: a `ProviderRequest` that carries its `revision`.
    ProviderUpdateSchema,
    "ProviderUpdate"
);

named_schema!(
    /// A profile's new state: a `ProfileRequest` that carries its `revision`.
    ProfileUpdateSchema,
    "ProfileUpdate"
);

/// Every schema written by hand, by name.
fn hand_written() -> [(&'static str, Value); 17] {
    [
        ("Cli", CliSchema::json()),
        ("SimulatedStep", SimulatedStepSchema::json()),
        ("RouteState", RouteStateSchema::json()),
        ("ManualAction", ManualActionSchema::json()),
        ("RouteCause", RouteCauseSchema::json()),
        ("ProviderKind", ProviderKindSchema::json()),
        ("ProviderFamily", ProviderFamilySchema::json()),
        ("SemanticCode", SemanticCodeSchema::json()),
        ("Class", ClassSchema::json()),
        ("Confidence", ConfidenceSchema::json()),
        ("FieldError", FieldErrorSchema::json()),
        ("PolicyDocument", PolicySchema::json()),
        ("PolicyInput", PolicyInputSchema::json()),
        ("EscalationSettings", EscalationSchema::json()),
        ("HeaderValue", HeaderValueSchema::json()),
        ("HttpStatus", HttpStatusSchema::json()),
        ("BodyText", BodyTextSchema::json()),
    ]
}

/// The rules a derive cannot state, written into a generated document:
///
/// - which of a provider's fields its kind requires (one `oneOf` branch per kind);
/// - which key variables this server allows (`keys`, from `--allow-key-env`);
/// - the refusals every operation can meet before its handler runs: 401 (a
///   server with an admin token, called without it), 403 (a foreign host
///   name, or a write from another site), 408 (not read and answered in
///   time), 429 (too many changes, or wrong tokens, from this client), and for a body 400
///   (not JSON), 413 (too large) and 415 (not declared as JSON);
/// - the admin token as a bearer scheme, needed only when the server has one.
pub fn refine(document: &mut Value, keys: &KeyEnvRules) {
    without_code_examples(document);
    let schemas = &mut document["components"]["schemas"];
    for (name, schema) in hand_written() {
        schemas[name] = schema;
    }
    // What the checks refuse that the derives do not say: blank text (the
    // server trims with Rust's notion of white space, spelled out here), a
    // base URL's shape, the largest revision, an RFC 3339 time's shape.
    let white = crate::checks::WHITE_SPACE_CLASS;
    for (schema, field) in [
        ("ProviderRequest", "name"),
        ("ProfileRequest", "name"),
        ("CandidateRequest", "model"),
        ("EvidenceRequest", "provider"),
    ] {
        schemas[schema]["properties"][field]["pattern"] = json!(format!("[^{white}]"));
    }
    schemas["ProviderRequest"]["properties"]["base_url"]["pattern"] =
        json!(crate::providers::base_url_pattern(white));
    schemas["Revision"]["maximum"] = json!(i64::MAX);
    schemas["Timestamp"]["pattern"] = json!(crate::RFC3339_PATTERN);
    for (request, update) in [
        ("ProviderRequest", "ProviderUpdate"),
        ("ProfileRequest", "ProfileUpdate"),
    ] {
        let mut schema = schemas[request].clone();
        match schema["required"].as_array_mut() {
            Some(required) => required.push(json!("revision")),
            None => schema["required"] = json!(["revision"]),
        }
        // Required, and not null: `null` reads as left out.
        schema["properties"]["revision"] = json!({"$ref": "#/components/schemas/Revision"});
        schema["description"] = json!(format!(
            "{} An update carries the `revision` it was made from.",
            schema["description"].as_str().unwrap_or_default()
        ));
        schemas[update] = schema;
    }
    for name in ["ProviderRequest", "ProviderUpdate"] {
        let provider = &mut document["components"]["schemas"][name];
        provider["properties"]["api_key_env"]["pattern"] = json!(keys.pattern());
        let by_kind: Vec<Value> = ProviderKind::ALL
            .iter()
            .map(|kind| {
                let mut required = Vec::new();
                if kind.needs_base_url() {
                    required.push("base_url");
                }
                if kind.needs_key() {
                    required.push("api_key_env");
                }
                // An update may leave a cli provider's settings out (kept).
                if *kind == ProviderKind::Cli && name == "ProviderRequest" {
                    required.push("cli");
                }
                // Present and not null: `null` reads as left out.
                let mut properties = json!({"kind": {"enum": [kind.as_str()]}});
                for field in &required {
                    properties[*field] = if *field == "cli" {
                        json!({"type": "object"})
                    } else {
                        json!({"type": "string"})
                    };
                }
                // Only a simulated provider has a script.
                if *kind != ProviderKind::Simulated {
                    properties["script"] = json!({"type": "null"});
                }
                // Only a cli provider runs a command; it has no URL or key
                // variable, and only a generic command takes a family other
                // than its preset's.
                if *kind != ProviderKind::Cli {
                    properties["cli"] = json!({"type": "null"});
                    return json!({"properties": properties, "required": required});
                }
                properties["base_url"] = json!({"type": "null"});
                properties["api_key_env"] = json!({"type": "null"});
                let by_preset: Vec<Value> = policy::CliPreset::ALL
                    .iter()
                    .map(|preset| {
                        let mut branch = json!({"properties": {"cli": {"properties": {"preset": {"const": preset.as_str()}}}}});
                        if let Some(family) = preset.family() {
                            branch["properties"]["family"] = json!({"enum": [family.as_str(), null]});
                        }
                        branch
                    })
                    .collect();
                json!({"properties": properties, "required": required, "anyOf": by_preset})
            })
            .collect();
        provider["oneOf"] = Value::Array(by_kind);
    }
    // A CLI's variable: a name that does not look like a secret, or a key
    // variable the server allows.
    let secret = ["KEY", "TOKEN", "SECRET", "PASSWORD", "CREDENTIAL"]
        .map(|word| {
            word.chars()
                .map(|c| format!("[{c}{}]", c.to_ascii_lowercase()))
                .collect::<String>()
        })
        .join("|");
    document["components"]["schemas"]["Cli"]["properties"]["env"]["items"]["anyOf"] = json!([
        {"pattern": format!("^(?![A-Za-z0-9_]*({secret}))[A-Za-z_][A-Za-z0-9_]*$")},
        {"pattern": keys.pattern()}
    ]);
    let error = |description: &str| {
        json!({"description": description,
               "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ApiError"}}}})
    };
    // A repeat's key: visible ASCII (a header value), not blank, at most 200 characters.
    if let Some(parameters) = document
        .pointer_mut("/paths/~1api~1tasks/post/parameters")
        .and_then(Value::as_array_mut)
    {
        for parameter in parameters {
            if parameter["name"] == "Idempotency-Key" {
                parameter["schema"] = json!({"type": "string", "minLength": 1, "maxLength": 200,
                    "pattern": "^[\\x20-\\x7e]*[\\x21-\\x7e][\\x20-\\x7e]*$"});
            }
        }
    }
    document["components"]["securitySchemes"] = json!({"admin_token": {
        "type": "http", "scheme": "bearer",
        "description": "The server's admin token (SWITCHBACK_ADMIN_TOKEN). Needed when the server has one: always when it listens beyond loopback."}});
    // Either no credential (a server without a token) or the token.
    document["security"] = json!([{}, {"admin_token": []}]);
    let Some(paths) = document["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        let Some(operations) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in operations.iter_mut() {
            let has_body = operation.get("requestBody").is_some();
            let writes = !matches!(method.as_str(), "get" | "head" | "options");
            let responses = &mut operation["responses"];
            responses["401"] =
                error("This server has an admin token, and the call did not carry it");
            responses["403"] =
                error("A host name this server does not answer to, or a write from another site");
            responses["408"] = error("The request was not read and answered in time");
            responses["429"] = error(if writes {
                "Too many changes, or too many wrong tokens, from this client; see Retry-After"
            } else {
                "Too many wrong tokens from this client; see Retry-After"
            });
            if has_body {
                responses["400"] = error("The body is not JSON");
                responses["413"] = error("The body is larger than 1 MiB");
                responses["415"] = error("The body is not declared as application/json");
            }
        }
    }
}

/// Descriptions come from doc comments; their runnable examples are for
/// Rust readers, not for the API's: every fenced block is left out.
fn without_code_examples(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, item) in map.iter_mut() {
                match item {
                    Value::String(text) if key == "description" && text.contains("```") => {
                        let kept: Vec<&str> = text.split("```").step_by(2).collect();
                        *text = kept.concat().trim().to_owned();
                    }
                    _ => without_code_examples(item),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_code_examples),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use regex::Regex;

    use super::*;
    use crate::checks::WHITE_SPACE_CLASS;

    /// The bounds a schema states are the bounds its checks use.
    #[test]
    fn schema_bounds_are_the_checks_bounds() {
        use utoipa::PartialSchema;
        let json = |schema: utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>| {
            serde_json::to_value(schema).unwrap()
        };
        let provider = json(crate::ProviderRequest::schema());
        let profile = json(crate::ProfileRequest::schema());
        let candidate = json(crate::CandidateRequest::schema());
        let escalation = json(crate::EscalationRequest::schema());
        let evidence = json(crate::EvidenceRequest::schema());
        let id = json(crate::ProviderId::schema());
        let table: [(&Value, &str, &str, u64); 14] = [
            (
                &provider["properties"]["name"],
                "maxLength",
                "name",
                policy::NAME_MAX_CHARS as u64,
            ),
            (
                &provider["properties"]["base_url"],
                "maxLength",
                "base_url",
                crate::BASE_URL_MAX_CHARS as u64,
            ),
            (
                &provider["properties"]["api_key_env"],
                "maxLength",
                "api_key_env",
                crate::KEY_ENV_MAX_CHARS as u64,
            ),
            (
                &profile["properties"]["name"],
                "maxLength",
                "profile name",
                policy::NAME_MAX_CHARS as u64,
            ),
            (
                &profile["properties"]["candidates"],
                "minItems",
                "candidates",
                1,
            ),
            (
                &candidate["properties"]["model"],
                "maxLength",
                "model",
                policy::MODEL_MAX_CHARS as u64,
            ),
            (
                &candidate["properties"]["max_tokens"],
                "minimum",
                "max_tokens",
                policy::MAX_TOKENS_BOUNDS.min,
            ),
            (
                &candidate["properties"]["max_tokens"],
                "maximum",
                "max_tokens",
                policy::MAX_TOKENS_BOUNDS.max,
            ),
            (
                &escalation["properties"]["max_escalations"],
                "maximum",
                "max_escalations",
                policy::MAX_ESCALATIONS_BOUNDS.max,
            ),
            (
                &escalation["properties"]["ceiling_tokens"],
                "minimum",
                "ceiling_tokens",
                policy::CEILING_TOKENS_BOUNDS.min,
            ),
            (
                &escalation["properties"]["ceiling_tokens"],
                "maximum",
                "ceiling_tokens",
                policy::CEILING_TOKENS_BOUNDS.max,
            ),
            (
                &evidence["properties"]["provider"],
                "maxLength",
                "provider",
                100,
            ),
            (&id, "maxLength", "an id", crate::ID_MAX_CHARS as u64),
            (&id, "minLength", "an id", 1),
        ];
        for (schema, bound, what, expected) in table {
            assert_eq!(
                schema[bound].as_u64(),
                Some(expected),
                "{what}: {bound} in {schema}"
            );
        }
        assert_eq!(
            escalation["properties"]["max_escalations"]["minimum"].as_u64(),
            Some(policy::MAX_ESCALATIONS_BOUNDS.min)
        );
        // Close now's model, and the dry run's query (its parameters' schemas).
        let close = json(crate::CloseCircuitRequest::schema());
        let model = policy::MODEL_MAX_CHARS as u64;
        assert_eq!(
            close["properties"]["model"]["maxLength"].as_u64(),
            Some(model)
        );
        let parameters =
            serde_json::to_value(<crate::ReplayQuery as utoipa::IntoParams>::into_params(
                || Some(utoipa::openapi::path::ParameterIn::Query),
            ))
            .unwrap();
        let bound = |name: &str, bound: &str| {
            parameters
                .as_array()
                .unwrap()
                .iter()
                .find(|parameter| parameter["name"] == name)
                .and_then(|parameter| parameter["schema"][bound].as_u64())
        };
        assert_eq!(
            bound("provider_id", "maxLength"),
            Some(crate::ID_MAX_CHARS as u64)
        );
        assert_eq!(bound("model", "maxLength"), Some(model));
        assert_eq!(
            bound("limit", "maximum"),
            Some(u64::from(crate::REPLAY_TASKS_MAX))
        );
    }

    /// The document's patterns say exactly what the checks do: each row is a
    /// value, and every pattern and its check must agree on it.
    #[test]
    fn patterns_agree_with_the_checks() {
        let white = WHITE_SPACE_CLASS;
        let base_url = Regex::new(&crate::providers::base_url_pattern(white)).unwrap();
        for url in [
            "https://api.openai.com",
            "http://127.0.0.1:8000/v0/",
            "http://[::1]:8000/v1",
            "http://[4d183:aB4e20:0d3]",
            "https://example.com/a@b/c",
            "api.openai.com",
            "https://",
            "http://[",
            "http://[::1",
            "http://host:port",
            "http://host:123456",
            "http://a_b.example",
            "http://:80",
            "https://user@host",
            "https://x/?q=1",
            "https://x/#f",
            "https://a b",
            "https://a/\u{85}",
            "https://a\u{3000}b",
            "HTTP://x",
            "https://x:",
        ] {
            let request = crate::ProviderRequest {
                name: "n".into(),
                kind: ProviderKind::OpenaiCompatible,
                family: None,
                base_url: Some(url.into()),
                api_key_env: None,
                timeouts: None,
                script: None,
                cli: None,
                revision: None,
            };
            assert_eq!(
                base_url.is_match(url),
                request.check(&KeyEnvRules::default()).is_ok(),
                "{url:?}"
            );
        }

        // IPv6 addresses: the pattern and the parser agree on a few thousand
        // strings of hex digits and colons.
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let alphabet = ['0', '1', 'a', 'f', ':', ':', ':'];
        for _ in 0..20_000 {
            let length = 2 + (next() % 24) as usize;
            let address: String = (0..length)
                .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                .collect();
            let url = format!("http://[{address}]");
            let request = crate::ProviderRequest {
                name: "n".into(),
                kind: ProviderKind::OpenaiCompatible,
                family: None,
                base_url: Some(url.clone()),
                api_key_env: None,
                timeouts: None,
                script: None,
                cli: None,
                revision: None,
            };
            assert_eq!(
                base_url.is_match(&url),
                request.check(&KeyEnvRules::default()).is_ok(),
                "{url:?}"
            );
        }

        let non_blank = Regex::new(&format!("[^{white}]")).unwrap();
        for text in [
            "a", " a ", " ", "\t\n", "\u{85}", "\u{a0}x", "\u{3000}", "\u{feff}",
        ] {
            assert_eq!(
                non_blank.is_match(text),
                crate::checks::not_blank(text).is_ok(),
                "{text:?}"
            );
        }

        let rules = KeyEnvRules::new(vec!["vault_token".into(), "my-key.v2".into()]);
        let key_env = Regex::new(&rules.pattern()).unwrap();
        for name in [
            "OPENAI_API_KEY",
            "_API_KEY",
            "A1_API_KEY",
            "1_API_KEY",
            "openai_api_key",
            "vault_token",
            "VAULT_TOKEN",
            "my-key.v2",
            "myXkeyYv2",
            "HOME",
            "X_API_KEY ",
            "sk-ant-api03-x",
        ] {
            assert_eq!(key_env.is_match(name), rules.allows(name), "{name:?}");
        }

        let rfc3339 = Regex::new(crate::RFC3339_PATTERN).unwrap();
        for text in [
            "2026-11-30T02:00:20Z",
            "2026-11-30t02:00:20.123z",
            "2026-11-30T02:00:20+02:00",
            "2026-11-30 02:00:20Z",
            "2026-11-30T02:00:20",
            "2026-11-30T02:00:20.Z",
            "",
            " 2026-11-30T02:00:20Z",
            "2026-11-30T02:00:20+0200",
        ] {
            assert_eq!(
                rfc3339.is_match(text),
                text.parse::<crate::Timestamp>().is_ok(),
                "{text:?}"
            );
        }

        let status_schema = HttpStatusSchema::json();
        let status = Regex::new(status_schema["oneOf"][1]["pattern"].as_str().unwrap()).unwrap();
        for text in [
            "429",
            " 503 ",
            "0429",
            "099",
            "1000",
            "+429",
            "42",
            "4 29",
            "\u{2003}500",
        ] {
            let parsed = <crate::HttpStatus as crate::LenientJson>::from_json(json!(text));
            let accepted = parsed.is_ok_and(|status| (100..=999).contains(&status.get()));
            assert_eq!(status.is_match(text), accepted, "{text:?}");
        }
    }
}
