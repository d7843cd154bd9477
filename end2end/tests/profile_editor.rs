//! The dynamic profile editor in a real browser, on a desktop and a Pixel 5,
//! with and without JavaScript.

use std::sync::{Arc, Mutex};

use end2end::{Browser, Device, TestPage, TestServer, named, phone_layout_problems};
use playwright_rs::protocol::{AriaRole, Locator};
use playwright_rs::{expect, expect_page};
use serde_json::{Value, json};

const PROFILE_URL: &str = r"/profiles/[0-9a-f-]{36}$";

fn provider(server: &TestServer, name: &str) -> anyhow::Result<String> {
    let (status, body) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": name, "kind": "simulated"}),
    )?;
    assert_eq!(status, 201, "{body}");
    Ok(body["id"].as_str().unwrap().to_owned())
}

fn profile(server: &TestServer, body: Value) -> anyhow::Result<Value> {
    let (status, body) = server.send_json("POST", "/api/profiles", &body)?;
    assert_eq!(status, 201, "{body}");
    Ok(body)
}

fn candidate(page: &TestPage, title: &str) -> Locator {
    page.get_by_role(AriaRole::Group, named(title))
}

fn section(candidate: &Locator, heading: &str) -> Locator {
    candidate.get_by_role(AriaRole::Group, named(heading))
}

fn number(scope: &Locator, label: &str) -> Locator {
    scope.get_by_role(AriaRole::Spinbutton, named(label))
}

fn schedule(section: &Locator) -> Locator {
    section.get_by_role(AriaRole::Status, None)
}

#[tokio::test]
async fn create_tune_reorder_save_and_reload_on_a_desktop() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    provider(&server, "Simulated")?;
    let backup_id = provider(&server, "Backup")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;

    page.goto(&server.url("/profiles"), None).await?;
    page.wait_for_hydration().await?;
    page.get_by_role(AriaRole::Link, named("New dynamic profile"))
        .click(None)
        .await?;
    expect_page(&page)
        .to_have_url_regex(r"/profiles/new$")
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("New dynamic profile")))
        .to_be_visible()
        .await?;
    // Exactly one draft (one card, so one Remove), and no second way to add a profile.
    expect(page.get_by_role(AriaRole::Button, named("Remove")))
        .to_have_count(1)
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Add profile")))
        .to_have_count(0)
        .await?;

    page.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("Coding", None)
        .await?;
    let first = candidate(&page, "Candidate 1: no model yet");
    first
        .get_by_role(AriaRole::Textbox, named("Model"))
        .fill("model-alpha", None)
        .await?;
    let first = candidate(&page, "Candidate 1: model-alpha");
    let transient = section(&first, "Transient errors");
    expect(transient.get_by_text("overloaded (capacity)", false))
        .to_be_visible()
        .await?;

    number(&transient, "Max retries").fill("3", None).await?;
    number(&transient, "Initial interval (ms)")
        .fill("1000", None)
        .await?;
    transient
        .get_by_role(AriaRole::Checkbox, named("Wait for reset"))
        .uncheck(None)
        .await?;
    expect(schedule(&transient))
        .to_have_text("Retry 1 after 1 s, retry 2 after 2 s, retry 3 after 4 s; gives up after 7 s, then stops, as no candidate follows.")
        .await?;

    // An out-of-range value is refused in place, and Save waits for it.
    number(&transient, "Max retries").fill("11", None).await?;
    expect(transient.get_by_text("must be between 1 and 10", false))
        .to_be_visible()
        .await?;
    expect(number(&transient, "Max retries"))
        .to_have_attribute("aria-invalid", "true")
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Save")))
        .to_be_disabled()
        .await?;
    number(&transient, "Max retries").fill("3", None).await?;
    expect(transient.get_by_text("must be between 1 and 10", false))
        .to_have_count(0)
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Save")))
        .to_be_enabled()
        .await?;

    page.get_by_role(AriaRole::Button, named("Add candidate"))
        .click(None)
        .await?;
    candidate(&page, "Candidate 2: no model yet")
        .get_by_role(AriaRole::Textbox, named("Model"))
        .fill("model-beta", None)
        .await?;
    expect(schedule(&transient))
        .to_contain_text("then skips to model-beta.")
        .await?;

    let hard = section(&first, "Hard errors");
    hard.get_by_role(AriaRole::Checkbox, named("Retry"))
        .check(None)
        .await?;
    number(&hard, "Max retries").fill("1", None).await?;
    number(&hard, "Initial interval (ms)")
        .fill("2000", None)
        .await?;
    hard.get_by_role(AriaRole::Radiogroup, named("After exhaustion"))
        .get_by_role(AriaRole::Radio, named("Stop"))
        .check(None)
        .await?;
    expect(schedule(&hard))
        .to_have_text("Retry 1 after 2 s; gives up after 2 s, then stops.")
        .await?;

    let second = candidate(&page, "Candidate 2: model-beta");
    second
        .get_by_role(AriaRole::Combobox, named("Provider"))
        .select_option(backup_id.as_str(), None)
        .await?;
    second
        .get_by_role(AriaRole::Checkbox, named("Enabled"))
        .uncheck(None)
        .await?;
    number(&second, "Max tokens").fill("2000", None).await?;
    number(&second, "Max escalations").fill("2", None).await?;
    number(&second, "Escalation ceiling (tokens)")
        .fill("64000", None)
        .await?;
    // With the only other candidate disabled, a skip has nowhere to go.
    expect(schedule(&transient))
        .to_contain_text("then stops, as no candidate follows.")
        .await?;
    // Reorder by keyboard: down and back up, then up for good.
    first
        .get_by_role(AriaRole::Button, named("Move down"))
        .focus()
        .await?;
    page.keyboard().press("Enter", None).await?;
    expect(candidate(&page, "Candidate 1: model-beta"))
        .to_be_visible()
        .await?;
    candidate(&page, "Candidate 2: model-alpha")
        .get_by_role(AriaRole::Button, named("Move up"))
        .click(None)
        .await?;
    expect(candidate(&page, "Candidate 1: model-alpha"))
        .to_be_visible()
        .await?;
    second
        .get_by_role(AriaRole::Button, named("Move up"))
        .click(None)
        .await?;
    expect(candidate(&page, "Candidate 1: model-beta"))
        .to_be_visible()
        .await?;
    expect(candidate(&page, "Candidate 2: model-alpha"))
        .to_be_visible()
        .await?;

    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect_page(&page).to_have_url_regex(PROFILE_URL).await?;
    expect(page.get_by_text("All changes saved", true))
        .to_be_visible()
        .await?;

    page.reload(None).await?;
    page.wait_for_hydration().await?;
    let beta = candidate(&page, "Candidate 1: model-beta");
    let alpha = candidate(&page, "Candidate 2: model-alpha");
    expect(beta.get_by_role(AriaRole::Checkbox, named("Enabled")))
        .not()
        .to_be_checked()
        .await?;
    expect(beta.get_by_role(AriaRole::Combobox, named("Provider")))
        .to_have_value(&backup_id)
        .await?;
    expect(number(&beta, "Max tokens"))
        .to_have_value("2000")
        .await?;
    expect(number(&beta, "Max escalations"))
        .to_have_value("2")
        .await?;
    expect(number(&beta, "Escalation ceiling (tokens)"))
        .to_have_value("64000")
        .await?;
    let transient = section(&alpha, "Transient errors");
    expect(number(&transient, "Max retries"))
        .to_have_value("3")
        .await?;
    expect(number(&transient, "Initial interval (ms)"))
        .to_have_value("1000")
        .await?;
    expect(transient.get_by_role(AriaRole::Checkbox, named("Wait for reset")))
        .not()
        .to_be_checked()
        .await?;
    let hard = section(&alpha, "Hard errors");
    expect(hard.get_by_role(AriaRole::Checkbox, named("Retry")))
        .to_be_checked()
        .await?;
    expect(number(&hard, "Initial interval (ms)"))
        .to_have_value("2000")
        .await?;
    expect(hard.get_by_role(AriaRole::Radio, named("Stop")))
        .to_be_checked()
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new());

    // The API agrees.
    let (_, profiles) = server.send_json("GET", "/api/profiles", &Value::Null)?;
    let stored = &profiles[0];
    assert_eq!(stored["name"], "Coding");
    assert_eq!(
        stored["candidates"][1]["policy"]["hard"]["on_exhausted"],
        "stop"
    );
    assert_eq!(
        stored["candidates"][0]["escalation"],
        json!({"max_escalations": 2, "ceiling_tokens": 64000})
    );
    assert_eq!(stored["candidates"][0]["provider_id"], backup_id.as_str());
    Ok(())
}

/// The addresses of the chunk of the editor's checks (its lazy function
/// `check`, `app/src/editor/on_demand.rs`) that `page` has asked for, from
/// now on: recorded as each request starts.
async fn requests_for_the_checks(page: &TestPage) -> anyhow::Result<Arc<Mutex<Vec<String>>>> {
    let asked = Arc::new(Mutex::new(Vec::new()));
    let sink = asked.clone();
    page.on_request(move |request| {
        let sink = sink.clone();
        async move {
            let url = request.url().to_owned();
            let file = url.rsplit('/').next().unwrap_or_default();
            if file.starts_with("split_check_") && file.ends_with(".wasm") {
                sink.lock().expect("request list lock").push(url);
            }
            Ok(())
        }
    })
    .await?;
    Ok(asked)
}

#[tokio::test]
async fn the_editor_opens_without_errors_and_fetches_its_checks_when_touched() -> anyhow::Result<()>
{
    let server = TestServer::start()?;
    provider(&server, "Simulated")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    let checks = requests_for_the_checks(&page).await?;
    page.goto(&server.url("/profiles/new"), None).await?;
    page.wait_for_hydration().await?;

    // A pristine draft shows no errors, though its name is still required, and
    // Save can be pressed.
    let name = page.get_by_role(AriaRole::Textbox, named("Name"));
    expect(page.locator("[aria-invalid=\"true\"]"))
        .to_have_count(0)
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Save")))
        .to_be_enabled()
        .await?;
    // Hydration has run the editor's effects: none asked for the chunk.
    assert_eq!(
        *checks.lock().unwrap(),
        Vec::<String>::new(),
        "the editor asked for its checks before it was touched"
    );

    // The first touch fetches them; the edit is checked with them.
    name.fill("Coding", None).await?;
    name.blur().await?;
    expect(name.clone())
        .not()
        .to_have_attribute("aria-invalid", "true")
        .await?;
    assert_eq!(
        checks.lock().unwrap().len(),
        1,
        "the checks were fetched once"
    );
    // A field once left is checked on every keystroke.
    name.fill("", None).await?;
    expect(page.locator("#f-name-error"))
        .to_have_text("must not be empty")
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Save")))
        .to_be_disabled()
        .await?;
    // Save pressed on a draft with errors not yet shown shows them all.
    page.goto(&server.url("/profiles/new"), None).await?;
    page.wait_for_hydration().await?;
    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect(page.locator("#f-name-error"))
        .to_have_text("must not be empty")
        .await?;
    let (_, profiles) = server.send_json("GET", "/api/profiles", &Value::Null)?;
    assert_eq!(profiles, json!([]), "nothing was saved");
    Ok(())
}

#[tokio::test]
async fn a_server_error_lands_on_its_field_and_unsaved_changes_are_guarded() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let provider_id = provider(&server, "Simulated")?;
    let body = |name: &str| json!({"name": name, "candidates": [{"provider_id": provider_id, "model": "m", "enabled": true, "max_tokens": 100}]});
    profile(&server, body("Taken"))?;
    let mine = profile(&server, body("Mine"))?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(
        &server.url(&format!("/profiles/{}", mine["id"].as_str().unwrap())),
        None,
    )
    .await?;
    page.wait_for_hydration().await?;

    // Only the server knows the name is taken.
    let name = page.get_by_role(AriaRole::Textbox, named("Name"));
    name.fill("taken", None).await?;
    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect(page.get_by_text("another profile already has this name", false))
        .to_be_visible()
        .await?;
    expect(name.clone())
        .to_have_attribute("aria-invalid", "true")
        .await?;

    // Leaving with unsaved changes asks first; the test's browser answers no.
    page.get_by_role(AriaRole::Navigation, named("Main"))
        .get_by_role(AriaRole::Link, named("Profiles"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Edit dynamic profile")))
        .to_be_visible()
        .await?;
    expect(name.clone()).to_have_value("taken").await?;

    // Fixed and saved, leaving is free.
    name.fill("Mine, renamed", None).await?;
    expect(page.get_by_text("another profile already has this name", false))
        .to_have_count(0)
        .await?;
    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect(page.get_by_text("All changes saved", true))
        .to_be_visible()
        .await?;
    page.get_by_role(AriaRole::Navigation, named("Main"))
        .get_by_role(AriaRole::Link, named("Profiles"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Link, named("Mine, renamed")))
        .to_be_visible()
        .await?;
    Ok(())
}

#[tokio::test]
async fn the_editor_works_as_plain_html_without_javascript() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    provider(&server, "Simulated")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/profiles/new"), None).await?;

    // The whole form is in the server's answer, with its values.
    let first = candidate(&page, "Candidate 1: no model yet");
    let transient = section(&first, "Transient errors");
    expect(number(&transient, "Max retries"))
        .to_have_value("2")
        .await?;
    expect(schedule(&transient))
        .to_contain_text("retry 1 after 0.5 s, retry 2 after 1 s")
        .await?;

    page.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("No script", None)
        .await?;
    first
        .get_by_role(AriaRole::Textbox, named("Model"))
        .fill("model-alpha", None)
        .await?;
    page.get_by_role(AriaRole::Button, named("Add candidate"))
        .click(None)
        .await?;
    let second = candidate(&page, "Candidate 2: no model yet");
    expect(second.clone()).to_be_visible().await?;
    expect(page.get_by_role(AriaRole::Textbox, named("Name")))
        .to_have_value("No script")
        .await?;
    second
        .get_by_role(AriaRole::Textbox, named("Model"))
        .fill("model-beta", None)
        .await?;
    let transient = section(
        &candidate(&page, "Candidate 1: model-alpha"),
        "Transient errors",
    );
    number(&transient, "Max retries").fill("11", None).await?;

    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    let transient = section(
        &candidate(&page, "Candidate 1: model-alpha"),
        "Transient errors",
    );
    expect(transient.get_by_text("must be between 1 and 10", false))
        .to_be_visible()
        .await?;
    expect(number(&transient, "Max retries"))
        .to_have_value("11")
        .await?;
    expect(page.get_by_text("Nothing was saved", false))
        .to_be_visible()
        .await?;

    number(&transient, "Max retries").fill("4", None).await?;
    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect_page(&page).to_have_url_regex(PROFILE_URL).await?;
    let transient = section(
        &candidate(&page, "Candidate 1: model-alpha"),
        "Transient errors",
    );
    expect(number(&transient, "Max retries"))
        .to_have_value("4")
        .await?;
    expect(candidate(&page, "Candidate 2: model-beta"))
        .to_be_visible()
        .await?;
    Ok(())
}

#[tokio::test]
async fn the_editor_on_a_pixel_5() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let provider_id = provider(&server, "Simulated")?;
    let candidates: Vec<Value> = ["model-alpha", "model-beta"]
        .iter()
        .map(|model| json!({"provider_id": provider_id, "model": model, "enabled": true, "max_tokens": 1000}))
        .collect();
    let stored = profile(&server, json!({"name": "Phone", "candidates": candidates}))?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Pixel5, true).await?;
    let edit_path = format!("/profiles/{}", stored["id"].as_str().unwrap());
    for path in [
        "/profiles",
        "/providers",
        edit_path.as_str(),
        "/profiles/new",
    ] {
        page.goto(&server.url(path), None).await?;
        page.wait_for_hydration().await?;
        let problems = phone_layout_problems(&page).await?;
        assert!(problems.is_empty(), "{path} on a Pixel 5: {problems:#?}");
    }
    // One column: the hard section sits under the transient one.
    let first = candidate(&page, "Candidate 1: no model yet");
    let transient = section(&first, "Transient errors")
        .bounding_box()
        .await?
        .expect("box");
    let hard = section(&first, "Hard errors")
        .bounding_box()
        .await?
        .expect("box");
    assert!(
        hard.y >= transient.y + transient.height,
        "{transient:?} then {hard:?}"
    );
    // Taps edit the form.
    page.get_by_role(AriaRole::Button, named("Add candidate"))
        .tap(None)
        .await?;
    let second = candidate(&page, "Candidate 2: no model yet");
    second
        .get_by_role(AriaRole::Button, named("Remove"))
        .tap(None)
        .await?;
    expect(page.get_by_role(AriaRole::Button, named("Remove")))
        .to_have_count(1)
        .await?;
    Ok(())
}

#[tokio::test]
async fn sections_sit_side_by_side_on_a_desktop() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    provider(&server, "Simulated")?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/profiles/new"), None).await?;
    let first = candidate(&page, "Candidate 1: no model yet");
    let transient = section(&first, "Transient errors")
        .bounding_box()
        .await?
        .expect("box");
    let hard = section(&first, "Hard errors")
        .bounding_box()
        .await?
        .expect("box");
    assert!(
        (hard.y - transient.y).abs() < 1.0 && hard.x > transient.x + transient.width - 1.0,
        "{transient:?} beside {hard:?}"
    );
    Ok(())
}

/// A model name longer than a phone is wide wraps inside its candidate's card:
/// the legend that titles the card stays within it.
#[tokio::test]
async fn a_long_model_name_wraps_inside_its_card_on_a_phone() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let provider_id = provider(&server, "Fireworks")?;
    let long = "accounts/fireworks/models/llama-v3p1-405b-instruct-long-context-preview-2026-12-01";
    let stored = profile(
        &server,
        json!({"name": "Long names", "candidates": [
            {"provider_id": provider_id, "model": long, "enabled": true, "max_tokens": 1000}
        ]}),
    )?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Pixel5, true).await?;
    page.goto(
        &server.url(&format!("/profiles/{}", stored["id"].as_str().unwrap())),
        None,
    )
    .await?;
    page.wait_for_hydration().await?;
    let card = candidate(&page, &format!("Candidate 1: {long}"));
    expect(card.clone()).to_be_visible().await?;
    let problems = phone_layout_problems(&page).await?;
    assert!(
        problems.is_empty(),
        "a long model name on a Pixel 5: {problems:#?}"
    );
    let card_box = card.bounding_box().await?.expect("box");
    let legend = card
        .locator("legend")
        .first()
        .bounding_box()
        .await?
        .expect("box");
    assert!(
        legend.x + legend.width <= card_box.x + card_box.width + 0.5,
        "the legend {legend:?} stays inside its card {card_box:?}"
    );
    // The profile list and the route view name it too.
    page.goto(&server.url("/profiles"), None).await?;
    page.wait_for_hydration().await?;
    let problems = phone_layout_problems(&page).await?;
    assert!(problems.is_empty(), "/profiles on a Pixel 5: {problems:#?}");
    Ok(())
}

#[tokio::test]
async fn a_draft_is_tried_on_stored_failures_before_it_is_saved() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let overloaded = json!({"error": {"provider": "anthropic", "status": 529,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}});
    let (status, flaky) = server.send_json(
        "POST",
        "/api/providers",
        &json!({"name": "Flaky", "kind": "simulated", "family": "anthropic",
            "script": [overloaded.clone(), overloaded, {"reply": "third time lucky"}]}),
    )?;
    assert_eq!(status, 201, "{flaky}");
    let steady = provider(&server, "Steady")?;
    let stored = profile(
        &server,
        json!({"name": "Tried", "candidates": [
            {"provider_id": flaky["id"], "model": "claude-flaky", "enabled": true, "max_tokens": 1024},
            {"provider_id": steady, "model": "steady", "enabled": true, "max_tokens": 1024}]}),
    )?;
    // A task that retried twice (the defaults) and was answered.
    let (status, task) = server.send_json(
        "POST",
        "/api/tasks",
        &json!({"profile_id": stored["id"], "prompt": "Plan the migration."}),
    )?;
    assert_eq!(status, 201, "{task}");
    crate::tasks::wait_for_state(&server, task["id"].as_str().unwrap(), "completed")?;

    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(
        &server.url(&format!("/profiles/{}", stored["id"].as_str().unwrap())),
        None,
    )
    .await?;
    page.wait_for_hydration().await?;
    let first = candidate(&page, "Candidate 1: claude-flaky");
    let dry_run = first.get_by_role(AriaRole::Region, named("Try on recent failures"));
    dry_run
        .get_by_role(AriaRole::Button, named("Try on recent failures"))
        .click(None)
        .await?;
    expect(dry_run.get_by_text("Then: answered after", false))
        .to_be_visible()
        .await?;
    expect(dry_run.get_by_text("This draft: answered after", false))
        .to_be_visible()
        .await?;
    expect(dry_run.get_by_text("would end 0 differently", false))
        .to_be_visible()
        .await?;

    // Without retries the draft skips at the first failure: it says so.
    section(&first, "Transient errors")
        .get_by_role(AriaRole::Checkbox, named("Retry"))
        .uncheck(None)
        .await?;
    dry_run
        .get_by_role(AriaRole::Button, named("Try on recent failures"))
        .click(None)
        .await?;
    expect(dry_run.get_by_text("This draft: skipped after", false))
        .to_be_visible()
        .await?;
    expect(dry_run.get_by_text("overloaded: skip to the next candidate", false))
        .to_be_visible()
        .await?;
    expect(dry_run.get_by_text("would end 1 differently", false))
        .to_be_visible()
        .await?;
    page.screenshot_if_asked("editor-dry-run").await?;

    // Nothing was stored by trying; saving stores the draft.
    let (_, before) = server.send_json(
        "GET",
        &format!("/api/profiles/{}", stored["id"].as_str().unwrap()),
        &Value::Null,
    )?;
    assert_eq!(
        before["candidates"][0]["policy"]["transient"]["retry"]["enabled"],
        true
    );
    page.get_by_role(AriaRole::Button, named("Save"))
        .click(None)
        .await?;
    expect(page.get_by_text("All changes saved", true))
        .to_be_visible()
        .await?;
    let (_, after) = server.send_json(
        "GET",
        &format!("/api/profiles/{}", stored["id"].as_str().unwrap()),
        &Value::Null,
    )?;
    assert_eq!(
        after["candidates"][0]["policy"]["transient"]["retry"]["enabled"],
        false
    );
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}
