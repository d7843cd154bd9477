//! Tasks and the live route view, against the server binary with simulated
//! providers: each action where it is valid (and its absence where it is not),
//! a stale click from a second tab, a route that changes while the page is
//! open, the list and the route view without JavaScript, and the phone rules.

use end2end::{Browser, Device, TestServer, escaped_content, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::{AriaRole, FilterOptions, SelectOption};
use serde_json::{Value, json};

/// A policy that waits for a provider's reset (up to an hour) on transient
/// errors and holds nothing back on hard ones.
pub(crate) fn patient_policy() -> Value {
    json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 60000},
                      "reset_wait": {"enabled": true, "max_wait_s": 3600}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "stop"}})
}

/// OpenAI's 429 that names a reset ten minutes away.
pub(crate) fn rate_limited() -> Value {
    json!({"error": {"provider": "openai", "status": 429,
        "headers": {"retry-after": "600"},
        "body": "{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"}})
}

/// A stream cut after output began: an unsafe effect, so the route is held.
pub(crate) fn cut_off() -> Value {
    json!({"partial": "Half an ans", "error": {"provider": "anthropic", "status": 200,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}})
}

/// A simulated provider replaying `script`, a profile of one candidate on it
/// (and a second, steady one), and a task; answers the task's id.
pub(crate) fn start_task(server: &TestServer, script: Value) -> anyhow::Result<String> {
    start_task_asking(server, script, "Summarise the incident report.")
}

/// As [`start_task`], with this prompt.
pub(crate) fn start_task_asking(
    server: &TestServer,
    script: Value,
    prompt: &str,
) -> anyhow::Result<String> {
    let (status, provider) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": format!("Scripted {}", rand_suffix()), "kind": "simulated", "family": "openai", "script": script}),
    )?;
    anyhow::ensure!(status == 201, "provider: {status} {provider}");
    let (status, steady) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": format!("Steady {}", rand_suffix()), "kind": "simulated", "family": "openai",
            "script": [{"reply": "From the second candidate."}]}),
    )?;
    anyhow::ensure!(status == 201, "provider: {status} {steady}");
    let (status, profile) = server.send_json(
        "POST",
        "/api/profiles",
        &json!({"name": format!("Drill {}", rand_suffix()), "candidates": [
            {"provider_id": provider["id"], "model": "gpt-drill", "enabled": true, "max_tokens": 1024, "policy": patient_policy()},
            {"provider_id": steady["id"], "model": "gpt-steady", "enabled": true, "max_tokens": 1024, "policy": patient_policy()}
        ]}),
    )?;
    anyhow::ensure!(status == 201, "profile: {status} {profile}");
    let (status, task) = server.send_json(
        "POST",
        "/api/tasks",
        &json!({"profile_id": profile["id"], "prompt": prompt}),
    )?;
    anyhow::ensure!(status == 201, "task: {status} {task}");
    Ok(task["id"].as_str().unwrap_or_default().to_owned())
}

fn rand_suffix() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed).to_string()
}

/// Poll the API (not a sleep for a deadline: the simulated call answers at once)
/// until the task's route is in `state`; answers the task.
pub(crate) fn wait_for_state(server: &TestServer, id: &str, state: &str) -> anyhow::Result<Value> {
    Ok(testkit::eventually(
        std::time::Duration::from_secs(10),
        || match server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null) {
            Ok((_, task)) if task["route"]["state"] == state => Ok(task),
            Ok((_, task)) => Err(format!("task {id} is not {state}: {task}")),
            Err(error) => Err(format!("task {id}: {error}")),
        },
    ))
}

/// The route view's heading names the state and the candidate: wait for it.
async fn see_route(page: &playwright_rs::protocol::Page, heading: &str) -> anyhow::Result<()> {
    expect(page.get_by_role(AriaRole::Heading, named(heading)))
        .to_be_visible()
        .await?;
    Ok(())
}

/// Click the button named `name` in `within`.
pub(crate) async fn press(
    within: &playwright_rs::protocol::Locator,
    name: &str,
) -> anyhow::Result<()> {
    within
        .get_by_role(AriaRole::Button, named(name))
        .click(None)
        .await?;
    Ok(())
}

/// Another client cancels the wait `waiting` shows, through the API.
fn cancel_wait_elsewhere(server: &TestServer, id: &str, waiting: &Value) -> anyhow::Result<()> {
    let (status, answer) = server.send_json(
        "POST",
        &format!("/api/tasks/{id}/actions"),
        &json!({"action": "cancel_wait", "generation": waiting["route"]["generation"]}),
    )?;
    anyhow::ensure!(status == 200, "cancel_wait: {status} {answer}");
    Ok(())
}

#[tokio::test]
async fn a_waiting_route_shows_its_deadline_and_retry_now_completes_it_live() -> anyhow::Result<()>
{
    let server = TestServer::start()?;
    let id = start_task(
        &server,
        json!([rate_limited(), {"reply": "All systems recovered."}]),
    )?;
    wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;

    let header = page.get_by_role(
        AriaRole::Region,
        named("Waiting for reset on Candidate 1: gpt-drill"),
    );
    expect(header.clone()).to_be_visible().await?;
    expect(header.get_by_text("then: skip to Candidate 2: gpt-steady", false))
        .to_be_visible()
        .await?;
    expect(header.get_by_text("rate_limited (transient)", false))
        .to_be_visible()
        .await?;
    // The countdown counts to the server's deadline, ten minutes out.
    let countdown = header.get_by_role(AriaRole::Timer, None);
    expect(countdown.clone())
        .to_contain_text("in 9 min")
        .await?;
    // Screen readers hear it politely, a minute at a time.
    expect(header.locator("p.visually-hidden[aria-live=polite]"))
        .to_contain_text_regex("^Deadline [0-9:]+ UTC: in (9|10) minutes$")
        .await?;
    // And it counts down in the page, with no reload.
    let shown = countdown.text_content().await?.unwrap_or_default();
    expect(countdown.clone()).not().to_have_text(&shown).await?;

    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    for name in ["Retry now", "Skip now", "Cancel wait", "Stop"] {
        expect(actions.get_by_role(AriaRole::Button, named(name)))
            .to_be_visible()
            .await?;
    }
    expect(actions.get_by_text("Moves to Candidate 2: gpt-steady.", true))
        .to_be_visible()
        .await?;

    press(&actions, "Retry now").await?;
    // The route completes without a reload: the answer and who produced it.
    see_route(&page, "Completed on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("All systems recovered.", true))
        .to_be_visible()
        .await?;
    expect(page.get_by_text("Answered by Candidate 1: gpt-drill", true))
        .to_be_visible()
        .await?;
    expect(actions.get_by_role(AriaRole::Button, named("Retry now")))
        .to_have_count(0)
        .await?;
    expect(page.get_by_text("Nothing can be done now", false))
        .to_be_visible()
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn a_change_made_elsewhere_reaches_an_open_page_without_reload() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited()]))?;
    let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;

    // Another client cancels the wait through the API.
    cancel_wait_elsewhere(&server, &id, &waiting)?;
    see_route(&page, "Held for a person on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("A person cancelled the pending wait.", true))
        .to_be_visible()
        .await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    expect(actions.get_by_role(AriaRole::Button, named("Cancel wait")))
        .to_have_count(0)
        .await?;
    for name in ["Retry now", "Skip now", "Stop"] {
        expect(actions.get_by_role(AriaRole::Button, named(name)))
            .to_be_visible()
            .await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_held_route_is_stopped_after_one_confirmation() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([cut_off()]))?;
    wait_for_state(&server, &id, "held")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Part of an answer had already streamed", false))
        .to_be_visible()
        .await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    expect(actions.get_by_role(AriaRole::Button, named("Cancel wait")))
        .to_have_count(0)
        .await?;

    press(&actions, "Stop").await?;
    // Asked once; nothing happened yet.
    expect(actions.get_by_role(AriaRole::Button, named("Confirm stop")))
        .to_be_visible()
        .await?;
    let (_, task) = server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null)?;
    assert_eq!(task["route"]["state"], "held");
    press(&actions, "Confirm stop").await?;
    see_route(&page, "Stopped on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("A person stopped the route.", true))
        .to_be_visible()
        .await?;
    wait_for_state(&server, &id, "stopped")?;
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// Without JavaScript, a tab that shows an older generation posts its click:
/// refused with 409, nothing changes, and the page says what the route is now.
#[tokio::test]
async fn a_stale_click_from_a_second_tab_changes_nothing() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited()]))?;
    wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let first = browser.page(Device::Desktop, false).await?;
    let second = browser.page(Device::Desktop, false).await?;
    first
        .goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    second
        .goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;

    first
        .get_by_role(AriaRole::Region, named("Actions"))
        .get_by_role(AriaRole::Button, named("Cancel wait"))
        .click(None)
        .await?;
    see_route(&first, "Held for a person on Candidate 1: gpt-drill").await?;
    let held = wait_for_state(&server, &id, "held")?;

    second
        .get_by_role(AriaRole::Region, named("Actions"))
        .get_by_role(AriaRole::Button, named("Skip now"))
        .click(None)
        .await?;
    expect(second.get_by_text(
        "The route changed before your click arrived: it is now held for a person",
        false,
    ))
    .to_be_visible()
    .await?;
    let (_, after) = server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null)?;
    assert_eq!(
        after["route"], held["route"],
        "a stale click changed the route"
    );
    // The page now shows the route as it is, with its own actions.
    see_route(&second, "Held for a person on Candidate 1: gpt-drill").await?;
    Ok(())
}

#[tokio::test]
async fn the_list_and_the_route_view_work_without_javascript() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([cut_off()]))?;
    wait_for_state(&server, &id, "held")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/tasks?state=held"), None).await?;
    let mut first_task = FilterOptions::default();
    first_task.has_text = Some("Summarise the incident report.".to_owned());
    let row = page
        .get_by_role(AriaRole::Listitem, None)
        .filter(first_task);
    expect(row.get_by_text("Held for a person", true))
        .to_be_visible()
        .await?;

    // New task, refused then started, as plain form posts.
    let form = page.get_by_role(AriaRole::Region, named("New task"));
    press(&form, "Start task").await?;
    let form = page.get_by_role(AriaRole::Region, named("New task"));
    // Refused with 422, each field's error at its field.
    expect(form.get_by_text("must not be empty", true))
        .to_have_count(2)
        .await?;
    expect(form.get_by_role(AriaRole::Textbox, named("Prompt")))
        .to_have_attribute("aria-invalid", "true")
        .await?;
    form.get_by_role(AriaRole::Combobox, named("Profile"))
        .select_option(SelectOption::Index(1), None)
        .await?;
    form.get_by_role(AriaRole::Textbox, named("Prompt"))
        .fill("Write the postmortem.", None)
        .await?;
    press(&form, "Start task").await?;
    // Started: the browser is on its route view.
    see_route(&page, "Turns").await?;
    expect(page.get_by_text("Write the postmortem.", true))
        .to_be_visible()
        .await?;
    assert!(page.url().contains("/tasks/"), "{}", page.url());

    // Stop without JavaScript asks first, then stops.
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    press(&actions, "Stop").await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    press(&actions, "Confirm stop").await?;
    see_route(&page, "Stopped on Candidate 1: gpt-drill").await?;
    Ok(())
}

#[tokio::test]
async fn the_route_view_and_the_list_fit_a_phone() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited(), cut_off()]))?;
    wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Pixel5, true).await?;
    for path in [format!("/tasks/{id}"), "/tasks".to_owned()] {
        page.goto(&server.url(&path), None).await?;
        page.wait_for_hydration().await?;
        let problems = phone_layout_problems(&page).await?;
        assert!(problems.is_empty(), "{path}: {problems:#?}");
    }
    // On a desktop too, nothing runs out of its card (the attempts over the turns).
    let page = browser.page(Device::Desktop, true).await?;
    for path in [format!("/tasks/{id}"), "/tasks".to_owned()] {
        page.goto(&server.url(&path), None).await?;
        page.wait_for_hydration().await?;
        let problems = escaped_content(&page).await?;
        assert!(problems.is_empty(), "{path}: {problems:#?}");
    }
    Ok(())
}

#[tokio::test]
async fn a_running_route_offers_only_stop_and_skip_now_moves_a_waiting_one_on() -> anyhow::Result<()>
{
    let server = TestServer::start()?;
    let running = start_task(&server, json!([{"hang": true}]))?;
    wait_for_state(&server, &running, "running")?;
    let waiting = start_task(&server, json!([rate_limited()]))?;
    wait_for_state(&server, &waiting, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;

    page.goto(&server.url(&format!("/tasks/{running}")), None)
        .await?;
    page.wait_for_hydration().await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    expect(actions.get_by_role(AriaRole::Button, named("Stop")))
        .to_be_visible()
        .await?;
    for absent in ["Retry now", "Skip now", "Cancel wait"] {
        expect(actions.get_by_role(AriaRole::Button, named(absent)))
            .to_have_count(0)
            .await?;
    }
    press(&actions, "Stop").await?;
    press(&actions, "Confirm stop").await?;
    see_route(&page, "Stopped on Candidate 1: gpt-drill").await?;
    // The call in flight was cut, and said so.
    expect(page.get_by_text("cancelled", true))
        .to_be_visible()
        .await?;

    page.goto(&server.url(&format!("/tasks/{waiting}")), None)
        .await?;
    page.wait_for_hydration().await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    press(&actions, "Skip now").await?;
    see_route(&page, "Completed on Candidate 2: gpt-steady").await?;
    // The history names each gap by what happened in it.
    let history = page.get_by_role(AriaRole::Region, named("Attempts"));
    expect(history.locator("li.gap").last())
        .to_contain_text("reset wait, then moved to the next candidate: ")
        .await?;
    expect(page.get_by_text("Answered by Candidate 2: gpt-steady", true))
        .to_be_visible()
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn an_open_page_reconnects_after_the_server_restarts() -> anyhow::Result<()> {
    let mut server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited()]))?;
    let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;

    server.restart()?;
    // The wait survived the restart; another client cancels it.
    cancel_wait_elsewhere(&server, &id, &waiting)?;
    // The browser reconnects on its own (it waits a few seconds first).
    expect(page.get_by_role(
        AriaRole::Heading,
        named("Held for a person on Candidate 1: gpt-drill"),
    ))
    .with_timeout(std::time::Duration::from_secs(20))
    .to_be_visible()
    .await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;
    Ok(())
}

/// With JavaScript, a tab that missed a change (its events stream blocked)
/// clicks on the generation it shows: the button waits disabled while the
/// request is out, the 409 says what the route is now, and nothing changes.
#[tokio::test]
async fn a_stale_click_with_javascript_is_refused_and_shows_the_route_now() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited()]))?;
    let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.route(
        "**/api/events",
        |route| async move { route.abort(None).await },
    )
    .await?;
    let release = std::sync::Arc::new(tokio::sync::Notify::new());
    let held_back = release.clone();
    page.route("**/fn/act_on_task", move |route| {
        let held_back = held_back.clone();
        async move {
            held_back.notified().await;
            route.continue_(None).await
        }
    })
    .await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;

    cancel_wait_elsewhere(&server, &id, &waiting)?;
    let held = wait_for_state(&server, &id, "held")?;
    // The page still shows the wait it read.
    see_route(&page, "Waiting for reset on Candidate 1: gpt-drill").await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    let skip = actions.get_by_role(AriaRole::Button, named("Skip now"));
    skip.click(None).await?;
    expect(skip.clone()).to_be_disabled().await?;
    release.notify_one();

    expect(page.get_by_text(
        "The route changed before your click arrived: it is now held for a person",
        false,
    ))
    .to_be_visible()
    .await?;
    see_route(&page, "Held for a person on Candidate 1: gpt-drill").await?;
    let (_, after) = server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null)?;
    assert_eq!(
        after["route"], held["route"],
        "a stale click changed the route"
    );
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn the_task_list_follows_routes_live_and_starts_a_task() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let held = start_task_asking(&server, json!([cut_off()]), "Draft the changelog.")?;
    wait_for_state(&server, &held, "held")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/tasks"), None).await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;

    // A task started elsewhere appears, then its row follows its route.
    let id = start_task(&server, json!([rate_limited()]))?;
    let mut second_task = FilterOptions::default();
    second_task.has_text = Some("Summarise the incident report.".to_owned());
    let row = page
        .get_by_role(AriaRole::Listitem, None)
        .filter(second_task);
    expect(row.get_by_text("Waiting for reset", true))
        .to_be_visible()
        .await?;
    expect(row.get_by_text("rate_limited", true))
        .to_be_visible()
        .await?;
    let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
    cancel_wait_elsewhere(&server, &id, &waiting)?;
    expect(row.get_by_text("Held for a person", true))
        .to_be_visible()
        .await?;

    // New task: checked in the page first, then started, then its route view.
    let form = page.get_by_role(AriaRole::Region, named("New task"));
    press(&form, "Start task").await?;
    expect(form.get_by_text("must not be empty", true))
        .to_have_count(2)
        .await?;
    form.get_by_role(AriaRole::Combobox, named("Profile"))
        .select_option(SelectOption::Index(1), None)
        .await?;
    form.get_by_role(AriaRole::Textbox, named("Prompt"))
        .fill("Write the postmortem.", None)
        .await?;
    expect(form.get_by_text("must not be empty", true))
        .to_have_count(0)
        .await?;
    press(&form, "Start task").await?;
    expect(page.get_by_text("Write the postmortem.", true))
        .to_be_visible()
        .await?;
    see_route(&page, "Task").await?;
    assert!(page.url().contains("/tasks/"), "{}", page.url());
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// Anthropic's 529: overloaded, no reset named, so the policy backs off.
fn overloaded() -> Value {
    json!({"error": {"provider": "anthropic", "status": 529,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}})
}

#[tokio::test]
async fn a_backoff_is_cancelled_retried_from_held_and_skipped() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([overloaded()]))?;
    wait_for_state(&server, &id, "retry_wait")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    see_route(&page, "Waiting to retry on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("retry 1 of 3 · then: skip to Candidate 2: gpt-steady", true))
        .to_be_visible()
        .await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    for name in ["Retry now", "Skip now", "Cancel wait", "Stop"] {
        expect(actions.get_by_role(AriaRole::Button, named(name)))
            .to_be_visible()
            .await?;
    }

    press(&actions, "Cancel wait").await?;
    see_route(&page, "Held for a person on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("A person cancelled the pending wait.", true))
        .to_be_visible()
        .await?;

    // From held, a retry is a new episode: the provider is still overloaded, so
    // the route backs off again, from its first retry.
    press(&actions, "Retry now").await?;
    see_route(&page, "Waiting to retry on Candidate 1: gpt-drill").await?;
    expect(page.get_by_text("retry 1 of 3 · then: skip to Candidate 2: gpt-steady", true))
        .to_be_visible()
        .await?;

    press(&actions, "Skip now").await?;
    see_route(&page, "Completed on Candidate 2: gpt-steady").await?;
    let history = page.get_by_role(AriaRole::Region, named("Attempts"));
    expect(history.locator("li.gap").last())
        .to_contain_text("backoff wait, then moved to the next candidate: ")
        .await?;
    let (_, task) = server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null)?;
    assert_eq!(task["attempts"].as_array().map(Vec::len), Some(3));
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// A stream the server (or a proxy) refuses with an error status is one the
/// browser gives up on: the page opens it again itself, and goes live.
#[tokio::test]
async fn a_refused_events_stream_is_opened_again() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([rate_limited()]))?;
    let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    let refused = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let once = refused.clone();
    page.route("**/api/events", move |route| {
        let first = !once.swap(true, std::sync::atomic::Ordering::SeqCst);
        async move {
            if first {
                let unavailable = playwright_rs::protocol::FulfillOptions::builder()
                    .status(503)
                    .body(b"restarting".to_vec())
                    .build();
                route.fulfill(Some(unavailable)).await
            } else {
                route.continue_(None).await
            }
        }
    })
    .await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .with_timeout(std::time::Duration::from_secs(15))
        .to_be_visible()
        .await?;
    assert!(refused.load(std::sync::atomic::Ordering::SeqCst));
    cancel_wait_elsewhere(&server, &id, &waiting)?;
    see_route(&page, "Held for a person on Candidate 1: gpt-drill").await?;
    Ok(())
}

/// The element that has the keyboard's focus: its tag and text.
async fn focused(page: &end2end::TestPage) -> anyhow::Result<String> {
    let focused: String = page
        .evaluate(
            r#"() => {
                const active = document.activeElement;
                return active ? `${active.tagName.toLowerCase()} ${active.textContent.trim()}` : 'nothing';
            }"#,
            None::<&()>,
        )
        .await?;
    Ok(focused)
}

/// Wait until the focused element (it moves after the page's effects run) is
/// `expected`, polled by the browser as playwright's own expectations poll.
/// (playwright-rs's `to_be_focused` cannot take a role locator: it hands the
/// selector to `querySelectorAll`.)
async fn expect_focus(page: &end2end::TestPage, expected: &str) -> anyhow::Result<()> {
    let expected_js = serde_json::to_string(expected)?;
    let waited = page
        .wait_for_function(
            &format!(
                r#"() => {{
                    const active = document.activeElement;
                    return active !== null
                        && `${{active.tagName.toLowerCase()}} ${{active.textContent.trim()}}` === {expected_js};
                }}"#
            ),
            playwright_rs::protocol::WaitForFunctionOptions::default()
                .polling_interval(50.0)
                .timeout(5_000.0),
        )
        .await;
    match waited {
        Ok(_) => Ok(()),
        Err(error) => {
            let seen = focused(page).await?;
            anyhow::bail!("focus is on {seen:?}, not {expected:?} ({error})")
        }
    }
}

/// A keyboard user does not lose their place: a live change that keeps their
/// button keeps their focus on it, and an action whose button goes away leaves
/// focus in the Actions section, never at the top of the page.
#[tokio::test]
async fn the_keyboard_keeps_its_place_through_live_changes_and_actions() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let id = start_task(&server, json!([overloaded(), overloaded(), overloaded()]))?;
    let waiting = wait_for_state(&server, &id, "retry_wait")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    let stop = actions.get_by_role(AriaRole::Button, named("Stop"));
    stop.focus().await?;
    expect_focus(&page, "button Stop").await?;

    // Another client retries: the route sends, fails and backs off again; Stop
    // stayed valid throughout, so the keyboard is still on it.
    let (status, answer) = server.send_json(
        "POST",
        &format!("/api/tasks/{id}/actions"),
        &json!({"action": "retry_now", "generation": waiting["route"]["generation"]}),
    )?;
    anyhow::ensure!(status == 200, "retry_now: {status} {answer}");
    let again = waiting["route"]["generation"].as_i64().unwrap_or_default() + 3;
    expect(page.locator(".generation"))
        .to_have_text(&again.to_string())
        .await?;
    expect_focus(&page, "button Stop").await?;

    // Cancel wait from the keyboard: its button goes with the wait, and focus
    // stays in the Actions section.
    let cancel = actions.get_by_role(AriaRole::Button, named("Cancel wait"));
    cancel.focus().await?;
    cancel.press("Enter", None).await?;
    see_route(&page, "Held for a person on Candidate 1: gpt-drill").await?;
    expect_focus(&page, "h2 Actions").await?;

    // Stop from the keyboard: the question takes the focus; "Keep it" gives it
    // back to Stop.
    stop.focus().await?;
    stop.press("Enter", None).await?;
    expect_focus(&page, "button Confirm stop").await?;
    page.keyboard().press("Tab", None).await?;
    page.keyboard().press("Enter", None).await?;
    expect(page.get_by_role(AriaRole::Alertdialog, None))
        .to_have_count(0)
        .await?;
    expect_focus(&page, "button Stop").await?;
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// The second the route view promises: a transition committed by another
/// client shows on an open page within one second of its commit, measured from
/// the route's `updated_at` (the commit's time, on this machine's clock) to the
/// moment the page's heading changes (the same clock, read in the page); the
/// request's own way to the server is not counted, so a loaded machine slows
/// only what the promise is about.
#[tokio::test]
async fn a_committed_transition_reaches_an_open_page_within_a_second() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    for round in 0..3 {
        let id = start_task_asking(&server, json!([rate_limited()]), &format!("Timing {round}"))?;
        let waiting = wait_for_state(&server, &id, "waiting_for_reset")?;
        page.goto(&server.url(&format!("/tasks/{id}")), None)
            .await?;
        page.wait_for_hydration().await?;
        expect(page.get_by_text("Live", true))
            .to_be_visible()
            .await?;
        let generation = waiting["route"]["generation"].as_i64().unwrap_or_default();
        let timing: Value = page
            .evaluate(
                &format!(
                    r#"async () => {{
                        const heading = document.getElementById('route-state');
                        const changed = new Promise((resolve) => {{
                            new MutationObserver(() => {{
                                if (heading.textContent.startsWith('Held')) resolve(Date.now());
                            }}).observe(heading, {{ subtree: true, childList: true, characterData: true }});
                        }});
                        const answer = await fetch('/api/tasks/{id}/actions', {{
                            method: 'POST',
                            headers: {{ 'content-type': 'application/json' }},
                            body: JSON.stringify({{ action: 'cancel_wait', generation: {generation} }}),
                        }});
                        if (answer.status !== 200) return {{ refused: answer.status }};
                        const task = await answer.json();
                        const shown = await Promise.race([changed,
                            new Promise((resolve) => setTimeout(() => resolve(null), 10000))]);
                        const committed = Date.parse(task.route.updated_at);
                        return {{ committed: task.route.updated_at, took: shown === null ? null : shown - committed }};
                    }}"#
                ),
                None::<&()>,
            )
            .await?;
        anyhow::ensure!(
            timing["refused"].is_null(),
            "the action was refused: {timing}"
        );
        let took = timing["took"]
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("round {round}: the heading never changed: {timing}"))?;
        assert!(
            took < 1_000.0,
            "round {round}: the page changed {took} ms after the commit"
        );
    }
    Ok(())
}

/// A route that waited on another route's open circuit says so in its history:
/// the gap before the attempt that probed it is named a circuit wait.
#[tokio::test]
async fn a_circuit_wait_is_drawn_in_the_history() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    // The first task's 429 names a reset ten minutes out: the model's circuit opens.
    let first = start_task(&server, json!([rate_limited()]))?;
    let opened = wait_for_state(&server, &first, "waiting_for_reset")?;
    let (status, second) = server.send_json(
        "POST",
        "/api/tasks",
        &json!({"profile_id": opened["profile_id"], "prompt": "Second in line."}),
    )?;
    anyhow::ensure!(status == 201, "task: {status} {second}");
    let second = second["id"].as_str().unwrap_or_default().to_owned();
    let waiting = wait_for_state(&server, &second, "waiting_for_reset")?;
    assert_eq!(waiting["route"]["circuit_wait"], true, "{waiting}");
    assert_eq!(
        waiting["attempts"],
        json!([]),
        "nothing sent while it is open"
    );

    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url(&format!("/tasks/{second}")), None)
        .await?;
    page.wait_for_hydration().await?;
    expect(page.locator("p.deadline"))
        .to_contain_text("The model's circuit reopens at")
        .await?;
    let history = page.get_by_role(AriaRole::Region, named("Attempts"));
    expect(history.get_by_text("waiting on the model's circuit", true))
        .to_be_visible()
        .await?;
    // A person sends it through the circuit, as its probe: still throttled.
    let actions = page.get_by_role(AriaRole::Region, named("Actions"));
    press(&actions, "Retry now").await?;
    expect(history.get_by_text("#1 Candidate 1: gpt-drill", false))
        .to_be_visible()
        .await?;
    expect(history.get_by_text("(probe)", false))
        .to_be_visible()
        .await?;
    expect(history.locator("li.gap").first())
        .to_contain_text("circuit wait, then this attempt probed the circuit: ")
        .await?;
    let (_, task) = server.send_json("GET", &format!("/api/tasks/{second}"), &Value::Null)?;
    assert_eq!(task["attempts"][0]["after_circuit_wait"], true, "{task}");
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// A filtered list shows only tasks in its state: a task that leaves it while
/// the page is open leaves the list too.
#[tokio::test]
async fn a_filtered_list_lets_go_of_a_task_that_leaves_its_state() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let held = start_task_asking(&server, json!([cut_off()]), "Draft the changelog.")?;
    let route = wait_for_state(&server, &held, "held")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/tasks?state=held"), None).await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("Live", true))
        .to_be_visible()
        .await?;
    let mut changelog = FilterOptions::default();
    changelog.has_text = Some("Draft the changelog.".to_owned());
    let row = page.get_by_role(AriaRole::Listitem, None).filter(changelog);
    expect(row.clone()).to_be_visible().await?;

    let (status, answer) = server.send_json(
        "POST",
        &format!("/api/tasks/{held}/actions"),
        &json!({"action": "stop", "generation": route["route"]["generation"]}),
    )?;
    anyhow::ensure!(status == 200, "stop: {status} {answer}");
    expect(row).to_be_hidden().await?;
    expect(page.locator("p.visually-hidden[role=status]"))
        .to_have_text("A task is now stopped on Candidate 1: gpt-drill.")
        .await?;
    Ok(())
}
