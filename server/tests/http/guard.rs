//! The guard in front of every route: requests for a host name this server
//! does not answer to are refused (DNS rebinding), and so is every write a
//! browser says comes from another site (cross-site request forgery) — on
//! every mutating route there is: the JSON API, the form posts and the
//! server functions.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use super::{Api, HOST};

/// Every mutating route the router has, walked from where the router gets
/// them (the OpenAPI document's operations, the registered server
/// functions, the form posts and the sign-in posts), each with a body that
/// would otherwise be accepted or refused on its merits: `(method, path,
/// content type, body)`.
fn mutating_routes(provider_id: &str) -> Vec<(Method, String, &'static str, String)> {
    let provider = json!({"name": "Forged", "kind": "openai", "base_url": "https://attacker.example", "api_key_env": "OPENAI_API_KEY"});
    let profile = json!({"name": "Forged", "candidates": [{"provider_id": provider_id, "model": "m", "enabled": true, "max_tokens": 10}]});
    let form = "name=Forged&kind=openai&base_url=https%3A%2F%2Fattacker.example&api_key_env=OPENAI_API_KEY";
    let json_body = |template: &str| match template {
        "/api/providers" | "/api/providers/{id}" => provider.to_string(),
        "/api/profiles" | "/api/profiles/{id}" => profile.to_string(),
        "/api/classify" => json!({"provider": "openai"}).to_string(),
        "/api/tasks" => json!({"profile_id": "any", "prompt": "forged"}).to_string(),
        "/api/tasks/{id}/turns" => json!({"prompt": "forged"}).to_string(),
        "/api/tasks/{id}/actions" => json!({"action": "stop", "generation": 1}).to_string(),
        _ => "{}".to_owned(),
    };
    let concrete = |template: &str| {
        if template.starts_with("/api/providers/") || template.starts_with("/providers/") {
            template.replace("{id}", provider_id)
        } else {
            template.replace("{id}", "any")
        }
    };
    let mut routes = Vec::new();
    let document = server::http::api::document(&::api::KeyEnvRules::default());
    for (template, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let method: Method = method.to_uppercase().parse().unwrap();
            if !matches!(method, Method::GET | Method::HEAD | Method::OPTIONS) {
                routes.push((
                    method,
                    concrete(template),
                    "application/json",
                    json_body(template),
                ));
            }
        }
    }
    let form_body = |template: &str| match template {
        "/providers" => form.to_owned(),
        "/providers/{id}" => format!("{form}&revision=1"),
        "/profiles/new" | "/profiles/{id}" => "name=Forged".to_owned(),
        "/tasks" => "profile_id=any&prompt=forged".to_owned(),
        "/tasks/{id}/actions" => "action=stop&generation=1".to_owned(),
        "/login" => "token=a-guess-of-the-admin-token".to_owned(),
        _ => String::new(),
    };
    for template in server::http::FORM_POSTS
        .iter()
        .chain(&server::http::ACCESS_POSTS)
    {
        routes.push((
            Method::POST,
            concrete(template),
            "application/x-www-form-urlencoded",
            form_body(template),
        ));
    }
    // Every server function is a write as far as the guard is concerned:
    // it answers POSTs, and a read may be forged to leak what it reads.
    for (path, method) in leptos::server_fn::axum::server_fn_paths() {
        let body = match path.rsplit('/').next().unwrap_or_default() {
            "save_provider" => json!({"id": null, "request": provider}).to_string(),
            "save_profile" => json!({"id": null, "request": profile}).to_string(),
            "create_task" => {
                json!({"request": {"profile_id": "any", "prompt": "forged"}}).to_string()
            }
            _ => "{}".to_owned(),
        };
        let content_type = if body == "{}" {
            "application/x-www-form-urlencoded"
        } else {
            "application/json"
        };
        let body = if body == "{}" { String::new() } else { body };
        routes.push((method, path.to_owned(), content_type, body));
    }
    // The walk found the routes it must have: it cannot pass by finding none.
    for (method, path) in [
        ("POST", "/api/tasks"),
        ("POST", "/api/tasks/any/actions"),
        ("DELETE", "/api/profiles/any"),
        ("POST", "/tasks"),
        ("POST", "/login"),
        ("POST", "/logout"),
        ("POST", "/fn/create_task"),
        ("POST", "/fn/act_on_task"),
    ] {
        assert!(
            routes
                .iter()
                .any(|(m, p, _, _)| m.as_str() == method && p == path),
            "the walk missed {method} {path}"
        );
    }
    routes
}

fn forged(
    method: &Method,
    path: &str,
    content_type: &str,
    body: &str,
    forgery: (&'static str, &'static str),
) -> Request<Body> {
    Request::builder()
        .method(method.clone())
        .uri(path)
        .header(header::HOST, HOST)
        .header(header::CONTENT_TYPE, content_type)
        .header(forgery.0, forgery.1)
        .body(Body::from(body.to_owned()))
        .unwrap()
}

#[tokio::test]
async fn every_mutating_route_refuses_a_cross_site_write() {
    let api = Api::new().await;
    let provider = api.provider("Real").await;
    let provider_id = provider["id"].as_str().unwrap();
    let forgeries = [
        ("sec-fetch-site", "cross-site"),
        ("sec-fetch-site", "same-site"),
        ("origin", "http://attacker.example"),
        ("origin", "null"),
    ];
    for (method, path, content_type, body) in mutating_routes(provider_id) {
        for forgery in forgeries {
            let answer = api
                .send(forged(&method, &path, content_type, &body, forgery))
                .await;
            assert_eq!(
                answer.status,
                StatusCode::FORBIDDEN,
                "{method} {path} with {forgery:?}: {}",
                answer.text
            );
            assert_eq!(answer.json()["error"], "forbidden", "{method} {path}");
        }
    }
    let (_, providers) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(
        providers.as_array().unwrap().len(),
        1,
        "nothing forged was stored: {providers}"
    );
    assert_eq!(providers[0]["name"], "Real");
    let (_, profiles) = api.call(Method::GET, "/api/profiles", None).await;
    assert_eq!(profiles, json!([]));
    let (_, tasks) = api.call(Method::GET, "/api/tasks", None).await;
    assert_eq!(tasks["tasks"], json!([]), "no forged task started");

    // The same requests from the server's own pages go through to their handlers.
    for (method, path, content_type, body) in mutating_routes(provider_id) {
        let answer = api
            .send(forged(
                &method,
                &path,
                content_type,
                &body,
                ("sec-fetch-site", "same-origin"),
            ))
            .await;
        assert!(
            answer.status != StatusCode::FORBIDDEN && !answer.status.is_server_error(),
            "{method} {path}: {} {}",
            answer.status,
            answer.text
        );
    }
}

#[tokio::test]
async fn foreign_host_names_are_refused_everywhere() {
    let api = Api::new().await;
    for (host, allowed) in [
        ("attacker.example", false),
        ("attacker.example:3000", false),
        ("localhost.attacker.example", false),
        ("localhost:3000", true),
        ("127.0.0.1:3000", true),
        ("[::1]:3000", true),
        ("switchback.example.com", true),
    ] {
        let css = format!("/{}/switchback.css", server::site::pkg_dir());
        for path in ["/", "/profiles", "/api/providers", "/healthz", css.as_str()] {
            let answer = api
                .send(
                    Request::builder()
                        .uri(path)
                        .header(header::HOST, host)
                        .body(Body::empty())
                        .unwrap(),
                )
                .await;
            assert_eq!(
                answer.status == StatusCode::FORBIDDEN,
                !allowed,
                "{host} {path}: {}",
                answer.status
            );
        }
    }
}

#[tokio::test]
async fn programs_without_browser_headers_may_write() {
    let api = Api::new().await;
    // curl and SDKs send neither Origin nor Sec-Fetch-Site.
    let provider = api.provider("From a script").await;
    assert_eq!(provider["name"], "From a script");
}
