//! The HTML document and the top-level router.

use leptos::prelude::*;
use leptos_meta::{MetaTags, Title, provide_meta_context};
use leptos_router::components::{Route, Router, Routes};
use leptos_router::{Lazy, SsrMode, path};

use crate::layout::TopBar;
use crate::pages::NotFoundPage;
use crate::routes::{
    CircuitsRoute, ClientKeysRoute, HomeRoute, InboxRoute, ProfileEditRoute, ProfilesRoute,
    ProvidersRoute, TaskRoute, TasksRoute,
};

/// The base name of the browser bundle: `switchback.js`, `switchback_bg.wasm`
/// and `switchback.css`, served under the build's own path (`site_pkg_dir`,
/// `/pkg/{build}/`).
pub const OUTPUT_NAME: &str = "switchback";

/// The whole HTML document, rendered on the server around [`App`].
pub fn shell(options: LeptosOptions) -> impl IntoView {
    // How the server admits people, for the top bar to read in the browser.
    let access = match use_context::<crate::layout::AccessMode>() {
        Some(mode) if mode.guarded => "guarded",
        _ => "open",
    };
    // What is paused, for the top bar of every page (empty: nothing).
    let paused = crate::layout::paused_sentence().unwrap_or_default();
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8" />
                <meta name="viewport" content="width=device-width, initial-scale=1" />
                <meta name="color-scheme" content="light dark" />
                <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
                <link
                    rel="stylesheet"
                    id="switchback"
                    href=format!("/{}/{OUTPUT_NAME}.css", options.site_pkg_dir)
                />
                <HydrationScripts options />
                <MetaTags />
            </head>
            <body data-access=access data-paused=paused>
                <App />
            </body>
        </html>
    }
}

/// The application: the top bar, then the page the path names.
#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    crate::layout::PauseBanner::provide();
    view! {
        <Title formatter=|page: String| format!("{page} · Switchback") />
        <Router>
            <TopBar />
            <main id="main" class="page">
                <Routes fallback=NotFoundPage>
                    <Route path=path!("") view={Lazy::<HomeRoute>::new()} ssr=SsrMode::Async />
                    // Async: the whole page is in the first answer, so it reads
                    // and posts without JavaScript.
                    // The pages come in chunks of their own (`routes`).
                    <Route path=path!("/profiles") view={Lazy::<ProfilesRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/profiles/new") view={Lazy::<ProfileEditRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/profiles/:id") view={Lazy::<ProfileEditRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/providers") view={Lazy::<ProvidersRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/client-keys") view={Lazy::<ClientKeysRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/inbox") view={Lazy::<InboxRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/circuits") view={Lazy::<CircuitsRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/tasks") view={Lazy::<TasksRoute>::new()} ssr=SsrMode::Async />
                    <Route path=path!("/tasks/:id") view={Lazy::<TaskRoute>::new()} ssr=SsrMode::Async />
                </Routes>
            </main>
        </Router>
    }
}
