//! The providers page: add and edit providers, with and without JavaScript.
//! A key is never typed into it: only the name of the variable that holds it.

use end2end::{Browser, Device, TestServer, named};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;
use serde_json::Value;

#[tokio::test]
async fn add_and_edit_a_provider_with_inline_validation() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/providers"), None).await?;
    page.wait_for_hydration().await?;
    expect(page.get_by_text("No providers yet.", true))
        .to_be_visible()
        .await?;

    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    add.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("Anthropic", None)
        .await?;
    add.get_by_role(AriaRole::Combobox, named("Kind"))
        .select_option("anthropic", None)
        .await?;
    add.get_by_role(AriaRole::Textbox, named("Base URL"))
        .fill("https://api.anthropic.com", None)
        .await?;
    // A key pasted where its variable's name belongs is refused once the field is
    // left, and never echoed.
    let key_variable = add.get_by_role(AriaRole::Textbox, named("Key variable"));
    key_variable.fill("sk-ant-api03-secret", None).await?;
    expect(add.get_by_text("never the key itself", false))
        .to_have_count(0)
        .await?;
    key_variable.blur().await?;
    expect(add.get_by_text("never the key itself", false))
        .to_be_visible()
        .await?;
    expect(add.get_by_role(AriaRole::Button, named("Add provider")))
        .to_be_disabled()
        .await?;
    key_variable
        .fill("SWITCHBACK_TEST_MISSING_API_KEY", None)
        .await?;
    expect(add.get_by_role(AriaRole::Button, named("Add provider")))
        .to_be_enabled()
        .await?;
    add.get_by_role(AriaRole::Button, named("Add provider"))
        .click(None)
        .await?;

    let item = page.get_by_role(AriaRole::Listitem, named("Anthropic"));
    expect(item.get_by_text(
        "SWITCHBACK_TEST_MISSING_API_KEY (not set on the server)",
        true,
    ))
    .to_be_visible()
    .await?;
    expect(add.get_by_role(AriaRole::Textbox, named("Name")))
        .to_have_value("")
        .await?;

    item.get_by_text("Edit Anthropic", true).click(None).await?;
    item.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("Anthropic EU", None)
        .await?;
    item.get_by_role(AriaRole::Button, named("Save provider"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Anthropic EU")))
        .to_be_visible()
        .await?;

    let (_, providers) = server.send_json("GET", "/api/providers", &Value::Null)?;
    assert_eq!(providers[0]["name"], "Anthropic EU");
    assert_eq!(providers[0]["revision"], 2);
    assert!(!providers.to_string().contains("sk-ant"));
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn add_a_provider_as_plain_html_without_javascript() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/providers"), None).await?;
    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    add.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("Local vLLM", None)
        .await?;
    add.get_by_role(AriaRole::Combobox, named("Kind"))
        .select_option("openai_compatible", None)
        .await?;
    add.get_by_role(AriaRole::Textbox, named("Base URL"))
        .fill("localhost:8000", None)
        .await?;
    add.get_by_role(AriaRole::Button, named("Add provider"))
        .click(None)
        .await?;

    // Refused on the server: the same page, the values kept, the error on its field.
    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    expect(add.get_by_text("must start with http:// or https://", true))
        .to_be_visible()
        .await?;
    expect(add.get_by_role(AriaRole::Textbox, named("Name")))
        .to_have_value("Local vLLM")
        .await?;
    add.get_by_role(AriaRole::Textbox, named("Base URL"))
        .fill("http://127.0.0.1:8000", None)
        .await?;
    add.get_by_role(AriaRole::Button, named("Add provider"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Local vLLM")))
        .to_be_visible()
        .await?;
    expect(page.get_by_text("no key", true))
        .to_be_visible()
        .await?;
    Ok(())
}

/// A form on another site that posts to Switchback is refused before it can
/// add a provider (one with an attacker's base URL would receive the key),
/// while the app's own forms, above, go through.
#[tokio::test]
async fn a_form_on_another_site_cannot_add_a_provider() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    // To a browser, localhost and 127.0.0.1 are different sites. The forged
    // form sits on an answer that is not one of the app's pages: a page's own
    // policy (`form-action 'self'`) would stop the post in the browser before
    // the server's refusal is ever tried, and another site's page carries no
    // such policy.
    let other_site = server.url("/healthz").replace("127.0.0.1", "localhost");
    page.goto(&other_site, None).await?;
    let target = server.url("/providers");
    let _: Value = page
        .evaluate(
            &format!(
                r#"() => {{
                    const form = document.createElement('form');
                    form.method = 'post';
                    form.action = {target:?};
                    for (const [name, value] of [['name', 'Forged'], ['kind', 'openai'],
                            ['base_url', 'https://attacker.example'], ['api_key_env', 'OPENAI_API_KEY']]) {{
                        const input = document.createElement('input');
                        input.name = name;
                        input.value = value;
                        form.appendChild(input);
                    }}
                    document.body.appendChild(form);
                    form.submit();
                    return null;
                }}"#
            ),
            None::<&()>,
        )
        .await?;
    expect(page.get_by_text("came from another site", false))
        .to_be_visible()
        .await?;
    let (status, providers) = server.send_json("GET", "/api/providers", &Value::Null)?;
    assert_eq!((status, providers), (200, serde_json::json!([])));
    Ok(())
}

/// An agent CLI set up in the form, with its settings typed as text; its
/// usage window, read in the zone the form gave it, is shown on the route
/// view in that zone, by the browser's own zone data.
#[tokio::test]
async fn an_agent_cli_from_the_form_shows_its_usage_window_in_its_zone() -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let server = TestServer::start()?;
    // A stand-in for Claude Code that is always at its plan's limit, printing
    // what Claude Code prints then (see providers/tests/cli.rs).
    let dir = tempfile::tempdir()?;
    let program = dir.path().join("claude");
    let limit = "You've hit your limit · resets 3pm (Europe/Berlin)";
    // Each event quoted for the shell, its apostrophes too.
    let echo = |event: Value| format!("echo '{}'\n", event.to_string().replace('\'', r"'\''"));
    std::fs::write(
        &program,
        format!(
            "#!/bin/sh\ncat > /dev/null\n{}{}",
            echo(
                serde_json::json!({"type": "assistant", "error": "rate_limit", "message": {"model": "<synthetic>", "role": "assistant", "content": [{"type": "text", "text": limit}]}})
            ),
            echo(
                serde_json::json!({"type": "result", "subtype": "success", "is_error": true, "result": limit})
            ),
        ),
    )?;
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755))?;

    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/providers"), None).await?;
    page.wait_for_hydration().await?;
    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    add.get_by_role(AriaRole::Textbox, named("Name"))
        .fill("Claude Code", None)
        .await?;
    add.get_by_role(AriaRole::Combobox, named("Kind"))
        .select_option("cli", None)
        .await?;
    expect(add.get_by_role(AriaRole::Textbox, named("Base URL")))
        .to_be_hidden()
        .await?;
    add.get_by_role(AriaRole::Combobox, named("Preset"))
        .select_option("claude_code", None)
        .await?;
    add.get_by_role(AriaRole::Textbox, named("Command"))
        .fill(
            &format!(
                "{}\n-p\n--output-format\nstream-json\n--verbose\n--model\n{{model}}",
                program.display()
            ),
            None,
        )
        .await?;
    let variables = add.get_by_role(AriaRole::Textbox, named("Variables it may see"));
    variables.fill("PATH HOME GITHUB_TOKEN", None).await?;
    variables.blur().await?;
    expect(add.get_by_text("item 3: looks like a secret", false))
        .to_be_visible()
        .await?;
    variables.fill("PATH HOME", None).await?;
    add.get_by_role(AriaRole::Textbox, named("Time zone"))
        .fill("Europe/Berlin", None)
        .await?;
    add.get_by_role(AriaRole::Button, named("Add provider"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Claude Code")))
        .to_be_visible()
        .await?;

    let (_, providers) = server.send_json("GET", "/api/providers", &Value::Null)?;
    assert_eq!(
        providers[0]["cli"]["time_zone"], "Europe/Berlin",
        "{providers}"
    );
    let (status, profile) = server.send_json(
        "POST",
        "/api/profiles",
        &serde_json::json!({"name": "Subscription", "candidates": [
            {"provider_id": providers[0]["id"], "model": "sonnet", "enabled": true, "max_tokens": 1024,
             "policy": {"version": 2,
                "transient": {"retry": {"enabled": true, "max_retries": 2, "initial_interval_ms": 500},
                              "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
                "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                         "reset_wait": {"enabled": true, "max_wait_s": 604800}, "on_exhausted": "stop"}}}]}),
    )?;
    anyhow::ensure!(status == 201, "profile: {status} {profile}");
    let (status, task) = server.send_json(
        "POST",
        "/api/tasks",
        &serde_json::json!({"profile_id": profile["id"], "prompt": "Fix the build."}),
    )?;
    anyhow::ensure!(status == 201, "task: {status} {task}");
    let id = task["id"].as_str().unwrap_or_default().to_owned();
    testkit::eventually(std::time::Duration::from_secs(10), || {
        match server.send_json("GET", &format!("/api/tasks/{id}"), &Value::Null) {
            Ok((_, task)) if task["route"]["state"] == "waiting_for_reset" => Ok(()),
            other => Err(format!("not waiting yet: {other:?}")),
        }
    });

    page.goto(&server.url(&format!("/tasks/{id}")), None)
        .await?;
    page.wait_for_hydration().await?;
    // Central European (Summer) Time, never the server's UTC.
    expect(page.locator("p.deadline"))
        .to_contain_text_regex(
            r"^Claude Code usage window resets at 15:00 CES?T \(in [0-9][^)]*\)$",
        )
        .await?;
    assert_eq!(page.errors(), Vec::<String>::new());
    Ok(())
}

/// A form nobody has touched shows no errors: a field is checked once it has been
/// left, then on every keystroke.
#[tokio::test]
async fn a_pristine_form_shows_no_errors_until_a_field_is_left() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    for path in ["/providers", "/profiles/new", "/client-keys"] {
        page.goto(&server.url(path), None).await?;
        page.wait_for_hydration().await?;
        let invalid: Vec<String> = page
            .locator("[aria-invalid=\"true\"]")
            .evaluate_all("fields => fields.map(field => field.id)", None::<()>)
            .await?;
        assert_eq!(invalid, Vec::<String>::new(), "{path} opens with errors");
        expect(page.get_by_role(AriaRole::Alert, None))
            .to_have_count(0)
            .await?;
    }
    page.goto(&server.url("/providers"), None).await?;
    page.wait_for_hydration().await?;
    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    let name = add.get_by_role(AriaRole::Textbox, named("Name"));
    name.fill("x", None).await?;
    name.fill("", None).await?;
    name.blur().await?;
    expect(name.clone())
        .to_have_attribute("aria-invalid", "true")
        .await?;
    // Pressing Add provider on a form with errors not yet shown shows them all.
    page.goto(&server.url("/providers"), None).await?;
    page.wait_for_hydration().await?;
    let add = page.get_by_role(AriaRole::Region, named("Add a provider"));
    add.get_by_role(AriaRole::Button, named("Add provider"))
        .click(None)
        .await?;
    expect(add.get_by_role(AriaRole::Textbox, named("Name")))
        .to_have_attribute("aria-invalid", "true")
        .await?;
    let (_, providers) = server.send_json("GET", "/api/providers", &Value::Null)?;
    assert_eq!(providers, serde_json::json!([]), "nothing was added");
    Ok(())
}
