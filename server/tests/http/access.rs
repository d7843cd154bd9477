//! A server with an admin token: every API call, server function, page and
//! form post needs the token or a session from `/login`; the health check,
//! the login page and the static files stay open; wrong tokens are counted
//! and refused past the limit. And, open or not, the headers every answer
//! carries and the limits on changes and on unfinished tasks.

use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::json;

use super::{Answer, Api, HOST, Settings};

const TOKEN: &str = "test-admin-token-0123456789";

fn guarded() -> Settings {
    Settings {
        admin_token: Some(TOKEN),
        ..Settings::default()
    }
}

/// A GET as a browser on this server's page sends it, with these extra headers.
fn get(path: &str, extra: &[(&str, &str)]) -> Request<Body> {
    let mut builder = Request::builder()
        .method(Method::GET)
        .uri(path)
        .header(header::HOST, HOST);
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    builder.body(Body::empty()).unwrap()
}

async fn login(api: &Api, token: &str, extra: &[(&str, &str)]) -> Answer {
    let body =
        serde_urlencoded::to_string([("token", token), ("next", "/tasks?state=held")]).unwrap();
    let mut builder = Request::builder()
        .method(Method::POST)
        .uri("/login")
        .header(header::HOST, HOST)
        .header("sec-fetch-site", "same-origin")
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
    for (name, value) in extra {
        builder = builder.header(*name, *value);
    }
    api.send(builder.body(Body::from(body)).unwrap()).await
}

#[tokio::test]
async fn without_the_token_nothing_but_health_login_and_files_answers() {
    let api = Api::with(guarded()).await;
    let bearer = format!("Bearer {TOKEN}");
    // The login page's stylesheet and the bundle are open: they hold no data.
    let css = format!("/{}/switchback.css", server::site::pkg_dir());
    let wasm = format!("/{}/switchback_bg.wasm", server::site::pkg_dir());
    // (path, status without credentials)
    let table = [
        ("/api/providers", StatusCode::UNAUTHORIZED),
        ("/api/tasks", StatusCode::UNAUTHORIZED),
        ("/api/openapi.json", StatusCode::UNAUTHORIZED),
        ("/api/events", StatusCode::UNAUTHORIZED),
        ("/api/nowhere", StatusCode::UNAUTHORIZED),
        ("/metrics", StatusCode::UNAUTHORIZED),
        ("/tasks", StatusCode::SEE_OTHER),
        ("/", StatusCode::SEE_OTHER),
        ("/no/such/page", StatusCode::SEE_OTHER),
        ("/healthz", StatusCode::OK),
        ("/login", StatusCode::OK),
        ("/favicon.svg", StatusCode::OK),
        (css.as_str(), StatusCode::OK),
        (wasm.as_str(), StatusCode::OK),
    ];
    for (path, status) in table {
        let answer = api.send(get(path, &[])).await;
        assert_eq!(answer.status, status, "{path}: {}", answer.text);
        if status == StatusCode::UNAUTHORIZED {
            assert_eq!(answer.json()["error"], "unauthorized", "{path}");
            assert_eq!(
                answer.headers[header::WWW_AUTHENTICATE],
                "Bearer realm=\"switchback\""
            );
        }
    }
    let answer = api.send(get("/tasks?state=held", &[])).await;
    assert_eq!(
        answer.headers[header::LOCATION],
        "/login?next=%2Ftasks%3Fstate%3Dheld"
    );
    // A server function and a form post without a session.
    let call = api
        .send(
            Request::builder()
                .method(Method::POST)
                .uri("/fn/list_providers")
                .header(header::HOST, HOST)
                .header("sec-fetch-site", "same-origin")
                .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                .body(Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(call.status, StatusCode::UNAUTHORIZED, "{}", call.text);
    let form = api
        .post_form("/providers", &[("name", "P"), ("kind", "simulated")])
        .await;
    assert_eq!(form.status, StatusCode::SEE_OTHER);
    // With the token, as a program sends it, the same calls answer.
    for path in ["/api/providers", "/api/openapi.json", "/metrics"] {
        let answer = api
            .send(get(path, &[("authorization", bearer.as_str())]))
            .await;
        assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.text);
    }
    let (_, providers) = {
        let answer = api
            .send(get("/api/providers", &[("authorization", bearer.as_str())]))
            .await;
        (answer.status, answer.json())
    };
    assert_eq!(
        providers,
        json!([]),
        "the form post without a session stored nothing"
    );
}

#[tokio::test]
async fn signing_in_gives_a_strict_session_that_opens_the_pages() {
    let api = Api::with(guarded()).await;
    // A login without its token gets the form back, asking for it.
    let empty = login(&api, "  ", &[]).await;
    assert_eq!(empty.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        empty.text.contains("Enter the admin token."),
        "{}",
        empty.text
    );
    let wrong = login(&api, "not-the-token-at-all", &[]).await;
    assert_eq!(wrong.status, StatusCode::UNAUTHORIZED);
    assert!(
        wrong
            .text
            .contains("That is not this server&#39;s admin token.")
            || wrong
                .text
                .contains("That is not this server's admin token."),
        "{}",
        wrong.text
    );
    assert!(!wrong.headers.contains_key(header::SET_COOKIE));

    let signed_in = login(&api, TOKEN, &[]).await;
    assert_eq!(
        signed_in.status,
        StatusCode::SEE_OTHER,
        "{}",
        signed_in.text
    );
    assert_eq!(signed_in.headers[header::LOCATION], "/tasks?state=held");
    let cookie = signed_in.headers[header::SET_COOKIE]
        .to_str()
        .unwrap()
        .to_owned();
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/", "Max-Age=43200"] {
        assert!(cookie.contains(attribute), "{attribute} in {cookie}");
    }
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    assert!(
        !cookie.contains(TOKEN),
        "the cookie is not the token: {cookie}"
    );
    let session = cookie.split(';').next().unwrap().to_owned();

    for path in ["/tasks", "/providers", "/api/tasks", "/metrics"] {
        let answer = api.send(get(path, &[("cookie", session.as_str())])).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.text);
    }
    // A forged or cut session is no session.
    let forged = format!("{}x", session);
    let answer = api
        .send(get("/api/tasks", &[("cookie", forged.as_str())]))
        .await;
    assert_eq!(answer.status, StatusCode::UNAUTHORIZED);

    // Behind a TLS proxy the cookie is Secure.
    let over_tls = login(&api, TOKEN, &[("x-forwarded-proto", "https")]).await;
    assert!(
        over_tls.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("; Secure")
    );

    // Signing out clears the cookie.
    let out = api.post_form("/logout", &[]).await;
    assert_eq!(out.status, StatusCode::SEE_OTHER);
    assert!(
        out.headers[header::SET_COOKIE]
            .to_str()
            .unwrap()
            .contains("Max-Age=0")
    );
}

#[tokio::test]
async fn wrong_tokens_are_refused_past_the_limit_even_when_the_next_is_right() {
    let api = Api::with(guarded()).await;
    for attempt in 1..=10 {
        let answer = login(&api, &format!("wrong-guess-number-{attempt:03}"), &[]).await;
        assert_eq!(answer.status, StatusCode::UNAUTHORIZED, "attempt {attempt}");
    }
    // The eleventh guess is not even compared: the right token is refused too.
    let blocked = login(&api, TOKEN, &[]).await;
    assert_eq!(
        blocked.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        blocked.text
    );
    assert_eq!(blocked.headers[header::RETRY_AFTER], "60");
    assert!(!blocked.headers.contains_key(header::SET_COOKIE));
    // Wrong bearer tokens count against the same budget.
    let answer = api
        .send(get(
            "/api/tasks",
            &[("authorization", "Bearer wrong-guess-again-xx")],
        ))
        .await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(answer.json()["error"], "rate_limited");
    // Not even the right bearer token is compared until the window ends.
    let bearer = format!("Bearer {TOKEN}");
    let answer = api
        .send(get("/api/tasks", &[("authorization", bearer.as_str())]))
        .await;
    assert_eq!(answer.status, StatusCode::TOO_MANY_REQUESTS);
    // Another address is not held back.
    let mut from_elsewhere = get("/api/tasks", &[("authorization", bearer.as_str())]);
    from_elsewhere
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [192, 0, 2, 7],
            40_000,
        ))));
    assert_eq!(api.send(from_elsewhere).await.status, StatusCode::OK);
}

#[tokio::test]
async fn metrics_may_be_opened_for_a_scraper() {
    let api = Api::with(Settings {
        open_metrics: true,
        ..guarded()
    })
    .await;
    assert_eq!(api.send(get("/metrics", &[])).await.status, StatusCode::OK);
    assert_eq!(
        api.send(get("/api/tasks", &[])).await.status,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn every_answer_carries_the_security_headers_and_a_page_its_nonce_policy() {
    let api = Api::new().await;
    for path in [
        "/api/providers",
        "/healthz",
        "/favicon.svg",
        "/tasks",
        "/no/such/page",
    ] {
        let answer = api.send(get(path, &[])).await;
        for (name, value) in [
            ("x-content-type-options", "nosniff"),
            ("referrer-policy", "same-origin"),
            ("x-frame-options", "DENY"),
        ] {
            assert_eq!(answer.headers[name], value, "{path}");
        }
        let policy = answer.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(
            policy.contains("frame-ancestors 'none'"),
            "{path}: {policy}"
        );
        let is_page = answer.headers[header::CONTENT_TYPE]
            .to_str()
            .unwrap()
            .starts_with("text/html");
        if is_page {
            // The inline hydration script carries the nonce the policy names.
            let nonce = policy
                .split("'nonce-")
                .nth(1)
                .and_then(|rest| rest.split('\'').next())
                .unwrap_or_else(|| panic!("{path}: no nonce in {policy}"));
            assert!(
                answer.text.contains(&format!("nonce=\"{nonce}\"")),
                "{path}: the page's scripts carry the nonce"
            );
            assert!(
                !policy.contains("'unsafe-inline'; ")
                    || policy.contains("style-src-attr 'unsafe-inline'"),
                "{policy}"
            );
            assert!(
                !policy.contains("script-src 'self' 'unsafe-inline'"),
                "{policy}"
            );
        } else {
            assert!(policy.starts_with("default-src 'none'"), "{path}: {policy}");
        }
    }
    // Each page gets its own nonce.
    let first = api.send(get("/tasks", &[])).await;
    let second = api.send(get("/tasks", &[])).await;
    assert_ne!(
        first.headers[header::CONTENT_SECURITY_POLICY],
        second.headers[header::CONTENT_SECURITY_POLICY]
    );
}

#[tokio::test]
async fn a_client_past_its_budget_of_changes_waits_and_reads_go_on() {
    let api = Api::with(Settings {
        mutations_per_minute: 3,
        ..Settings::default()
    })
    .await;
    for n in 0..3 {
        let (status, body) = api
            .call(
                Method::POST,
                "/api/providers",
                Some(json!({"name": format!("P{n}"), "kind": "simulated"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let refused = api
        .send(
            Request::builder()
                .method(Method::POST)
                .uri("/api/providers")
                .header(header::HOST, HOST)
                .header(header::CONTENT_TYPE, "application/json")
                .body(Body::from(
                    json!({"name": "P3", "kind": "simulated"}).to_string(),
                ))
                .unwrap(),
        )
        .await;
    assert_eq!(
        refused.status,
        StatusCode::TOO_MANY_REQUESTS,
        "{}",
        refused.text
    );
    assert_eq!(refused.json()["error"], "rate_limited");
    let retry_after: u64 = refused.headers[header::RETRY_AFTER]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=20).contains(&retry_after), "{retry_after}");
    assert_eq!(refused.json()["retry_after_s"], retry_after);
    let (status, providers) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        providers.as_array().unwrap().len(),
        3,
        "the refused one was not stored"
    );
}

#[tokio::test]
async fn past_the_most_open_tasks_a_new_one_is_refused() {
    let api = Api::with(Settings {
        max_open_tasks: 2,
        ..Settings::default()
    })
    .await;
    let (_, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "Slow", "kind": "simulated", "script": [{"hang": true}]})),
        )
        .await;
    let (_, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "P", "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]})),
        )
        .await;
    let task = json!({"profile_id": profile["id"], "prompt": "hello"});
    let mut created = Vec::new();
    for _ in 0..2 {
        let (status, body) = api
            .call(Method::POST, "/api/tasks", Some(task.clone()))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        created.push(body);
    }
    let (status, body) = api
        .call(Method::POST, "/api/tasks", Some(task.clone()))
        .await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    assert_eq!(body["error"], "too_many_tasks");
    assert_eq!(body["limit"], 2);
    let (_, page) = api.call(Method::GET, "/api/tasks", None).await;
    assert_eq!(
        page["tasks"].as_array().unwrap().len(),
        2,
        "nothing started"
    );

    // One stops. Within the second, the count stands; past it, the next
    // request answers from the last count while it is counted again beside
    // it, and a request after the recount is taken.
    let path = format!("/api/tasks/{}/actions", created[0]["id"].as_str().unwrap());
    let mut generation = created[0]["route"]["generation"].clone();
    loop {
        // A dispatch may move the route first: stop it where it is.
        let (status, body) = api
            .call(
                Method::POST,
                &path,
                Some(json!({"action": "stop", "generation": generation})),
            )
            .await;
        match status {
            StatusCode::OK => break,
            StatusCode::CONFLICT => generation = body["route"]["generation"].clone(),
            _ => panic!("{status}: {body}"),
        }
    }
    let (status, _) = api
        .call(Method::POST, "/api/tasks", Some(task.clone()))
        .await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "counted less than a second ago"
    );
    api.clock.advance_ms(1_000);
    let (status, _) = api
        .call(Method::POST, "/api/tasks", Some(task.clone()))
        .await;
    assert_eq!(
        status,
        StatusCode::TOO_MANY_REQUESTS,
        "the stale count answers; no request waits for a recount"
    );
    let mut answered = Vec::new();
    // The recount runs beside the requests: bounded, not timed.
    let _ = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let (status, _) = api
                .call(Method::POST, "/api/tasks", Some(task.clone()))
                .await;
            answered.push(status);
            if status == StatusCode::CREATED {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await;
    assert_eq!(
        answered.last(),
        Some(&StatusCode::CREATED),
        "the recount let one more in: {answered:?}"
    );
}
