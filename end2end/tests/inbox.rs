//! The catalogue's inbox: a failure the catalogue could not read shows once per
//! kind, with its task and its evidence as a fixture; reading stored failures
//! again says what the current catalogue would read differently; on a phone it
//! fits.

use end2end::{Browser, Device, TestServer, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;
use serde_json::{Value, json};

#[tokio::test]
async fn an_unread_failure_shows_once_with_its_task_and_its_fixture() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let (status, provider) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": "Odd relay", "kind": "simulated", "script": [
            {"error": {"provider": "other", "status": 418, "body": "{\"error\":{\"message\":\"The kettle 42 is cold\"}}"}}]}),
    )?;
    anyhow::ensure!(status == 201, "provider: {status} {provider}");
    let (status, profile) = server.send_json(
        "POST",
        "/api/profiles",
        &json!({"name": "Odd", "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]}),
    )?;
    anyhow::ensure!(status == 201, "profile: {status} {profile}");
    let mut ids = Vec::new();
    for _ in 0..2 {
        let (status, task) = server.send_json(
            "POST",
            "/api/tasks",
            &json!({"profile_id": profile["id"], "prompt": "hello"}),
        )?;
        anyhow::ensure!(status == 201, "task: {status} {task}");
        ids.push(task["id"].as_str().unwrap_or_default().to_owned());
    }
    for id in &ids {
        testkit::eventually(std::time::Duration::from_secs(10), || {
            match server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null) {
                Ok((_, task)) if task["route"]["state"] == "held" => Ok(()),
                other => Err(format!("not held yet: {other:?}")),
            }
        });
    }

    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;
    page.get_by_role(AriaRole::Link, named("Inbox"))
        .click(None)
        .await?;
    let group = page.get_by_role(AriaRole::Heading, named("2 × Odd relay"));
    expect(group).to_be_visible().await?;
    expect(page.get_by_text("The kettle 42 is cold", true))
        .to_be_visible()
        .await?;
    expect(page.get_by_text("unknown (outside), high confidence, by unknown", false))
        .to_be_visible()
        .await?;
    page.get_by_text("Export as fixture", true)
        .click(None)
        .await?;
    expect(page.locator("pre.fixture"))
        .to_contain_text("\"expected\": {")
        .await?;
    page.get_by_role(AriaRole::Link, named(&ids[0]))
        .click(None)
        .await?;
    expect(page.get_by_role(
        AriaRole::Heading,
        named("Held for a person on Candidate 1: m"),
    ))
    .to_be_visible()
    .await?;

    page.goto(&server.url("/inbox"), None).await?;
    page.wait_for_hydration().await?;
    page.get_by_role(AriaRole::Button, named("Read stored failures again"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Status, None))
        .to_contain_text("read the latest 2 stored failures again: 0 would now be read differently")
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new());

    let phone = browser.page(Device::Pixel5, true).await?;
    phone.goto(&server.url("/inbox"), None).await?;
    phone.wait_for_hydration().await?;
    let problems = phone_layout_problems(&phone).await?;
    assert!(problems.is_empty(), "{problems:#?}");
    Ok(())
}
