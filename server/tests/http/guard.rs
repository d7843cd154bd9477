//! The guard in front of every route: requests for a host name this server
//! does not answer to are refused (DNS rebinding), and so is every write a
//! browser says comes from another site (cross-site request forgery) — on
//! every mutating route there is: the JSON API, the form posts and the
//! server functions.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use super::{Api, HOST};

/// Every mutating route, with a body that would otherwise be accepted or
/// refused on its merits: `(method, path, content type, body)`.
fn mutating_routes(provider_id: &str) -> Vec<(Method, String, &'static str, String)> {
    let provider = json!({"name": "Forged", "kind": "openai", "base_url": "https://attacker.example", "api_key_env": "OPENAI_API_KEY"});
    let profile = json!({"name": "Forged", "candidates": [{"provider_id": provider_id, "model": "m", "enabled": true, "max_tokens": 10}]});
    let form = "name=Forged&kind=openai&base_url=https%3A%2F%2Fattacker.example&api_key_env=OPENAI_API_KEY";
    let mut routes = vec![
        (
            Method::POST,
            "/api/providers".into(),
            "application/json",
            provider.to_string(),
        ),
        (
            Method::PUT,
            format!("/api/providers/{provider_id}"),
            "application/json",
            provider.to_string(),
        ),
        (
            Method::DELETE,
            format!("/api/providers/{provider_id}"),
            "application/json",
            String::new(),
        ),
        (
            Method::POST,
            "/api/profiles".into(),
            "application/json",
            profile.to_string(),
        ),
        (
            Method::PUT,
            "/api/profiles/any".into(),
            "application/json",
            profile.to_string(),
        ),
        (
            Method::DELETE,
            "/api/profiles/any".into(),
            "application/json",
            String::new(),
        ),
        (
            Method::POST,
            "/api/classify".into(),
            "application/json",
            json!({"provider": "openai"}).to_string(),
        ),
        (
            Method::POST,
            "/providers".into(),
            "application/x-www-form-urlencoded",
            form.into(),
        ),
        (
            Method::POST,
            format!("/providers/{provider_id}"),
            "application/x-www-form-urlencoded",
            format!("{form}&revision=1"),
        ),
        (
            Method::POST,
            "/profiles/new".into(),
            "application/x-www-form-urlencoded",
            "name=Forged".into(),
        ),
        (
            Method::POST,
            "/profiles/any".into(),
            "application/x-www-form-urlencoded",
            "name=Forged".into(),
        ),
    ];
    routes.push((
        Method::POST,
        "/fn/save_provider".into(),
        "application/json",
        json!({"id": null, "request": provider}).to_string(),
    ));
    routes.push((
        Method::POST,
        "/fn/save_profile".into(),
        "application/json",
        json!({"id": null, "request": profile}).to_string(),
    ));
    for name in ["list_providers", "list_profiles", "load_profile_editor"] {
        routes.push((
            Method::POST,
            format!("/fn/{name}"),
            "application/x-www-form-urlencoded",
            String::new(),
        ));
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
        for path in [
            "/",
            "/profiles",
            "/api/providers",
            "/healthz",
            "/pkg/switchback.css",
        ] {
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
