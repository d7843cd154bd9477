//! The skeleton in a real browser: server rendering, hydration, navigation
//! and the phone layout.

use end2end::{Browser, Device, TestServer, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::AriaRole;

#[tokio::test]
async fn home_page_is_rendered_on_the_server_without_javascript() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, false).await?;
    page.goto(&server.url("/"), None).await?;

    expect(page.get_by_role(
        AriaRole::Heading,
        named("Recover from provider failures by a policy you can read"),
    ))
    .to_be_visible()
    .await?;
    let nav = page.get_by_role(AriaRole::Navigation, named("Main"));
    expect(nav.get_by_role(AriaRole::Link, named("Profiles")))
        .to_be_visible()
        .await?;
    expect(nav.get_by_role(AriaRole::Link, named("Providers")))
        .to_be_visible()
        .await?;
    expect(nav.get_by_role(AriaRole::Link, named("Tasks")))
        .to_be_visible()
        .await?;
    expect(page.get_by_role(AriaRole::Main, None))
        .to_be_visible()
        .await?;
    expect(page.get_by_role(AriaRole::Banner, None))
        .to_be_visible()
        .await?;
    // The schedule was computed on the server by the policy crate.
    expect(page.get_by_role(AriaRole::Status, None))
        .to_have_text("retry 1 after 0.5 s, retry 2 after 1 s, retry 3 after 2 s; gives up after 3.5 s, then skips to the next candidate")
        .await?;
    // Without JavaScript nothing hydrates.
    assert_eq!(page.locator("body[data-hydrated]").count().await?, 0);
    Ok(())
}

#[tokio::test]
async fn controls_work_after_hydration_and_links_navigate_in_the_app() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;

    page.get_by_role(AriaRole::Spinbutton, named("Max retries"))
        .fill("2", None)
        .await?;
    page.get_by_role(AriaRole::Spinbutton, named("Initial interval (ms)"))
        .fill("1000", None)
        .await?;
    expect(page.get_by_role(AriaRole::Status, None))
        .to_have_text("retry 1 after 1 s, retry 2 after 2 s; gives up after 3 s, then skips to the next candidate")
        .await?;

    page.get_by_role(AriaRole::Link, named("Profiles"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Dynamic profiles")))
        .to_be_visible()
        .await?;
    let current: String = page
        .get_by_role(AriaRole::Link, named("Profiles"))
        .evaluate(
            "element => element.getAttribute('aria-current')",
            None::<()>,
        )
        .await?;
    assert_eq!(current, "page");
    assert_eq!(page.errors(), Vec::<String>::new(), "no uncaught errors");
    Ok(())
}

#[tokio::test]
async fn unknown_paths_get_the_apps_not_found_page() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    let response = page
        .goto(&server.url("/no/such/page"), None)
        .await?
        .expect("a response");
    assert_eq!(response.status(), 404);
    expect(page.get_by_role(AriaRole::Heading, named("Page not found")))
        .to_be_visible()
        .await?;
    Ok(())
}

#[tokio::test]
async fn phone_layout_has_one_column_and_no_horizontal_overflow() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Pixel5, true).await?;
    for path in ["/", "/profiles", "/providers"] {
        page.goto(&server.url(path), None).await?;
        page.wait_for_hydration().await?;
        let problems = phone_layout_problems(&page).await?;
        assert!(problems.is_empty(), "{path} on a Pixel 5: {problems:#?}");
    }
    // The two inputs stack: one column.
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;
    let first = page
        .get_by_role(AriaRole::Spinbutton, named("Initial interval (ms)"))
        .bounding_box()
        .await?
        .expect("box");
    let second = page
        .get_by_role(AriaRole::Spinbutton, named("Max retries"))
        .bounding_box()
        .await?
        .expect("box");
    assert!(
        second.y >= first.y + first.height,
        "inputs stack on a phone: {first:?} then {second:?}"
    );
    // A tap works on a touch screen.
    page.get_by_role(AriaRole::Link, named("Providers"))
        .tap(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Providers")))
        .to_be_visible()
        .await?;
    Ok(())
}
