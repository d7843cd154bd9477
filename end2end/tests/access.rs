//! Access control and the Content-Security-Policy in a real browser: a
//! server with an admin token sends a visitor to its sign-in page and back
//! to the page they asked for, and every hydrated page runs under its
//! policy without a single violation (the wasm bundle, the inline hydration
//! script by its nonce, the schedule's positioned marks).

use end2end::{Browser, Device, TestServer, named};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;

const TOKEN: &str = "browser-test-admin-token-42";

#[tokio::test]
async fn a_visitor_signs_in_and_reaches_the_page_they_asked_for() -> anyhow::Result<()> {
    let server = TestServer::start_with_token(TOKEN)?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/profiles"), None).await?;
    expect(page.get_by_role(AriaRole::Heading, named("Sign in")))
        .to_be_visible()
        .await?;
    let token = page.get_by_role(AriaRole::Textbox, named("Admin token"));
    token.fill("not-the-admin-token", None).await?;
    page.get_by_role(AriaRole::Button, named("Sign in"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Alert, None))
        .to_have_text("That is not this server's admin token.")
        .await?;
    page.sign_in(TOKEN).await?;
    expect(page.get_by_role(AriaRole::Heading, named("Dynamic profiles")))
        .to_be_visible()
        .await?;
    // The session carries the app's own calls (server functions) too.
    page.wait_for_hydration().await?;
    page.get_by_role(AriaRole::Link, named("Providers"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Providers")))
        .to_be_visible()
        .await?;
    assert_eq!(page.csp_violations().await?, Vec::<String>::new());
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}

#[tokio::test]
async fn every_page_hydrates_under_its_policy_without_violations() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let (status, provider) = server.send_json(
        "POST",
        "/api/providers",
        &serde_json::json!({"name": "Sim", "kind": "simulated", "script": [{"reply": "hi"}]}),
    )?;
    assert_eq!(status, 201, "{provider}");
    let (status, profile) = server.send_json(
        "POST",
        "/api/profiles",
        &serde_json::json!({"name": "P", "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]}),
    )?;
    assert_eq!(status, 201, "{profile}");
    let (status, task) = server.send_json(
        "POST",
        "/api/tasks",
        &serde_json::json!({"profile_id": profile["id"], "prompt": "hello"}),
    )?;
    assert_eq!(status, 201, "{task}");
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    let task_path = format!("/tasks/{}", task["id"].as_str().unwrap_or_default());
    let profile_path = format!("/profiles/{}", profile["id"].as_str().unwrap_or_default());
    for path in [
        "/",
        "/tasks",
        "/providers",
        "/client-keys",
        "/inbox",
        "/profiles",
        "/profiles/new",
        &profile_path,
        &task_path,
        "/no/such/page",
    ] {
        page.goto(&server.url(path), None).await?;
        page.wait_for_hydration().await?;
    }
    // The editor's schedule re-places its marks after hydration.
    page.goto(&server.url(&profile_path), None).await?;
    page.wait_for_hydration().await?;
    let transient = page
        .get_by_role(AriaRole::Group, named("Candidate 1: m"))
        .get_by_role(AriaRole::Group, named("Transient errors"));
    transient
        .get_by_role(AriaRole::Spinbutton, named("Max retries"))
        .fill("4", None)
        .await?;
    expect(transient.get_by_role(AriaRole::Status, None))
        .to_contain_text("retry 4")
        .await?;
    assert_eq!(page.csp_violations().await?, Vec::<String>::new());
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}
