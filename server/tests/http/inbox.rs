//! The catalogue's inbox and the reclassification of stored evidence, through the
//! API: what the catalogue was unsure of, grouped, each group ready to become a
//! fixture without its secrets; and what the current catalogue reads differently
//! in evidence an older one classified.

use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::Api;
use super::events::Stream;

/// A simulated provider failing once with `error`, a profile of it, a task on it;
/// answers the task's id once its route is held or has moved past the failure.
async fn failed_once(api: &Api, name: &str, error: Value) -> String {
    let (status, provider) = api
        .call(
            Method::POST,
            "/api/providers",
            Some(json!({"name": name, "kind": "simulated", "script": [{"error": error}, {"reply": "ok"}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{provider}");
    let (status, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": name, "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{profile}");
    let mut stream = Stream::open(api, None).await;
    let (status, task) = api
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"profile_id": profile["id"], "prompt": "Hello"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{task}");
    let id = task["id"].as_str().unwrap().to_owned();
    // The failed attempt is stored once the route leaves `running`.
    stream.until_settled(&id).await;
    id
}

#[tokio::test]
async fn unsure_failures_are_grouped_by_provider_and_message_ready_as_fixtures() {
    let api = Api::new().await;
    let secret = "sk-proj-abcdefghijklmnopqrstuvwxyz012345";
    let odd = |n: u32| {
        json!({"provider": "other", "status": 418,
            "body": format!("{{\"error\":{{\"message\":\"Teapot 7 overflowed after {n} cups (key {secret})\"}}}}")})
    };
    let first = failed_once(&api, "Teapot", odd(3)).await;
    let (_, teapot) = api.call(Method::GET, "/api/providers", None).await;
    let teapot_id = teapot[0]["id"].clone();
    // The same provider again on another task (each task plays the script from
    // its first step), another number: the same group.
    let (_, profile) = api
        .call(
            Method::POST,
            "/api/profiles",
            Some(json!({"name": "Teapot again", "candidates": [{"provider_id": teapot_id, "model": "n", "enabled": true, "max_tokens": 10}]})),
        )
        .await;
    let (status, second) = api
        .call(
            Method::POST,
            "/api/tasks",
            Some(json!({"profile_id": profile["id"], "prompt": "Hello again"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    let broke = failed_once(
        &api,
        "Relay",
        json!({"provider": "other", "status": 429,
            "body": "{\"error\":{\"message\":\"Your account balance is insufficient, please recharge.\"}}"}),
    )
    .await;

    let inbox = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        loop {
            let (status, inbox) = api.call(Method::GET, "/api/catalogue/inbox", None).await;
            assert_eq!(status, StatusCode::OK, "{inbox}");
            if inbox["attempts_read"] == 3 {
                break inbox;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("three unsure attempts stored");
    let groups = inbox["groups"].as_array().unwrap();
    assert_eq!(groups.len(), 2, "{inbox}");
    let teapot = &groups[0];
    assert_eq!(
        (&teapot["provider"], &teapot["count"], &teapot["family"]),
        (&json!("Teapot"), &json!(2), &json!("other")),
        "the most frequent first: {inbox}"
    );
    assert_eq!(
        teapot["key"],
        "teapot # overflowed after # cups (key [redacted])"
    );
    assert_eq!(
        (&teapot["verdict"]["code"], &teapot["verdict"]["confidence"]),
        (&json!("unknown"), &json!("high"))
    );
    assert!(
        teapot["task_ids"]
            .as_array()
            .unwrap()
            .contains(&json!(first))
    );
    let fixture = &teapot["fixture"];
    assert_eq!(fixture["source"], "", "left for a person");
    assert_eq!(fixture["expected"], json!({"code": "", "class": ""}));
    assert_eq!(fixture["evidence"]["status"], 418);
    assert!(
        !inbox.to_string().contains(secret),
        "no secret anywhere: {inbox}"
    );
    let relay = &groups[1];
    assert_eq!(
        (
            &relay["verdict"]["code"],
            &relay["verdict"]["confidence"],
            &relay["verdict"]["rule"]
        ),
        (
            &json!("insufficient_credits"),
            &json!("medium"),
            &json!("words.credits")
        ),
        "a 429 whose words say the balance is empty"
    );
    assert_eq!(relay["task_ids"], json!([broke]));

    let (_, stored) = api
        .call(Method::GET, &format!("/api/tasks/{broke}"), None)
        .await;
    assert_eq!(
        stored["attempts"][0]["confidence"], "medium",
        "the task says how sure"
    );

    // The current catalogue reads all three as they were stored.
    let (status, again) = api
        .call(Method::GET, "/api/catalogue/reclassify", None)
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (&again["checked"], &again["changes"]),
        (&json!(3), &json!([]))
    );

    // As an older catalogue stored it: the credits read as a bare 429.
    let pool = sqlx::SqlitePool::connect(&api.database_url).await.unwrap();
    let changed = sqlx::query(
        "UPDATE attempts SET code = 'rate_limited', class = 'transient', confidence = 'high', \
         rule = 'http.429', catalogue = '2026.12.1' WHERE task_id = ?",
    )
    .bind(&broke)
    .execute(&pool)
    .await
    .unwrap();
    assert_eq!(changed.rows_affected(), 1);
    let (_, again) = api
        .call(Method::GET, "/api/catalogue/reclassify", None)
        .await;
    let changes = again["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{again}");
    assert_eq!(changes[0]["task_id"], broke.as_str());
    assert_eq!(
        (
            &changes[0]["before"]["code"],
            &changes[0]["before"]["catalogue"]
        ),
        (&json!("rate_limited"), &json!("2026.12.1"))
    );
    assert_eq!(
        (
            &changes[0]["after"]["code"],
            &changes[0]["after"]["confidence"],
            &changes[0]["after"]["catalogue"]
        ),
        (
            &json!("insufficient_credits"),
            &json!("medium"),
            &json!(catalogue::CATALOGUE_VERSION)
        )
    );
    let (_, stored) = api
        .call(Method::GET, &format!("/api/tasks/{broke}"), None)
        .await;
    assert_eq!(
        stored["attempts"][0]["code"], "rate_limited",
        "nothing changed"
    );
}
