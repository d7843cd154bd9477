//! The client keys page on a server with an admin token: a person makes a key
//! for one profile, copies it from the page (the only time it is shown), a
//! gateway client gets in with it, and after Revoke it is refused.

use end2end::{Browser, Device, TestServer, named};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;

const TOKEN: &str = "browser-test-admin-token-42";

/// Profiles of these names, each of one candidate on a simulated provider.
fn simulated_profiles(server: &TestServer, names: &[&str]) -> anyhow::Result<()> {
    let (status, provider) = server.send_json(
        "POST",
        "/api/providers",
        &serde_json::json!({"name": "Sim", "kind": "simulated"}),
    )?;
    anyhow::ensure!(status == 201, "provider: {status} {provider}");
    for name in names {
        let (status, profile) = server.send_json(
            "POST",
            "/api/profiles",
            &serde_json::json!({"name": name, "candidates": [{"provider_id": provider["id"], "model": "m", "enabled": true, "max_tokens": 10}]}),
        )?;
        anyhow::ensure!(status == 201, "profile: {status} {profile}");
    }
    Ok(())
}

#[tokio::test]
async fn make_a_key_use_it_at_the_gateway_and_revoke_it() -> anyhow::Result<()> {
    let server = TestServer::start_with_token(TOKEN)?;
    simulated_profiles(&server, &["Drafts", "Reviews"])?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Pixel5, true).await?;
    page.goto(&server.url("/client-keys"), None).await?;
    page.sign_in(TOKEN).await?;
    expect(page.get_by_role(AriaRole::Heading, named("Client keys")))
        .to_be_visible()
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("No client keys yet.", true))
        .to_be_visible()
        .await?;

    let form = page.get_by_role(AriaRole::Region, named("Make a key"));
    // Untouched, the form says nothing is wrong; sent without a profile, it says what is.
    expect(form.locator(".field-error"))
        .to_have_count(0)
        .await?;
    form.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("aider on the laptop", None)
        .await?;
    form.get_by_role(AriaRole::Button, named("Make key"))
        .click(None)
        .await?;
    expect(form.locator("#key-f-profile_ids-error"))
        .to_be_visible()
        .await?;
    form.get_by_role(AriaRole::Checkbox, named("Drafts"))
        .check(None)
        .await?;
    form.get_by_role(AriaRole::Button, named("Make key"))
        .click(None)
        .await?;

    let shown = page.get_by_test_id("new-key");
    expect(shown.clone()).to_be_visible().await?;
    let key = shown.text_content().await?.unwrap_or_default();
    anyhow::ensure!(key.starts_with("sbk_") && key.len() == 47, "{key}");
    let item = page.get_by_role(AriaRole::Listitem, named("aider on the laptop"));
    expect(item.get_by_text(&format!("{}…", &key[..8]), true))
        .to_be_visible()
        .await?;

    // The key admits a gateway client to its profile, and only that one.
    let (status, models) = server.get_as("/v1/models", &key)?;
    anyhow::ensure!(status == 200, "{status} {models}");
    anyhow::ensure!(
        models.contains("\"Drafts\"") && !models.contains("Reviews"),
        "{models}"
    );

    item.get_by_role(AriaRole::Button, named("Revoke aider on the laptop"))
        .click(None)
        .await?;
    expect(item.get_by_text("Revoked", false))
        .to_be_visible()
        .await?;
    let (status, answer) = server.get_as("/v1/models", &key)?;
    anyhow::ensure!(status == 401, "a revoked key is refused: {status} {answer}");
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}

/// JavaScript on, but the form sent before the page hydrated (its bundle held
/// back): the page that answers shows the key, and hydrates on it without a
/// mismatch.
#[tokio::test]
async fn a_key_made_before_the_page_hydrated_shows_and_hydrates() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    simulated_profiles(&server, &["Drafts"])?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    let (release, held) = tokio::sync::watch::channel(false);
    page.route("**/switchback_bg.wasm", move |route| {
        let mut held = held.clone();
        async move {
            let _ = held.wait_for(|go| *go).await;
            route.continue_(None).await
        }
    })
    .await?;
    let options =
        playwright_rs::GotoOptions::new().wait_until(playwright_rs::WaitUntil::DomContentLoaded);
    page.goto(&server.url("/client-keys"), Some(options))
        .await?;
    let form = page.get_by_role(AriaRole::Region, named("Make a key"));
    form.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("before hydration", None)
        .await?;
    form.get_by_role(AriaRole::Checkbox, named("Drafts"))
        .check(None)
        .await?;
    form.get_by_role(AriaRole::Button, named("Make key"))
        .click(None)
        .await?;
    expect(page.get_by_test_id("new-key"))
        .to_be_visible()
        .await?;
    release.send(true)?;
    page.wait_for_hydration().await?;
    let key = page
        .get_by_test_id("new-key")
        .text_content()
        .await?
        .unwrap_or_default();
    anyhow::ensure!(key.starts_with("sbk_"), "{key}");
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}
