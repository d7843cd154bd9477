use std::sync::{Arc, Mutex};

use anyhow::Context;
use playwright_rs::LaunchOptions;
use playwright_rs::protocol::{BrowserContextOptions, Page, Playwright, Viewport};

/// Debian's Chromium; `CHROMIUM` overrides.
const DEFAULT_CHROMIUM: &str = "/usr/bin/chromium";

/// The flags this machine needs: no sandbox as root, and no background
/// networking (the network is closed, and Chromium's attempts only slow it).
const CHROMIUM_ARGS: &[&str] = &[
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
];

/// Records each Content-Security-Policy violation the page reports.
const CSP_RECORDER: &str = "window.__cspViolations = [];\
document.addEventListener('securitypolicyviolation', (event) => {\
  window.__cspViolations.push(`${event.violatedDirective} blocked ${event.blockedURI || 'inline'}: ${event.sample || ''}`);\
});";

/// The screens the tests use.
#[derive(Debug, Clone, Copy)]
pub enum Device {
    /// A 1280x800 desktop window.
    Desktop,
    /// The Pixel 5: 393x851, touch, mobile, device scale factor 2.75.
    Pixel5,
}

/// A headless Chromium and its Playwright driver.
pub struct Browser {
    _playwright: Playwright,
    browser: playwright_rs::protocol::Browser,
}

impl Browser {
    /// Launch Chromium headless. Any failure here fails the test.
    pub async fn launch() -> anyhow::Result<Self> {
        let playwright = Playwright::launch().await.context(
            "cannot start the Playwright driver (run scripts/setup: it installs playwright-core)",
        )?;
        let executable = std::env::var("CHROMIUM").unwrap_or_else(|_| DEFAULT_CHROMIUM.to_string());
        let options = LaunchOptions::new()
            .executable_path(executable.clone())
            .headless(true)
            .args(CHROMIUM_ARGS.iter().map(|arg| arg.to_string()).collect());
        let browser = playwright
            .chromium()
            .launch_with_options(options)
            .await
            .with_context(|| {
                format!("cannot launch {executable} (run scripts/setup: it installs chromium)")
            })?;
        Ok(Self {
            _playwright: playwright,
            browser,
        })
    }

    /// A fresh page on `device`, with JavaScript on or off. Uncaught page
    /// errors are collected: see [`TestPage::errors`].
    pub async fn page(&self, device: Device, javascript: bool) -> anyhow::Result<TestPage> {
        let builder = BrowserContextOptions::builder().javascript_enabled(javascript);
        let options = match device {
            Device::Desktop => builder.viewport(Viewport {
                width: 1280,
                height: 800,
            }),
            Device::Pixel5 => builder
                .viewport(Viewport {
                    width: 393,
                    height: 851,
                })
                .screen(Viewport {
                    width: 393,
                    height: 851,
                })
                .device_scale_factor(2.75)
                .is_mobile(true)
                .has_touch(true),
        }
        .build();
        let context = self.browser.new_context_with_options(options).await?;
        let page = context.new_page().await?;
        // Before any of the page's own scripts: remember every refusal of the
        // Content-Security-Policy (injected by the driver, so the policy does
        // not apply to this script itself).
        page.add_init_script(CSP_RECORDER).await?;
        let errors = Arc::new(Mutex::new(Vec::new()));
        let sink = errors.clone();
        page.on_pageerror(move |message| {
            let sink = sink.clone();
            async move {
                sink.lock().expect("error list lock").push(message);
                Ok(())
            }
        })
        .await?;
        // A dialog (confirm, beforeunload) is answered "no" and remembered,
        // so a test can see that the page asked.
        let dialogs = Arc::new(Mutex::new(Vec::new()));
        let asked = dialogs.clone();
        page.on_dialog(move |dialog| {
            let asked = asked.clone();
            async move {
                asked
                    .lock()
                    .expect("dialog list lock")
                    .push(dialog.message().to_owned());
                dialog.dismiss().await
            }
        })
        .await?;
        Ok(TestPage {
            page,
            errors,
            dialogs,
        })
    }
}

/// A page, the uncaught errors it has thrown so far, and the dialogs it opened.
pub struct TestPage {
    /// The Playwright page.
    pub page: Page,
    errors: Arc<Mutex<Vec<String>>>,
    dialogs: Arc<Mutex<Vec<String>>>,
}

impl TestPage {
    /// Uncaught JavaScript errors (a failed hydration shows up here).
    pub fn errors(&self) -> Vec<String> {
        self.errors.lock().expect("error list lock").clone()
    }

    /// The messages of the dialogs the page opened (each was dismissed).
    pub fn dialogs(&self) -> Vec<String> {
        self.dialogs.lock().expect("dialog list lock").clone()
    }

    /// Wait until the app has hydrated: `hydrate()` marks `<body>` when
    /// the event handlers are attached. Fails, too, when the page broke its
    /// Content-Security-Policy on the way.
    pub async fn wait_for_hydration(&self) -> anyhow::Result<()> {
        let hydrated = self
            .page
            .locator("body[data-hydrated]")
            .wait_for(None)
            .await;
        let violations = self.csp_violations().await?;
        hydrated.with_context(|| {
            format!(
                "the page did not hydrate; page errors: {:?}; policy violations: {violations:?}",
                self.errors()
            )
        })?;
        anyhow::ensure!(
            violations.is_empty(),
            "the page broke its Content-Security-Policy: {violations:?}"
        );
        Ok(())
    }

    /// With `SWITCHBACK_SCREENSHOTS=DIR` set, the whole page as `DIR/NAME.png` (to
    /// look at what a test saw); without it, nothing.
    pub async fn screenshot_if_asked(&self, name: &str) -> anyhow::Result<()> {
        let Some(dir) = std::env::var_os("SWITCHBACK_SCREENSHOTS") else {
            return Ok(());
        };
        let options = playwright_rs::protocol::ScreenshotOptions::builder()
            .full_page(true)
            .build();
        let path = std::path::Path::new(&dir).join(format!("{name}.png"));
        self.page.screenshot_to_file(&path, Some(options)).await?;
        Ok(())
    }

    /// Sign in on the sign-in page the browser is on, with `token`.
    pub async fn sign_in(&self, token: &str) -> anyhow::Result<()> {
        use playwright_rs::protocol::AriaRole;
        self.page
            .get_by_role(AriaRole::Textbox, crate::named("Admin token"))
            .fill(token, None)
            .await?;
        self.page
            .get_by_role(AriaRole::Button, crate::named("Sign in"))
            .click(None)
            .await?;
        Ok(())
    }

    /// The Content-Security-Policy violations the page has reported so far
    /// (none can be seen with JavaScript off).
    pub async fn csp_violations(&self) -> anyhow::Result<Vec<String>> {
        Ok(self
            .page
            .evaluate::<(), Vec<String>>("window.__cspViolations || []", None)
            .await?)
    }
}

impl std::ops::Deref for TestPage {
    type Target = Page;
    fn deref(&self) -> &Page {
        &self.page
    }
}
