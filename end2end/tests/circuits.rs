//! The circuits page: an open circuit appears live with the routes waiting on it,
//! "Close now" lets them go; a route passes over a candidate whose circuit is
//! open past its wait without calling it, and its route view says why; a pause
//! is said on every page until it is resumed.

use end2end::{Browser, Device, TestServer, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;
use providers::mock::{MockProvider, MockResponse, MockStop};
use serde_json::{Value, json};

use crate::tasks::{patient_policy, press, wait_for_state};

/// A policy whose waits are at most a minute, skipping on.
fn short_policy() -> Value {
    json!({"version": 2,
        "transient": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 500},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 1, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 60}, "on_exhausted": "skip"}})
}

/// OpenAI's 429 with a reset 30 minutes away.
fn throttled_for_half_an_hour() -> MockResponse {
    MockResponse::Error {
        status: 429,
        headers: vec![("retry-after".into(), "1800".into())],
        body: r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#.into(),
    }
}

fn created(server: &TestServer, path: &str, body: &Value) -> anyhow::Result<Value> {
    let (status, answer) = server.send_json("POST", path, body)?;
    anyhow::ensure!(status == 201, "{path}: {status} {answer}");
    Ok(answer)
}

fn task(server: &TestServer, profile: &Value, prompt: &str) -> anyhow::Result<String> {
    let task = created(
        server,
        "/api/tasks",
        &json!({"profile_id": profile["id"], "prompt": prompt}),
    )?;
    Ok(task["id"].as_str().unwrap_or_default().to_owned())
}

// The mock provider answers on this runtime while the test waits on the API
// (a blocking poll): two threads.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_circuit_shows_live_and_closing_it_lets_the_waiting_routes_go() -> anyhow::Result<()>
{
    let server = TestServer::start()?;
    let mock = MockProvider::start().await;
    let api = created(
        &server,
        "/api/providers",
        &json!({"name": "Mock API", "kind": "openai_compatible", "base_url": mock.base_url()}),
    )?;
    let steady = created(
        &server,
        "/api/providers",
        &json!({"name": "Steady", "kind": "simulated", "family": "openai",
            "script": [{"reply": "From the second candidate."}]}),
    )?;
    let candidate = |provider: &Value, model: &str, policy: Value| {
        json!({"provider_id": provider["id"], "model": model, "enabled": true,
            "max_tokens": 1024, "policy": policy})
    };
    let waits = created(
        &server,
        "/api/profiles",
        &json!({"name": "Waits", "candidates": [candidate(&api, "gpt-drill", patient_policy())]}),
    )?;
    let skips = created(
        &server,
        "/api/profiles",
        &json!({"name": "Skips", "candidates": [
            candidate(&api, "gpt-drill", short_policy()),
            candidate(&steady, "gpt-steady", short_policy())]}),
    )?;

    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/circuits"), None).await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_role(AriaRole::Region, named("Open now (0)")))
        .to_be_visible()
        .await?;

    // A throttle with a 30-minute reset: the first route waits for it, and the
    // page shows the model's circuit without a reload.
    mock.push(throttled_for_half_an_hour());
    let first = task(&server, &waits, "First.")?;
    wait_for_state(&server, &first, "waiting_for_reset")?;
    let open = page.get_by_role(AriaRole::Region, named("Open now (1)"));
    expect(open.get_by_text("Mock API: gpt-drill", false))
        .to_be_visible()
        .await?;
    expect(open.get_by_text("rate_limited", false))
        .to_be_visible()
        .await?;
    expect(open.get_by_text("reopens in 29 min", false))
        .to_be_visible()
        .await?;
    // A second route due on it waits for it (30 minutes is within its hour).
    let second = task(&server, &waits, "Second.")?;
    let waiting = wait_for_state(&server, &second, "waiting_for_reset")?;
    anyhow::ensure!(waiting["route"]["circuit_wait"] == true, "{waiting}");
    expect(open.get_by_text("2 waiting", false))
        .to_be_visible()
        .await?;

    // A route whose candidate waits at most a minute passes it over without a
    // call, and says so.
    let third = task(&server, &skips, "Third.")?;
    let done = wait_for_state(&server, &third, "completed")?;
    anyhow::ensure!(
        mock.hits() == 1,
        "only the first route called: {}",
        mock.hits()
    );
    anyhow::ensure!(
        done["attempts"].as_array().map(Vec::len) == Some(1),
        "one attempt, on the second candidate: {done}"
    );
    let route_page = browser.page(Device::Desktop, true).await?;
    route_page
        .goto(&server.url(&format!("/tasks/{third}")), None)
        .await?;
    route_page.wait_for_hydration().await?;
    expect(route_page.get_by_text("not sent", true))
        .to_be_visible()
        .await?;
    expect(route_page.get_by_text(
        "Not sent: Mock API's rate limit on gpt-drill resets in",
        false,
    ))
    .to_be_visible()
    .await?;
    expect(route_page.get_by_text("past this candidate's 1 min wait", false))
        .to_be_visible()
        .await?;
    route_page.screenshot_if_asked("route-passed-over").await?;
    page.screenshot_if_asked("circuits-desktop").await?;

    // Close now: both waiting routes are sent at once, and answered.
    for _ in 0..2 {
        mock.push(MockResponse::Reply {
            text: "After the close.".into(),
            stop: MockStop::End,
        });
    }
    press(&open, "Close now").await?;
    wait_for_state(&server, &first, "completed")?;
    wait_for_state(&server, &second, "completed")?;
    anyhow::ensure!(mock.hits() == 3, "both sent once: {}", mock.hits());
    expect(page.get_by_role(AriaRole::Region, named("Open now (0)")))
        .to_be_visible()
        .await?;
    let history = page.get_by_role(AriaRole::Region, named("Last 24 hours"));
    expect(history.get_by_text("Mock API: opened 1 time", false))
        .to_be_visible()
        .await?;
    expect(history.get_by_text("closed by a person", false))
        .to_be_visible()
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}

#[tokio::test]
async fn a_pause_is_said_on_every_page_until_resumed_and_works_without_javascript()
-> anyhow::Result<()> {
    let server = TestServer::start()?;
    created(
        &server,
        "/api/providers",
        &json!({"name": "Steady", "kind": "simulated", "family": "openai",
            "script": [{"reply": "ok"}]}),
    )?;
    let browser = Browser::launch().await?;
    let phone = browser.page(Device::Pixel5, true).await?;
    phone.goto(&server.url("/circuits"), None).await?;
    phone.wait_for_hydration().await?;
    press(
        &phone.get_by_role(AriaRole::Region, named("Pause automatic recovery")),
        "Pause Steady",
    )
    .await?;
    let pause_section = phone.get_by_role(AriaRole::Region, named("Pause automatic recovery"));
    expect(pause_section.get_by_role(AriaRole::Button, named("Resume Steady")))
        .to_be_visible()
        .await?;
    // The top bar says so at once, without a reload.
    expect(phone.get_by_text("Automatic recovery is paused for Steady.", false))
        .to_be_visible()
        .await?;
    // Every page says so, under the top bar.
    phone.goto(&server.url("/tasks"), None).await?;
    phone.wait_for_hydration().await?;
    expect(phone.get_by_text("Automatic recovery is paused for Steady.", false))
        .to_be_visible()
        .await?;
    let problems = phone_layout_problems(&phone).await?;
    assert!(
        problems.is_empty(),
        "/tasks paused, on a Pixel 5: {problems:#?}"
    );
    phone.screenshot_if_asked("paused-phone").await?;

    // Without JavaScript: pause everywhere, then resume everything, as forms.
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/circuits"), None).await?;
    press(
        &page.get_by_role(AriaRole::Region, named("Pause automatic recovery")),
        "Pause everywhere",
    )
    .await?;
    expect(page.get_by_text("Automatic recovery is paused everywhere.", false))
        .to_be_visible()
        .await?;
    let (_, pauses) = server.send_json("GET", "/api/pauses", &Value::Null)?;
    anyhow::ensure!(pauses["everywhere"].is_string(), "{pauses}");
    for name in ["Resume everywhere", "Resume Steady"] {
        press(
            &page.get_by_role(AriaRole::Region, named("Pause automatic recovery")),
            name,
        )
        .await?;
    }
    expect(page.get_by_text("Recovery runs everywhere.", false))
        .to_be_visible()
        .await?;
    expect(page.get_by_text("Automatic recovery is paused", false))
        .to_have_count(0)
        .await?;
    Ok(())
}
