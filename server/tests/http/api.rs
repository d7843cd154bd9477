//! The JSON API: every endpoint and every error path.

use std::sync::Arc;

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use super::{Api, HOST, fields, pairs};

#[tokio::test]
async fn providers_crud() {
    let api = Api::new().await;
    let created = api.provider("Anthropic").await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["kind"], "anthropic");
    assert_eq!(created["family"], "anthropic");
    assert_eq!(created["revision"], 1);
    assert_eq!(created["created_at"], "2026-11-30T00:53:20Z");

    assert_eq!(created["api_key_env_set"], true);
    assert!(!created.to_string().contains("sk-ant-test-value"));

    // A name allowed with --allow-key-env is taken exactly as given, whatever
    // its form; a variable that is set says so (never its value).
    let (status, local) = api
        .call(Method::POST, "/api/providers", Some(json!({"name": "Local", "kind": "openai_compatible", "family": "ollama", "base_url": "http://127.0.0.1:11434", "api_key_env": "local_token"})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{local}");
    assert_eq!(local["api_key_env_set"], true);
    assert!(!local.to_string().contains("local-test-value"));
    let (status, unset) = api
        .call(Method::POST, "/api/providers", Some(json!({"name": "Unset", "kind": "openai", "base_url": "https://api.openai.com", "api_key_env": "OPENAI_API_KEY"})))
        .await;
    assert_eq!(
        (status, &unset["api_key_env_set"]),
        (StatusCode::CREATED, &json!(false))
    );

    let (status, list) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(status, StatusCode::OK);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Anthropic", "Local", "Unset"]);

    let (status, one) = api
        .call(Method::GET, &format!("/api/providers/{id}"), None)
        .await;
    assert_eq!((status, &one), (StatusCode::OK, &created));

    let update = json!({"name": "Anthropic EU", "kind": "anthropic", "base_url": "https://eu.example/", "api_key_env": "ANTHROPIC_API_KEY", "revision": 1});
    let (status, updated) = api
        .call(
            Method::PUT,
            &format!("/api/providers/{id}"),
            Some(update.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(
        (updated["revision"].as_i64(), updated["base_url"].as_str()),
        (Some(2), Some("https://eu.example"))
    );

    let (status, stale) = api
        .call(
            Method::PUT,
            &format!("/api/providers/{id}"),
            Some(update.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        (stale["error"].as_str(), stale["revision"].as_i64()),
        (Some("stale_revision"), Some(2))
    );

    let mut no_revision = update.clone();
    no_revision.as_object_mut().unwrap().remove("revision");
    let (status, body) = api
        .call(
            Method::PUT,
            &format!("/api/providers/{id}"),
            Some(no_revision),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("revision", "required")])
        )
    );

    let (status, body) = api
        .call(Method::PUT, "/api/providers/nope", Some(update))
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    let (status, body) = api.call(Method::GET, "/api/providers/nope", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("not_found"))
    );

    let (status, _) = api
        .call(Method::DELETE, &format!("/api/providers/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = api
        .call(Method::DELETE, &format!("/api/providers/{id}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn provider_field_errors_store_nothing_and_never_echo_a_key() {
    let api = Api::new().await;
    let secret = "sk-ant-api03-verysecretvalue";
    let (status, body) = api
        .call(Method::POST, "/api/providers", Some(json!({"name": "", "kind": "anthropic", "base_url": "https://user:pw@host", "api_key_env": secret, "api_key": secret})))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        fields(&body),
        pairs(&[
            ("api_key", "unknown_field"),
            ("name", "required"),
            ("base_url", "type"),
            ("api_key_env", "type")
        ])
    );
    assert!(!body.to_string().contains(secret), "{body}");
    let (_, list) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(list, json!([]));

    let (status, body) = api
        .call(Method::POST, "/api/providers", Some(json!({"name": "x", "kind": "openai", "base_url": "https://api.openai.com", "api_key_env": "HOME"})))
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("api_key_env", "enum")])
        )
    );

    api.provider("Taken").await;
    let (status, body) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "TAKEN", "kind": "simulated"})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("name", "unique")])
        )
    );
}

#[tokio::test]
async fn malformed_bodies_get_clear_4xx() {
    let api = Api::new().await;
    let request = |content_type: Option<&str>, body: Vec<u8>| {
        let builder = Request::builder()
            .method(Method::POST)
            .uri("/api/profiles")
            .header(header::HOST, HOST);
        let builder = match content_type {
            Some(content_type) => builder.header(header::CONTENT_TYPE, content_type),
            None => builder,
        };
        builder.body(Body::from(body)).unwrap()
    };
    let answer = api
        .send(request(Some("application/json"), b"{\"name\": ".to_vec()))
        .await;
    let (status, body) = (answer.status, answer.json());
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("malformed_json"))
    );
    let answer = api.send(request(Some("text/plain"), b"{}".to_vec())).await;
    let (status, body) = (answer.status, answer.json());
    assert_eq!(
        (status, body["error"].as_str()),
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            Some("unsupported_media_type")
        )
    );
    let answer = api.send(request(None, b"{}".to_vec())).await;
    let (status, body) = (answer.status, answer.json());
    assert_eq!(status, StatusCode::UNSUPPORTED_MEDIA_TYPE, "{body}");
    let huge = format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024));
    let answer = api
        .send(request(Some("application/json"), huge.into_bytes()))
        .await;
    let (status, body) = (answer.status, answer.json());
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::PAYLOAD_TOO_LARGE, Some("payload_too_large"))
    );
    let (status, body) = api
        .call(Method::POST, "/api/profiles", Some(json!([1, 2])))
        .await;
    assert_eq!(
        (status, fields(&body)),
        (StatusCode::UNPROCESSABLE_ENTITY, pairs(&[("", "type")]))
    );
    let (status, body) = api.call(Method::GET, "/api/no-such-thing", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::NOT_FOUND, Some("no_such_route"))
    );
    let (status, _) = api
        .call(Method::PATCH, "/api/profiles", Some(json!({})))
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
}

#[tokio::test]
async fn profiles_normalize_legacy_policies_and_keep_candidate_identity() {
    let api = Api::new().await;
    let provider = api.provider("Anthropic").await;
    let provider_id = provider["id"].as_str().unwrap();
    let (status, created) = api
        .call(Method::POST, "/api/profiles", Some(json!({
            "name": "Coding",
            "candidates": [
                {"provider_id": provider_id, "model": "model-alpha", "enabled": true, "max_tokens": 8000,
                 "policy": {"default": "try_next"}},
                {"provider_id": provider_id, "model": "model-beta", "enabled": false, "max_tokens": 4000,
                 "escalation": {"max_escalations": 3, "ceiling_tokens": 64000}},
            ],
        })))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let profile_id = created["id"].as_str().unwrap().to_owned();
    assert_eq!(created["revision"], 1);
    let alpha = &created["candidates"][0];
    assert_eq!(alpha["policy"]["version"], 2, "stored as version 2");
    assert_eq!(alpha["policy"]["transient"]["retry"]["enabled"], false);
    assert_eq!(alpha["policy"]["hard"]["on_exhausted"], "skip");
    let beta = &created["candidates"][1];
    assert_eq!(beta["enabled"], false);
    assert_eq!(
        beta["policy"]["transient"]["retry"]["max_retries"], 2,
        "absent policy is the defaults"
    );
    assert_eq!(
        beta["escalation"],
        json!({"max_escalations": 3, "ceiling_tokens": 64000})
    );
    assert_eq!(
        created["candidates"][0]["escalation"],
        json!({"max_escalations": 1, "ceiling_tokens": 32768})
    );

    let (status, fetched) = api
        .call(Method::GET, &format!("/api/profiles/{profile_id}"), None)
        .await;
    assert_eq!((status, &fetched), (StatusCode::OK, &created));
    let (_, list) = api.call(Method::GET, "/api/profiles", None).await;
    assert_eq!(list, json!([created.clone()]));

    // Reorder, keep ids, add one, and send a version-2 policy.
    let mut v2 = alpha["policy"].clone();
    v2["hard"]["retry"]["max_retries"] = json!(5);
    let update = json!({
        "name": "Coding", "revision": 1,
        "candidates": [
            {"id": beta["id"], "provider_id": provider_id, "model": "model-beta", "enabled": true, "max_tokens": 4000},
            {"id": alpha["id"], "provider_id": provider_id, "model": "model-alpha", "enabled": true, "max_tokens": 8000, "policy": v2},
            {"provider_id": provider_id, "model": "model-gamma", "enabled": true, "max_tokens": 1},
        ],
    });
    let (status, updated) = api
        .call(
            Method::PUT,
            &format!("/api/profiles/{profile_id}"),
            Some(update.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["revision"], 2);
    assert_eq!(updated["candidates"][0]["id"], beta["id"]);
    assert_eq!(updated["candidates"][1]["id"], alpha["id"]);
    assert_eq!(
        updated["candidates"][1]["policy"]["hard"]["retry"]["max_retries"],
        5
    );
    let gamma_id = updated["candidates"][2]["id"].as_str().unwrap();
    assert!(!gamma_id.is_empty() && gamma_id != alpha["id"] && gamma_id != beta["id"]);

    let (status, stale) = api
        .call(
            Method::PUT,
            &format!("/api/profiles/{profile_id}"),
            Some(update.clone()),
        )
        .await;
    assert_eq!(
        (status, stale["revision"].as_i64()),
        (StatusCode::CONFLICT, Some(2))
    );

    let mut unknown = update.clone();
    unknown["revision"] = json!(2);
    unknown["candidates"][0]["id"] = json!("someone-elses");
    let (status, body) = api
        .call(
            Method::PUT,
            &format!("/api/profiles/{profile_id}"),
            Some(unknown),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("candidates[0].id", "not_found")])
        )
    );
    let (_, after) = api
        .call(Method::GET, &format!("/api/profiles/{profile_id}"), None)
        .await;
    assert_eq!(after, updated, "a refused update changes nothing");

    let (status, _) = api
        .call(Method::PUT, "/api/profiles/nope", Some(update))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // The provider is in use now.
    let (status, body) = api
        .call(
            Method::DELETE,
            &format!("/api/providers/{provider_id}"),
            None,
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::CONFLICT, Some("in_use"))
    );
    assert!(body["message"].as_str().unwrap().contains("Coding"));

    let (status, _) = api
        .call(Method::DELETE, &format!("/api/profiles/{profile_id}"), None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = api
        .call(Method::GET, &format!("/api/profiles/{profile_id}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = api
        .call(Method::DELETE, &format!("/api/profiles/{profile_id}"), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn profile_errors_come_all_at_once_and_store_nothing() {
    let api = Api::new().await;
    let provider = api.provider("Anthropic").await;
    let provider_id = provider["id"].as_str().unwrap();
    let (status, body) = api
        .call(Method::POST, "/api/profiles", Some(json!({
            "name": "Bad",
            "candidates": [
                {"provider_id": provider_id, "model": "a", "enabled": true, "max_tokens": 0,
                 "policy": {"rate_limited": "retry_same", "overloaded": "try_next"}},
                {"provider_id": provider_id, "model": "b", "enabled": true, "max_tokens": 10,
                 "policy": {"version": 2, "transient": {"retry": {"enabled": true, "max_retries": 11, "initial_interval_ms": 500},
                   "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
                   "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 99},
                   "reset_wait": {"enabled": false, "max_wait_s": 604801}, "on_exhausted": "later"}}},
            ],
        })))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(
        fields(&body),
        pairs(&[
            ("candidates[0].max_tokens", "range"),
            ("candidates[0].policy", "conflict"),
            ("candidates[1].policy.transient.retry.max_retries", "range"),
            (
                "candidates[1].policy.hard.retry.initial_interval_ms",
                "range"
            ),
            ("candidates[1].policy.hard.reset_wait.max_wait_s", "range"),
            ("candidates[1].policy.hard.on_exhausted", "enum"),
        ])
    );

    let (status, body) = api
        .call(Method::POST, "/api/profiles", Some(json!({"name": "Refs", "candidates": [
            {"provider_id": "no-such-provider", "model": "a", "enabled": true, "max_tokens": 10},
            {"id": "invented", "provider_id": provider_id, "model": "b", "enabled": true, "max_tokens": 10},
        ]})))
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[
                ("candidates[0].provider_id", "not_found"),
                ("candidates[1].id", "not_found")
            ])
        )
    );
    let (status, body) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "Empty", "candidates": []})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("candidates", "required")])
        )
    );
    let (_, list) = api.call(Method::GET, "/api/profiles", None).await;
    assert_eq!(list, json!([]), "nothing stored");

    let ok = json!({"name": "Same", "candidates": [{"provider_id": provider_id, "model": "a", "enabled": true, "max_tokens": 10}]});
    assert_eq!(
        api.call(Method::POST, "/api/profiles", Some(ok.clone()))
            .await
            .0,
        StatusCode::CREATED
    );
    let (status, body) = api.call(Method::POST, "/api/profiles", Some(ok)).await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("name", "unique")])
        )
    );
}

#[tokio::test]
async fn concurrent_profile_updates_exactly_one_wins() {
    let api = Api::new().await;
    let provider = api.provider("Anthropic").await;
    let body = json!({"name": "Race", "candidates": [{"provider_id": provider["id"], "model": "a", "enabled": true, "max_tokens": 10}]});
    let (_, created) = api.call(Method::POST, "/api/profiles", Some(body)).await;
    let path = format!("/api/profiles/{}", created["id"].as_str().unwrap());
    let api = Arc::new(api);
    let mut writers = Vec::new();
    for writer in 0..6 {
        let api = api.clone();
        let path = path.clone();
        let candidate = created["candidates"][0].clone();
        writers.push(tokio::spawn(async move {
            let update =
                json!({"name": format!("Race {writer}"), "revision": 1, "candidates": [candidate]});
            api.call(Method::PUT, &path, Some(update)).await.0
        }));
    }
    let mut statuses = Vec::new();
    for writer in writers {
        statuses.push(writer.await.unwrap());
    }
    statuses.sort();
    assert_eq!(
        statuses,
        [
            StatusCode::OK,
            StatusCode::CONFLICT,
            StatusCode::CONFLICT,
            StatusCode::CONFLICT,
            StatusCode::CONFLICT,
            StatusCode::CONFLICT
        ]
    );
}

#[tokio::test]
async fn classify_answers_evidence_and_refuses_what_is_not() {
    let api = Api::new().await;
    let (status, body) = api
        .call(Method::POST, "/api/classify", Some(json!({
            "provider": "anthropic", "status": 429,
            "headers": {"Retry-After": "20"},
            "body": "{\"type\":\"error\",\"error\":{\"type\":\"rate_limit_error\",\"message\":\"Number of requests has exceeded your rate limit\"}}",
            "observed_at": "2026-11-30T02:00:00Z",
        })))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["code"].as_str(), body["class"].as_str()),
        (Some("rate_limited"), Some("transient"))
    );
    assert_eq!(body["retry_after_ms"], 20_000);
    assert_eq!(body["reset_at"], "2026-11-30T02:00:20Z");
    assert_eq!(body["catalogue"], catalogue::CATALOGUE_VERSION);

    let (status, body) = api
        .call(Method::POST, "/api/classify", Some(json!({"status": 500})))
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("provider", "required")])
        )
    );
    let (status, body) = api
        .call(
            Method::POST,
            "/api/classify",
            Some(json!({"provider": "openai", "status": 7})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("status", "range")])
        )
    );

    // A wall-clock reset printed without a zone is read in the evidence's time zone.
    let (status, body) = api
        .call(
            Method::POST,
            "/api/classify",
            Some(json!({
                "provider": "claude_code",
                "output": "You've hit your limit · resets 3pm",
                "observed_at": "2026-11-30T02:00:00Z",
                "time_zone": "Europe/Berlin",
            })),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        (body["code"].as_str(), body["reset_at"].as_str()),
        (Some("usage_limited"), Some("2026-11-30T14:00:00Z"))
    );
    // A zone the database does not know is refused at its field, beside the others.
    let (status, body) = api
        .call(
            Method::POST,
            "/api/classify",
            Some(json!({"provider": "claude_code", "status": 7, "time_zone": "Mars/Olympus_Mons"})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("status", "range"), ("time_zone", "enum")])
        )
    );
}

#[tokio::test]
async fn pauses_circuits_and_replay_refuse_at_their_fields_and_change_nothing() {
    let api = Api::new().await;
    let provider = api.provider("Anthropic").await;
    let id = provider["id"].as_str().unwrap();
    let long = "x".repeat(101);

    // Pauses: an id past the document's bound, paused or resumed, is refused
    // at its field; an id that names nothing is a missing provider.
    for paused in [true, false] {
        let (status, body) = api
            .call(
                Method::POST,
                "/api/pauses",
                Some(json!({"provider_id": long, "paused": paused})),
            )
            .await;
        assert_eq!(
            (status, fields(&body)),
            (
                StatusCode::UNPROCESSABLE_ENTITY,
                pairs(&[("provider_id", "range")])
            )
        );
    }
    let (status, body) = api
        .call(
            Method::POST,
            "/api/pauses",
            Some(json!({"provider_id": "", "paused": true})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("provider_id", "required")])
        )
    );
    let (status, _) = api
        .call(
            Method::POST,
            "/api/pauses",
            Some(json!({"provider_id": "  ", "paused": true})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, body) = api.call(Method::GET, "/api/pauses", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"everywhere": null, "providers": [
            {"provider_id": id, "provider": "Anthropic", "paused_since": null}
        ]})
    );

    // Close now: the document's bounds at their fields; a model of white
    // space names no open circuit, so nothing was open to close.
    let (status, body) = api
        .call(
            Method::POST,
            "/api/circuits/close",
            Some(json!({"provider_id": long, "model": "", "until": "2026-12-07T00:00:00Z"})),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[("provider_id", "range"), ("model", "required")])
        )
    );
    let (status, body) = api
        .call(
            Method::POST,
            "/api/circuits/close",
            Some(json!({"provider_id": id, "model": " ", "until": "2026-12-07T00:00:00Z"})),
        )
        .await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::CONFLICT, Some("circuit_changed")),
        "{body}"
    );

    // Replay: empty and too long at their fields; white space has no calls.
    let (status, body) = api
        .call(
            Method::GET,
            &format!(
                "/api/replay?provider_id=&model={}&limit=51",
                "m".repeat(201)
            ),
            None,
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            pairs(&[
                ("limit", "range"),
                ("model", "range"),
                ("provider_id", "required")
            ])
        )
    );
    let (status, body) = api
        .call(
            Method::GET,
            &format!("/api/replay?provider_id={id}&model=%20"),
            None,
        )
        .await;
    assert_eq!((status, body), (StatusCode::OK, json!({"tasks": []})));
    // A parameter left out, or one the endpoint does not take, is named.
    for (query, expected) in [
        (format!("provider_id={id}"), ("model", "required")),
        (
            format!("provider_id={id}&model=m&modle=m"),
            ("modle", "unknown_field"),
        ),
        (
            format!("provider_id={id}&model=m&limit=ten"),
            ("limit", "type"),
        ),
        // A name or a value the caller wrote is never read as the reader's words.
        (
            format!("provider_id={id}&model=m&missing%20field%20%60limit=1"),
            ("missing field `limit", "unknown_field"),
        ),
        (
            format!("provider_id={id}&model=m&a%60b%60,%20expected%20=1"),
            ("a`b`, expected ", "unknown_field"),
        ),
    ] {
        let (status, body) = api
            .call(Method::GET, &format!("/api/replay?{query}"), None)
            .await;
        assert_eq!(
            (status, fields(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, pairs(&[expected])),
            "{query}"
        );
    }
    for (query, expected) in [
        ("state=bogus", ("state", "enum")),
        ("state=missing%20field%20%60limit", ("state", "enum")),
        ("state=unknown%20field%20%60cursor", ("state", "enum")),
    ] {
        let (status, body) = api
            .call(Method::GET, &format!("/api/tasks?{query}"), None)
            .await;
        assert_eq!(
            (status, fields(&body)),
            (StatusCode::UNPROCESSABLE_ENTITY, pairs(&[expected])),
            "{query}"
        );
    }
}
