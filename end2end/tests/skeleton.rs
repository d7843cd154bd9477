//! The skeleton in a real browser: server rendering, hydration, navigation
//! the phone layout, and a page whose code is missing after an upgrade.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use end2end::{Browser, Device, TestPage, TestServer, named, phone_layout_problems};
use playwright_rs::expect;
use playwright_rs::protocol::{AriaRole, FulfillOptions};

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

/// What the home page's schedule preview says once [`type_a_schedule`] has typed.
const TYPED_SCHEDULE: &str =
    "retry 1 after 1 s, retry 2 after 2 s; gives up after 3 s, then skips to the next candidate";

/// Type two retries and a first interval of 1 s into the home page's schedule
/// preview (hydrated).
async fn type_a_schedule(page: &TestPage) -> anyhow::Result<()> {
    page.get_by_role(AriaRole::Spinbutton, named("Max retries"))
        .fill("2", None)
        .await?;
    page.get_by_role(AriaRole::Spinbutton, named("Initial interval (ms)"))
        .fill("1000", None)
        .await?;
    Ok(())
}

#[tokio::test]
async fn controls_work_after_hydration_and_links_navigate_in_the_app() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;

    type_a_schedule(&page).await?;
    expect(page.get_by_role(AriaRole::Status, None))
        .to_have_text(TYPED_SCHEDULE)
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

/// The home page of a new install reads its data again each time its live stream
/// opens, which draws its sections anew: what a person typed into the schedule's
/// preview stays.
#[tokio::test]
async fn the_schedule_preview_keeps_what_was_typed_when_the_page_is_read_again()
-> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let page = browser.page(Device::Desktop, true).await?;
    // The live stream opens only once the person has typed.
    let (open, opened) = tokio::sync::watch::channel(false);
    page.route("**/api/events", move |route| {
        let mut opened = opened.clone();
        async move {
            let _ = opened.wait_for(|open| *open).await;
            route.continue_(None).await
        }
    })
    .await?;
    page.goto(&server.url("/"), None).await?;
    page.wait_for_hydration().await?;
    type_a_schedule(&page).await?;
    let schedule = page.get_by_role(AriaRole::Status, None);
    expect(schedule.clone())
        .to_have_text(TYPED_SCHEDULE)
        .await?;

    // A provider added meanwhile shows when the page's data has been read again.
    let (status, body) = server.send_json(
        "POST",
        "/api/providers",
        &serde_json::json!({"name": "Simulated", "kind": "simulated"}),
    )?;
    assert_eq!(status, 201, "{body}");
    open.send(true)?;
    expect(page.locator("li.step.done").first())
        .to_be_visible()
        .await?;
    expect(schedule).to_have_text(TYPED_SCHEDULE).await?;
    assert_eq!(
        page.get_by_role(AriaRole::Spinbutton, named("Max retries"))
            .input_value(None)
            .await?,
        "2"
    );
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

/// A page on /profiles whose requests for the tasks page's chunk are
/// answered 404 the first `refusals` times, as after an upgrade; and how many
/// times the page has asked for it.
async fn profiles_without_the_tasks_chunk(
    browser: &Browser,
    server: &TestServer,
    refusals: usize,
) -> anyhow::Result<(TestPage, Arc<AtomicUsize>)> {
    let page = browser.page(Device::Desktop, true).await?;
    let asked = Arc::new(AtomicUsize::new(0));
    let count = asked.clone();
    page.route("**/split___tasks_route_view_*.wasm", move |route| {
        let refuse = count.fetch_add(1, Ordering::SeqCst) < refusals;
        async move {
            if refuse {
                route
                    .fulfill(FulfillOptions::builder().status(404).build())
                    .await
            } else {
                route.continue_(None).await
            }
        }
    })
    .await?;
    page.goto(&server.url("/profiles"), None).await?;
    page.wait_for_hydration().await?;
    Ok((page, asked))
}

#[tokio::test]
async fn a_tab_that_cannot_load_a_pages_chunk_loads_that_page_anew() -> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let (page, asked) = profiles_without_the_tasks_chunk(&browser, &server, 1).await?;
    page.evaluate_expression("window.beforeTheLoad = true")
        .await?;

    page.get_by_role(AriaRole::Link, named("Tasks"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Tasks")))
        .to_be_visible()
        .await?;
    page.wait_for_hydration().await?;
    let same_document: bool = page
        .evaluate::<(), bool>("() => window.beforeTheLoad === true", None)
        .await?;
    assert!(!same_document, "the page was loaded anew");
    assert!(page.url().ends_with("/tasks"), "{}", page.url());
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "asked, then again from the new page"
    );
    // The new page is live: its links navigate in the app.
    page.get_by_role(AriaRole::Link, named("Profiles"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Heading, named("Dynamic profiles")))
        .to_be_visible()
        .await?;
    Ok(())
}

#[tokio::test]
async fn a_chunk_missing_after_loading_anew_is_said_on_the_page_not_loaded_again()
-> anyhow::Result<()> {
    let server = TestServer::start()?;
    let browser = Browser::launch().await?;
    let (page, asked) = profiles_without_the_tasks_chunk(&browser, &server, usize::MAX).await?;

    page.get_by_role(AriaRole::Link, named("Tasks"))
        .click(None)
        .await?;
    expect(page.get_by_role(AriaRole::Alert, None))
        .to_contain_text("could not be loaded")
        .await?;
    // The server's page, loaded once more and no more.
    expect(page.get_by_role(AriaRole::Heading, named("Tasks")))
        .to_be_visible()
        .await?;
    assert!(page.url().ends_with("/tasks"), "{}", page.url());
    assert_eq!(asked.load(Ordering::SeqCst), 2);
    Ok(())
}
