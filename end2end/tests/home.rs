//! The home page says what needs a person: held tasks with why and what can be
//! done, waiting tasks with their deadlines, open circuits until when, and how
//! the last day's tasks stand; live, without JavaScript, and on a phone. The top
//! bar offers to sign out, or says the server is open.

use end2end::{Browser, Device, TestServer, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;
use serde_json::{Value, json};

use crate::tasks::{cut_off, press, rate_limited, start_task_asking, wait_for_state};

const HELD_PROMPT: &str = "Draft the release notes.";
const WAITING_PROMPT: &str = "Translate the changelog.";

/// A task held after its answer was cut off, and one waiting ten minutes for a
/// provider's reset (which opens that model's circuit): their ids.
fn held_and_waiting(server: &TestServer) -> anyhow::Result<(String, String)> {
    let held = start_task_asking(server, json!([cut_off()]), HELD_PROMPT)?;
    wait_for_state(server, &held, "held")?;
    let waiting = start_task_asking(server, json!([rate_limited()]), WAITING_PROMPT)?;
    wait_for_state(server, &waiting, "waiting_for_reset")?;
    Ok((held, waiting))
}

#[tokio::test]
async fn home_says_what_needs_a_person_and_follows_it_live() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let (held, waiting) = held_and_waiting(&server)?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_role(AriaRole::Heading, named("What needs you")))
        .to_be_visible()
        .await?;

    let held_section = page.get_by_role(AriaRole::Region, named("Held for you (1)"));
    expect(held_section.get_by_role(AriaRole::Link, named(HELD_PROMPT)))
        .to_be_visible()
        .await?;
    expect(held_section.get_by_text("Part of an answer had already streamed", false))
        .to_be_visible()
        .await?;
    expect(held_section.get_by_role(AriaRole::Button, named("Retry now")))
        .to_be_visible()
        .await?;

    let waiting_section = page.get_by_role(AriaRole::Region, named("Waiting (1)"));
    expect(waiting_section.get_by_role(AriaRole::Link, named(WAITING_PROMPT)))
        .to_be_visible()
        .await?;
    expect(waiting_section.get_by_text("waits for the provider's reset", false))
        .to_be_visible()
        .await?;
    expect(waiting_section.get_by_text("in 9 min", false))
        .to_be_visible()
        .await?;

    let circuits = page.get_by_role(AriaRole::Region, named("Open circuits (1)"));
    expect(circuits.get_by_text("gpt-drill", false))
        .to_be_visible()
        .await?;
    expect(circuits.get_by_text("reopens in 9 min", false))
        .to_be_visible()
        .await?;
    page.screenshot_if_asked("home-desktop").await?;

    // Skip now moves the held task to its second candidate, which answers: the
    // page follows without a reload.
    press(&held_section, "Skip now").await?;
    expect(page.get_by_role(AriaRole::Region, named("Held for you (0)")))
        .to_be_visible()
        .await?;
    wait_for_state(&server, &held, "completed")?;
    let recent = page.get_by_role(AriaRole::Region, named("Last 24 hours"));
    expect(recent.get_by_role(AriaRole::Link, named("1 completed")))
        .to_be_visible()
        .await?;

    // A change made elsewhere reaches the page: another client cancels the wait,
    // and the waiting task is now held.
    let (_, task) = server.send_json("GET", &format!("/api/tasks/{waiting}"), &Value::Null)?;
    let (status, answer) = server.send_json(
        "POST",
        &format!("/api/tasks/{waiting}/actions"),
        &json!({"action": "cancel_wait", "generation": task["route"]["generation"]}),
    )?;
    anyhow::ensure!(status == 200, "cancel_wait: {status} {answer}");
    let held_section = page.get_by_role(AriaRole::Region, named("Held for you (1)"));
    expect(held_section.get_by_role(AriaRole::Link, named(WAITING_PROMPT)))
        .to_be_visible()
        .await?;
    expect(page.get_by_role(AriaRole::Region, named("Waiting (0)")))
        .to_be_visible()
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}

#[tokio::test]
async fn home_acts_without_javascript_and_fits_a_phone() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let (held, _) = held_and_waiting(&server)?;
    let browser = Browser::launch().await?;

    let phone = browser.page(Device::Pixel5, true).await?;
    phone.goto(&server.url("/"), None).await?;
    phone.wait_for_hydration().await?;
    expect(phone.get_by_role(AriaRole::Region, named("Held for you (1)")))
        .to_be_visible()
        .await?;
    let problems = phone_layout_problems(&phone).await?;
    assert!(problems.is_empty(), "/ on a Pixel 5: {problems:#?}");
    phone.screenshot_if_asked("home-phone").await?;

    // Without JavaScript the page is whole, and its actions post as forms.
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/"), None).await?;
    let held_section = page.get_by_role(AriaRole::Region, named("Held for you (1)"));
    expect(held_section.get_by_role(AriaRole::Link, named(HELD_PROMPT)))
        .to_be_visible()
        .await?;
    expect(page.get_by_role(AriaRole::Region, named("Open circuits (1)")))
        .to_be_visible()
        .await?;
    press(&held_section, "Skip now").await?;
    wait_for_state(&server, &held, "completed")?;
    Ok(())
}

#[tokio::test]
async fn an_empty_install_shows_how_to_start() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/"), None).await?;
    let start = page.get_by_role(AriaRole::Region, named("Start here"));
    for link in ["Add a provider", "Create a profile", "Start a task"] {
        expect(start.get_by_role(AriaRole::Link, named(link)))
            .to_be_visible()
            .await?;
    }
    expect(start.get_by_text("switchback serve --demo", true))
        .to_be_visible()
        .await?;
    // A provider added: its step says so.
    let (status, provider) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": "Sim", "kind": "simulated", "script": [{"reply": "hi"}]}),
    )?;
    anyhow::ensure!(status == 201, "{provider}");
    page.goto(&server.url("/"), None).await?;
    let start = page.get_by_role(AriaRole::Region, named("Start here"));
    expect(
        start
            .get_by_role(AriaRole::Listitem, None)
            .first()
            .get_by_text("Done", true),
    )
    .to_be_visible()
    .await?;
    Ok(())
}

#[tokio::test]
async fn the_top_bar_signs_out_or_says_the_server_is_open() -> anyhow::Result<()> {
    let open = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&open.url("/tasks"), None).await?;
    let banner = page.get_by_role(AriaRole::Banner, None);
    expect(banner.get_by_text("Open: loopback, no sign-in", true))
        .to_be_visible()
        .await?;
    expect(banner.get_by_role(AriaRole::Button, named("Sign out")))
        .to_have_count(0)
        .await?;

    let guarded = TestServer::start_with_token("browser-test-admin-token-42")?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&guarded.url("/tasks"), None).await?;
    page.sign_in("browser-test-admin-token-42").await?;
    expect(page.get_by_role(AriaRole::Heading, named("Tasks")))
        .to_be_visible()
        .await?;
    page.wait_for_hydration().await?;
    let banner = page.get_by_role(AriaRole::Banner, None);
    expect(banner.get_by_text("Open: loopback", false))
        .to_have_count(0)
        .await?;
    press(&banner, "Sign out").await?;
    expect(page.get_by_role(AriaRole::Heading, named("Sign in")))
        .to_be_visible()
        .await?;
    // The session is gone: a page asks to sign in again.
    page.goto(&guarded.url("/tasks"), None).await?;
    expect(page.get_by_role(AriaRole::Heading, named("Sign in")))
        .to_be_visible()
        .await?;
    Ok(())
}
