//! The plain-form posts: the same services as the JSON API, answered as
//! pages. Success redirects; a refusal renders the page again with the
//! values sent, the errors at their fields and the refusal's own status.

use axum::http::{Method, StatusCode, header};
use serde_json::json;

use super::Api;

fn location(answer: &super::Answer) -> &str {
    answer
        .headers
        .get(header::LOCATION)
        .and_then(|value| value.to_str().ok())
        .unwrap_or("")
}

#[tokio::test]
async fn a_provider_form_saves_and_redirects() {
    let api = Api::new().await;
    let answer = api
        .post_form(
            "/providers",
            &[
                ("name", "Anthropic"),
                ("kind", "anthropic"),
                ("family", ""),
                ("base_url", "https://api.anthropic.com/"),
                ("api_key_env", "ANTHROPIC_API_KEY"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    assert_eq!(location(&answer), "/providers");
    let (_, list) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(list[0]["base_url"], "https://api.anthropic.com");
    assert_eq!(list[0]["family"], "anthropic");

    // An edit names the revision it was read at; a second one with the same
    // revision is stale, and the page says so with a 409.
    let id = list[0]["id"].as_str().unwrap().to_owned();
    let edit = |name: &'static str| {
        [
            ("id", id.clone()),
            ("revision", "1".to_owned()),
            ("name", name.to_owned()),
            ("kind", "anthropic".to_owned()),
            ("base_url", "https://eu.example".to_owned()),
            ("api_key_env", "ANTHROPIC_API_KEY".to_owned()),
        ]
    };
    let sent = edit("Anthropic EU");
    let sent: Vec<(&str, &str)> = sent.iter().map(|(a, b)| (*a, b.as_str())).collect();
    let answer = api.post_form(&format!("/providers/{id}"), &sent).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    let again = edit("Anthropic again");
    let again: Vec<(&str, &str)> = again.iter().map(|(a, b)| (*a, b.as_str())).collect();
    let answer = api.post_form(&format!("/providers/{id}"), &again).await;
    assert_eq!(answer.status, StatusCode::CONFLICT);
    assert!(
        answer.text.contains("Someone else saved this first"),
        "{}",
        answer.text
    );
    assert!(
        answer.text.contains("Anthropic again"),
        "the values sent are kept"
    );
    let (_, one) = api
        .call(Method::GET, &format!("/api/providers/{id}"), None)
        .await;
    assert_eq!(
        one["name"], "Anthropic EU",
        "a refused edit changes nothing"
    );
}

#[tokio::test]
async fn an_agent_cli_is_set_up_from_the_form_and_a_key_in_its_command_is_never_shown() {
    let api = Api::new().await;
    let secret = "sk-ant-api03-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";
    let command = format!("claude\r\n-p\r\n--api-key\r\n{secret}");
    let answer = api
        .post_form(
            "/providers",
            &[
                ("name", "Claude Code"),
                ("kind", "cli"),
                ("base_url", ""),
                ("api_key_env", ""),
                ("cli.preset", "claude_code"),
                ("cli.command", &command),
                ("cli.working_dir", "/srv/agent"),
                ("cli.env", "PATH HOME"),
                ("cli.time_zone", "Europe/Berlin"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.text.contains("item 4: looks like a key or token"),
        "the argument named by its place: {}",
        answer.text
    );
    assert!(
        !answer.text.contains(secret),
        "the key is never shown again"
    );
    assert!(
        answer.text.contains("value=\"/srv/agent\""),
        "the rest is kept"
    );

    let answer = api
        .post_form(
            "/providers",
            &[
                ("name", "Claude Code"),
                ("kind", "cli"),
                ("cli.preset", "claude_code"),
                ("cli.command", "claude\r\n-p\r\n--output-format\r\nstream-json\r\n--verbose\r\n--model\r\n{model}\r\n"),
                ("cli.working_dir", "/srv/agent"),
                ("cli.env", "PATH HOME"),
                ("cli.time_zone", "Europe/Berlin"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    let (_, list) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(
        list[0]["cli"],
        json!({"preset": "claude_code",
            "command": ["claude", "-p", "--output-format", "stream-json", "--verbose", "--model", "{model}"],
            "working_dir": "/srv/agent", "env": ["PATH", "HOME"], "time_zone": "Europe/Berlin"})
    );
    assert_eq!(list[0]["family"], "claude_code");
    // Its edit form shows the settings as they were typed.
    let page = page(&api, "/providers").await;
    assert!(page.contains("--output-format\nstream-json"), "{page}");
    assert!(page.contains("value=\"PATH HOME\""), "{page}");
}

#[tokio::test]
async fn a_refused_provider_form_comes_back_with_its_errors_and_never_the_key() {
    let api = Api::new().await;
    let secret = "sk-ant-api03-pasted-by-mistake";
    let answer = api
        .post_form(
            "/providers",
            &[
                ("name", "Mine"),
                ("kind", "openai"),
                ("base_url", "ftp://nowhere"),
                ("api_key_env", secret),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.text.contains("must start with http:// or https://"),
        "{}",
        answer.text
    );
    assert!(answer.text.contains("never the key itself"));
    assert!(
        answer.text.contains("value=\"Mine\""),
        "the name sent is kept"
    );
    assert!(
        !answer.text.contains(secret),
        "a pasted key is never shown again"
    );

    // A key too long for a variable name, and one hidden in a URL's query.
    let long_key = format!("sk-ant-api03-{}", "k".repeat(240));
    let answer = api
        .post_form(
            "/providers",
            &[
                ("name", "Mine"),
                ("kind", "openai"),
                (
                    "base_url",
                    "https://api.openai.com/v1?api_key=sk-proj-hidden-in-the-url",
                ),
                ("api_key_env", &long_key),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.text.contains("must not have a query or fragment"),
        "{}",
        answer.text
    );
    assert!(!answer.text.contains(&long_key));
    assert!(!answer.text.contains("sk-proj-hidden-in-the-url"));
    let (_, list) = api.call(Method::GET, "/api/providers", None).await;
    assert_eq!(list, json!([]), "nothing stored");
}

#[tokio::test]
async fn a_profile_form_saves_edits_structure_and_refuses_with_field_errors() {
    let api = Api::new().await;
    let provider = api.provider("Anthropic").await;
    let provider_id = provider["id"].as_str().unwrap();
    let candidate = |field: &str| format!("candidates[0].{field}");
    let base: Vec<(String, String)> = vec![
        ("name".into(), "Coding".into()),
        (candidate("provider_id"), provider_id.into()),
        (candidate("model"), "model-alpha".into()),
        (candidate("enabled"), "on".into()),
        (candidate("max_tokens"), "4096".into()),
        (candidate("escalation.max_escalations"), "1".into()),
        (candidate("escalation.ceiling_tokens"), "32768".into()),
        (candidate("policy.transient.retry.enabled"), "on".into()),
        (candidate("policy.transient.retry.max_retries"), "2".into()),
        (
            candidate("policy.transient.retry.initial_interval_ms"),
            "500".into(),
        ),
        (
            candidate("policy.transient.reset_wait.enabled"),
            "on".into(),
        ),
        (
            candidate("policy.transient.reset_wait.max_wait_s"),
            "60".into(),
        ),
        (candidate("policy.transient.on_exhausted"), "skip".into()),
        (candidate("policy.hard.retry.max_retries"), "2".into()),
        (
            candidate("policy.hard.retry.initial_interval_ms"),
            "500".into(),
        ),
        (
            candidate("policy.hard.reset_wait.max_wait_s"),
            "3600".into(),
        ),
        (candidate("policy.hard.on_exhausted"), "stop".into()),
    ];
    let with = |changes: &[(&str, &str)]| -> Vec<(String, String)> {
        let mut pairs = base.clone();
        for (name, value) in changes {
            match pairs.iter_mut().find(|(field, _)| field == name) {
                Some(pair) => pair.1 = (*value).to_owned(),
                None => pairs.push(((*name).to_owned(), (*value).to_owned())),
            }
        }
        pairs
    };
    let post = |pairs: Vec<(String, String)>, path: &'static str| {
        let api = &api;
        async move {
            let borrowed: Vec<(&str, &str)> = pairs
                .iter()
                .map(|(a, b)| (a.as_str(), b.as_str()))
                .collect();
            api.post_form(path, &borrowed).await
        }
    };

    // A structural button edits the form and saves nothing.
    let answer = post(with(&[("op", "add")]), "/profiles/new").await;
    assert_eq!(answer.status, StatusCode::OK);
    assert!(answer.text.contains("Candidate 2"), "a second card");
    let (_, list) = api.call(Method::GET, "/api/profiles", None).await;
    assert_eq!(list, json!([]));

    // Refused: the typed values come back with their errors, and a 422.
    let answer = post(
        with(&[
            (&candidate("policy.transient.retry.max_retries"), "11"),
            (&candidate("max_tokens"), "lots"),
        ]),
        "/profiles/new",
    )
    .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer.text.contains("must be between 1 and 10"),
        "{}",
        answer.text
    );
    assert!(answer.text.contains("must be an integer"));
    assert!(answer.text.contains("Nothing was saved"));
    assert!(
        answer.text.contains("value=\"lots\""),
        "what was typed is kept"
    );

    // Saved: a redirect to the stored profile, with the policy as posted.
    let answer = post(base.clone(), "/profiles/new").await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    let path = location(&answer).to_owned();
    assert!(path.starts_with("/profiles/"), "{path}");
    let (_, profile) = api.call(Method::GET, &format!("/api{path}"), None).await;
    assert_eq!(
        profile["candidates"][0]["policy"]["hard"]["on_exhausted"],
        "stop"
    );
    assert_eq!(
        profile["candidates"][0]["policy"]["hard"]["retry"]["enabled"],
        false
    );

    // Another profile may not take its name.
    let answer = post(base, "/profiles/new").await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        answer
            .text
            .contains("another profile already has this name")
    );
}

/// Over 1 MiB is a 413 with the same JSON error on every surface: the JSON
/// API, a form post and a server function.
#[tokio::test]
async fn a_body_too_large_is_a_413_everywhere() {
    let api = Api::new().await;
    let huge = "x".repeat(1024 * 1024 + 1);
    for (path, content_type) in [
        ("/api/providers", "application/json"),
        ("/providers", "application/x-www-form-urlencoded"),
        ("/profiles/new", "application/x-www-form-urlencoded"),
        ("/fn/save_provider", "application/json"),
    ] {
        let answer = api
            .send(
                axum::http::Request::builder()
                    .method(Method::POST)
                    .uri(path)
                    .header(header::HOST, super::HOST)
                    .header(header::CONTENT_TYPE, content_type)
                    .body(axum::body::Body::from(huge.clone()))
                    .unwrap(),
            )
            .await;
        assert_eq!(answer.status, StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert_eq!(answer.json()["error"], "payload_too_large", "{path}");
    }
}

/// A task whose only call streams part of an answer and then fails: it is held
/// (an unsafe effect) as soon as the call returns. Answers its id and generation.
async fn held_task(api: &super::Api) -> (String, i64) {
    let (_, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": "Cut off", "kind": "simulated", "script": [{"partial": "Half an ans",
                "error": {"provider": "anthropic", "status": 200,
                    "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}]})),
        )
        .await;
    let (_, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "Drill", "candidates": [{"provider_id": provider["id"], "model": "claude-drill", "enabled": true, "max_tokens": 64}]})),
        )
        .await;
    let answer = api
        .post_form(
            "/tasks",
            &[
                ("profile_id", profile["id"].as_str().unwrap()),
                ("prompt", "  Summarise the incident.  "),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    let id = location(&answer)
        .strip_prefix("/tasks/")
        .expect("to the route view")
        .to_owned();
    // The simulated call answers at once; wait for its outcome to be written.
    let task = testkit::eventually_async(std::time::Duration::from_secs(5), || async {
        let (_, task) = api
            .call(Method::GET, &format!("/api/tasks/{id}"), None)
            .await;
        (task["route"]["state"] == "held").then_some(task)
    })
    .await;
    assert_eq!(task["turns"][0]["prompt"], "Summarise the incident.");
    (id, task["route"]["generation"].as_i64().unwrap())
}

#[tokio::test]
async fn a_refused_task_form_comes_back_with_its_errors_and_starts_nothing() {
    let api = Api::new().await;
    simulated_profile(&api, "Kept").await;
    let answer = api
        .post_form("/tasks", &[("profile_id", ""), ("prompt", "Keep me")])
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(answer.text.contains("must not be empty"), "{}", answer.text);
    assert!(answer.text.contains("Keep me"), "the prompt sent is kept");
    // A profile that is gone by the time the form is posted.
    let answer = api
        .post_form(
            "/tasks",
            &[("profile_id", "no-such-profile"), ("prompt", "Hi")],
        )
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(answer.text.contains("names no profile"), "{}", answer.text);
    let (_, page) = api.call(Method::GET, "/api/tasks", None).await;
    assert_eq!(page["tasks"], json!([]));
}

#[tokio::test]
async fn an_action_form_is_fenced_by_its_generation_and_stop_asks_first() {
    let api = Api::new().await;
    let (id, generation) = held_task(&api).await;
    let path = format!("/tasks/{id}/actions");
    let route = || async {
        api.call(Method::GET, &format!("/api/tasks/{id}"), None)
            .await
            .1["route"]
            .clone()
    };
    let before = route().await;
    let current = generation.to_string();
    let stale = (generation - 1).to_string();

    // Stop without its confirmation asks, and does nothing yet.
    let answer = api
        .post_form(&path, &[("action", "stop"), ("generation", &current)])
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{}", answer.text);
    assert!(answer.text.contains("Stop this route for good?"));
    assert!(answer.text.contains("Confirm stop"));
    // The question confirms at the generation the click was made at.
    let confirm = &answer.text[answer
        .text
        .find("Confirm stop")
        .unwrap_or(0)
        .saturating_sub(400)..];
    assert!(
        confirm.contains(&format!("name=\"generation\" value=\"{current}\"")),
        "{confirm}"
    );
    assert_eq!(route().await, before);
    // Asked on a generation that is no longer the route's: refused at once (409).
    let answer = api
        .post_form(&path, &[("action", "stop"), ("generation", &stale)])
        .await;
    assert_eq!(answer.status, StatusCode::CONFLICT, "{}", answer.text);
    assert!(!answer.text.contains("Confirm stop"));
    assert_eq!(route().await, before);

    // A stale generation: 409, the route as it is now, nothing changed.
    let answer = api
        .post_form(&path, &[("action", "skip_now"), ("generation", &stale)])
        .await;
    assert_eq!(answer.status, StatusCode::CONFLICT, "{}", answer.text);
    assert!(
        answer
            .text
            .contains("The route changed before your click arrived: it is now held for a person"),
        "{}",
        answer.text
    );
    assert_eq!(route().await, before);

    // Not valid in this state: 422; not an action at all: 422 at its field.
    let answer = api
        .post_form(
            &path,
            &[("action", "cancel_wait"), ("generation", &current)],
        )
        .await;
    assert_eq!(
        answer.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        answer.text
    );
    let answer = api
        .post_form(&path, &[("action", "reboot"), ("generation", "x")])
        .await;
    assert_eq!(answer.status, StatusCode::UNPROCESSABLE_ENTITY);
    let main = &answer.text[answer.text.find("<main").unwrap_or(0)..];
    assert!(
        main.contains("must be retry_now, skip_now, cancel_wait or stop"),
        "{main}"
    );
    assert!(answer.text.contains("must be a whole number"));
    assert_eq!(route().await, before);

    // Confirmed: stopped, and back to the route view.
    let answer = api
        .post_form(
            &path,
            &[
                ("action", "stop"),
                ("generation", &current),
                ("confirmed", "yes"),
            ],
        )
        .await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.text);
    assert_eq!(location(&answer), format!("/tasks/{id}"));
    let after = route().await;
    assert_eq!(after["state"], "stopped");
    assert_eq!(after["cause"], "stopped_by_user");
}

/// The client keys page's forms: a key made without JavaScript is shown on the
/// page that answers the post, once; a refused form comes back with its errors
/// at their fields; revoking redirects, and the key is revoked.
#[tokio::test]
async fn a_client_key_form_shows_its_key_once_and_revokes() {
    let api = Api::new().await;
    let profile = simulated_profile(&api, "Drafts").await;
    let profile_id = profile["id"].as_str().unwrap();

    // Nothing chosen: the page again, 422, the error under the profiles.
    let refused = api.post_form("/client-keys", &[("name", "laptop")]).await;
    assert_eq!(
        refused.status,
        StatusCode::UNPROCESSABLE_ENTITY,
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("id=\"key-f-profile_ids-error\""),
        "{}",
        refused.text
    );
    assert!(
        refused.text.contains("value=\"laptop\""),
        "the name sent stays"
    );
    let (_, keys) = api.call(Method::GET, "/api/client-keys", None).await;
    assert_eq!(keys, json!([]), "a refused form makes nothing");

    let made = api
        .post_form(
            "/client-keys",
            &[("name", "laptop"), ("profile_ids", profile_id)],
        )
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    assert_eq!(made.headers[header::CACHE_CONTROL], "no-store");
    // A page that answers a post is a page: its own policy lets its styles,
    // bundle and inline scripts (by their nonce) load.
    for page in [&refused, &made] {
        let policy = page.headers[header::CONTENT_SECURITY_POLICY]
            .to_str()
            .unwrap();
        assert!(policy.contains("script-src 'self' 'nonce-"), "{policy}");
    }
    let (_, keys) = api.call(Method::GET, "/api/client-keys", None).await;
    let prefix = keys[0]["prefix"].as_str().unwrap();
    assert_eq!(keys[0]["profile_ids"], json!([profile_id]));
    let start = made.text.find(prefix).expect("the key is on the page");
    let key: String = made.text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    assert_eq!(key.len(), 47, "sbk_ and 43 characters: {key}");
    // Listed later by its first characters only.
    let shown = page(&api, "/client-keys").await;
    assert!(
        shown.contains("laptop") && shown.contains(prefix),
        "{shown}"
    );
    assert!(!shown.contains(&key), "the key is never shown again");

    let id = keys[0]["id"].as_str().unwrap();
    let revoked = api
        .post_form(&format!("/client-keys/{id}/revoke"), &[])
        .await;
    assert_eq!(revoked.status, StatusCode::SEE_OTHER, "{}", revoked.text);
    assert_eq!(location(&revoked), "/client-keys");
    let (_, keys) = api.call(Method::GET, "/api/client-keys", None).await;
    assert!(keys[0]["revoked_at"].is_string(), "{keys}");
    let shown = page(&api, "/client-keys").await;
    assert!(shown.contains("Revoked "), "{shown}");
}

/// A profile `name` of one candidate on a simulated provider, as the API
/// answered it.
async fn simulated_profile(api: &Api, name: &str) -> serde_json::Value {
    let (_, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": format!("{name} provider"), "kind": "simulated"})),
        )
        .await;
    let (status, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(
                json!({"name": name, "candidates": [{"provider_id": provider["id"],
                        "model": "m", "enabled": true, "max_tokens": 64}]}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{profile}");
    profile
}

/// A page as a browser gets it.
async fn page(api: &Api, path: &str) -> String {
    let answer = api
        .send(
            axum::http::Request::builder()
                .uri(path)
                .header(header::HOST, super::HOST)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(answer.status, StatusCode::OK, "{path}: {}", answer.text);
    answer.text
}
