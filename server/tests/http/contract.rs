//! The contract as written down: the OpenAPI document is what the types
//! generate (a committed copy catches every change to it), it lists exactly
//! the routes served, it states what this server allows, and the API reads
//! evidence exactly as the catalogue's own reader does.

use std::path::Path;

use ::api::read::Read;
use ::api::{EvidenceRequest, KeyEnvRules};
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::Api;

/// The committed document: `api/openapi.json`. `UPDATE_OPENAPI=1` rewrites it.
fn committed_path() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../api/openapi.json")
}

#[test]
fn the_document_is_the_committed_one() {
    let generated = server::http::api::document(&KeyEnvRules::default());
    let text = serde_json::to_string_pretty(&generated).unwrap() + "\n";
    let path = committed_path();
    if std::env::var_os("UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &text).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == text,
        "the API's types changed its OpenAPI document: review the change, then run \
         `UPDATE_OPENAPI=1 cargo nextest run --cargo-profile tests -p server the_document_is_the_committed_one` \
         and commit api/openapi.json"
    );
}

#[tokio::test]
async fn the_served_document_states_this_servers_key_variables() {
    let api = Api::new().await;
    let (status, document) = api.call(Method::GET, "/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    let pattern = &document["components"]["schemas"]["ProviderRequest"]["properties"]["api_key_env"]
        ["pattern"];
    assert_eq!(
        pattern,
        &json!("^(?:_API_KEY|[A-Z_][A-Z0-9_]*_API_KEY|local_token)$")
    );
}

#[tokio::test]
async fn openapi_document_lists_every_route() {
    let api = Api::new().await;
    let (status, document) = api.call(Method::GET, "/api/openapi.json", None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        document["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        document["openapi"]
    );
    let mut operations: Vec<String> = document["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, item)| {
            item.as_object()
                .unwrap()
                .keys()
                .map(move |method| format!("{} {path}", method.to_uppercase()))
        })
        .collect();
    operations.sort();
    assert_eq!(
        operations,
        [
            "DELETE /api/client-keys/{id}",
            "DELETE /api/profiles/{id}",
            "DELETE /api/providers/{id}",
            "GET /api/catalogue/inbox",
            "GET /api/catalogue/reclassify",
            "GET /api/circuits",
            "GET /api/client-keys",
            "GET /api/events",
            "GET /api/overview",
            "GET /api/pauses",
            "GET /api/profiles",
            "GET /api/profiles/{id}",
            "GET /api/providers",
            "GET /api/providers/{id}",
            "GET /api/replay",
            "GET /api/tasks",
            "GET /api/tasks/{id}",
            "POST /api/circuits/close",
            "POST /api/classify",
            "POST /api/client-keys",
            "POST /api/pauses",
            "POST /api/profiles",
            "POST /api/providers",
            "POST /api/tasks",
            "POST /api/tasks/{id}/actions",
            "POST /api/tasks/{id}/turns",
            "PUT /api/profiles/{id}",
            "PUT /api/providers/{id}",
        ]
    );
    // Every documented operation is served (none is a missing route), and
    // the schemas it names exist.
    for operation in &operations {
        if operation == "GET /api/events" {
            // A stream that does not end: `tests/http/events.rs` reads it.
            continue;
        }
        let (method, path) = operation.split_once(' ').unwrap();
        let path = path.replace("{id}", "missing");
        let (status, body) = api
            .call(method.parse().unwrap(), &path, Some(json!({})))
            .await;
        assert_ne!(body["error"], "no_such_route", "{operation}");
        assert_ne!(status, StatusCode::METHOD_NOT_ALLOWED, "{operation}");
    }
    let schemas = document["components"]["schemas"].as_object().unwrap();
    for name in [
        "ProviderView",
        "ProfileView",
        "CandidateView",
        "PolicyDocument",
        "PolicyInput",
        "ApiError",
        "ProfileRequest",
        "ProfileUpdate",
        "ProviderRequest",
        "ProviderUpdate",
        "EvidenceRequest",
        "Classification",
    ] {
        assert!(schemas.contains_key(name), "schema {name}");
    }
}

#[test]
fn the_readme_lists_every_operation_and_its_answers() {
    let document = server::http::api::document(&KeyEnvRules::default());
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    let table = readme
        .split("<!-- api-table -->")
        .nth(1)
        .expect("README.md marks its API table with <!-- api-table --> on both sides");
    let mut expected = Vec::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let mut statuses: Vec<&String> =
                operation["responses"].as_object().unwrap().keys().collect();
            statuses.sort();
            let statuses: Vec<&str> = statuses.iter().map(|status| status.as_str()).collect();
            expected.push(format!(
                "| `{} {path}` | {} |",
                method.to_uppercase(),
                statuses.join(", ")
            ));
        }
    }
    expected.sort();
    let mut written: Vec<String> = table
        .lines()
        .filter(|line| line.starts_with("| `"))
        .map(str::to_owned)
        .collect();
    written.sort();
    assert_eq!(
        written, expected,
        "README.md's API table and the OpenAPI document disagree"
    );
}

/// Every fixture's evidence reads the same through the API's typed request
/// as through the catalogue's own reader (the one `switchback classify` uses).
#[test]
fn the_api_reads_evidence_as_the_catalogue_does() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
    let mut compared = 0;
    for family in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let fixture: Value = serde_json::from_str(&text).unwrap();
            let evidence = &fixture["evidence"];
            let catalogue = catalogue::Evidence::from_json_value(evidence).unwrap();
            let request = Read::<EvidenceRequest>::from_json(evidence)
                .check(EvidenceRequest::check)
                .unwrap_or_else(|errors| panic!("{evidence}: {errors:?}"));
            assert_eq!(
                server::services::evidence(&request),
                catalogue,
                "{evidence}"
            );
            compared += 1;
        }
    }
    assert!(compared > 100, "only {compared} fixtures");
}

/// Edge cases read the same way by both: accepted alike (to the same
/// evidence), or refused alike.
#[test]
fn the_api_and_the_catalogue_agree_on_edge_cases() {
    let cases = [
        json!({"provider": "openai", "status": 429.0}),
        json!({"provider": "openai", "status": "+429"}),
        json!({"provider": "openai", "status": " 429 "}),
        json!({"provider": "openai", "status": "0429"}),
        json!({"provider": "openai", "status": 1e2}),
        json!({"provider": "openai", "status": 4.5}),
        json!({"provider": "openai", "status": 99}),
        json!({"provider": "openai", "observed_at": " 2026-11-30T02:00:20Z"}),
        json!({"provider": "openai", "observed_at": "2026-11-30 02:00:20Z"}),
        json!({"provider": "openai", "observed_at": "2026-11-30T02:00:20+0200"}),
        json!({"provider": "openai", "observed_at": "2026-11-30t02:00:20.5z"}),
        json!({"provider": "openai", "observed_at": "2026-11-30T02:00:20.1234567Z"}),
        json!({"provider": "openai", "observed_at": "2026-12-31T23:59:60-01:30"}),
        json!({"provider": "openai", "observed_at": "2026-02-29T02:00:20Z"}),
        json!({"provider": "openai", "observed_at": 1_796_004_020_000_i64}),
        json!({"provider": "p".repeat(101)}),
        json!({"provider": "  "}),
        json!({"provider": 7}),
        json!({"provider": "openai", "headers": {"a": [1, [2], {"b": 3}], "n": null, "t": true}}),
        json!({"provider": "openai", "headers": {"a": {}}}),
        json!({"provider": "openai", "body": {"error": {"message": "x"}}}),
        json!({"provider": "openai", "body": 5}),
        json!({"provider": "openai", "body": [1, "x", null]}),
        json!({"provider": "openai", "headers": "retry-after: 20"}),
        json!({"provider": "openai", "status": null, "headers": null, "body": null}),
        json!({"provider": "openai", "output": ["x"]}),
        json!({"provider": "openai", "transport": "carrier_pigeon", "extra": {"deep": 1}}),
        json!({"provider": "claude_code", "time_zone": " Europe/Berlin "}),
        json!({"provider": "claude_code", "time_zone": "europe/berlin"}),
        json!({"provider": "claude_code", "time_zone": "Mars/Olympus_Mons"}),
        json!({"provider": "claude_code", "time_zone": "/etc/localtime"}),
        json!({"provider": "claude_code", "time_zone": 3}),
        json!({"provider": "claude_code", "time_zone": ""}),
    ];
    for case in cases {
        let catalogue = catalogue::Evidence::from_json_value(&case);
        let api = Read::<EvidenceRequest>::from_json(&case)
            .check(server::services::check_evidence)
            .map(|request| server::services::evidence(&request));
        match (&catalogue, &api) {
            (Ok(from_catalogue), Ok(from_api)) => assert_eq!(from_api, from_catalogue, "{case}"),
            (Err(_), Err(_)) => {}
            _ => panic!("{case}: the catalogue read {catalogue:?}, the API {api:?}"),
        }
    }
}

/// The API's verdict is the catalogue's, field for field, on every fixture.
#[test]
fn the_api_answers_the_catalogues_verdict() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
    for family in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let fixture: Value = serde_json::from_str(&text).unwrap();
            let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
            let verdict = catalogue::classify(&evidence, 1_796_004_000_000);
            let written = serde_json::to_value(&verdict).unwrap();
            let answered = serde_json::to_value(server::services::classification(verdict)).unwrap();
            assert_eq!(answered, written, "{}", fixture["evidence"]);
        }
    }
}
