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
    // A key pasted where its variable's name belongs is refused, and never echoed.
    let key_variable = add.get_by_role(AriaRole::Textbox, named("Key variable"));
    key_variable.fill("sk-ant-api03-secret", None).await?;
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
