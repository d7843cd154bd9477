//! Switchback's web app: Leptos components rendered on the server (feature `ssr`)
//! and hydrated in the browser (feature `hydrate`, built for wasm32).
//!
//! Pages own their data (through server functions); leaf components take
//! signals. Every page renders in full on the server, and its forms post as
//! plain HTML, so it reads and works before the wasm arrives.

#[cfg(feature = "ssr")]
pub mod backend;
pub mod components;
pub mod editor;
pub mod layout;
#[cfg(feature = "hydrate")]
mod missing_chunk;
pub mod page_status;
pub mod pages;
pub mod providers;
pub mod routes;
pub mod server_fns;
mod shell;
pub mod tasks;

pub use shell::{App, OUTPUT_NAME, shell};

/// The browser entry point: hydrate the server-rendered page, once the chunk of
/// its route (`routes::preload`) has arrived.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    missing_chunk::reload_when_one_is_missing();
    wasm_bindgen_futures::spawn_local(async {
        let path = leptos::prelude::window()
            .location()
            .pathname()
            .unwrap_or_default();
        routes::preload(&path).await;
        let body = leptos::prelude::document()
            .body()
            .expect("a page has a body");
        leptos::mount::hydrate_from_async(body.clone(), App)
            .await
            .forget();
        // Event handlers are attached now; browser tests wait for this mark
        // instead of sleeping.
        let _ = body.set_attribute("data-hydrated", "");
        missing_chunk::hydrated();
    });
}
