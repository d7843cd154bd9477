//! The server functions the hydrated app calls: the same checks as the JSON
//! API, and every refusal answered with the API's status for it.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};

use super::{Answer, Api, HOST};

async fn call(api: &Api, name: &str, arguments: Value) -> Answer {
    api.send(
        Request::builder()
            .method(Method::POST)
            .uri(format!("/fn/{name}"))
            .header(header::HOST, HOST)
            .header("sec-fetch-site", "same-origin")
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from(arguments.to_string()))
            .unwrap(),
    )
    .await
}

#[tokio::test]
async fn refusals_have_the_apis_statuses() {
    let api = Api::new().await;
    let provider =
        json!({"name": "Local", "kind": "openai_compatible", "base_url": "http://127.0.0.1:8000"});
    let saved = call(
        &api,
        "save_provider",
        json!({"id": null, "request": provider}),
    )
    .await;
    assert_eq!(saved.status, StatusCode::OK, "{}", saved.text);
    let id = saved.json()["id"].as_str().unwrap().to_owned();

    let mut blank = provider.clone();
    blank["name"] = json!(" ");
    let refused = call(&api, "save_provider", json!({"id": null, "request": blank})).await;
    assert_eq!(refused.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(refused.json()["errors"][0]["field"], "name");

    let mut stale = provider.clone();
    stale["revision"] = json!(7);
    let refused = call(&api, "save_provider", json!({"id": id, "request": stale})).await;
    assert_eq!(refused.status, StatusCode::CONFLICT);
    assert_eq!(refused.json()["error"], "stale_revision");

    let refused = call(
        &api,
        "save_provider",
        json!({"id": "no-such-provider", "request": stale}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);

    // Arguments that are not the request at all: the caller's fault, 400.
    let refused = call(
        &api,
        "save_provider",
        json!({"id": null, "request": {"name": 1}}),
    )
    .await;
    assert_eq!(refused.status, StatusCode::BAD_REQUEST, "{}", refused.text);
    assert_eq!(refused.json()["error"], "malformed_json");

    // A function that takes its arguments as a form: a profile that is not there.
    let missing = api
        .send(
            Request::builder()
                .method(Method::POST)
                .uri("/fn/load_profile_editor")
                .header(header::HOST, HOST)
                .header("sec-fetch-site", "same-origin")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::from("id=no-such-profile"))
                .unwrap(),
        )
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND, "{}", missing.text);
    assert_eq!(missing.json()["error"], "not_found");
}
