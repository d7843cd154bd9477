//! Switchback's web app: Leptos components rendered on the server (feature `ssr`)
//! and hydrated in the browser (feature `hydrate`, built for wasm32).
//!
//! Pages own their data; leaf components take signals. Every page renders in
//! full on the server, so it reads and works before the wasm arrives.

pub mod components;
pub mod layout;
pub mod pages;
mod shell;

pub use shell::{shell, App, OUTPUT_NAME};

/// The browser entry point: hydrate the server-rendered page.
#[cfg(feature = "hydrate")]
#[wasm_bindgen::prelude::wasm_bindgen]
pub fn hydrate() {
    console_error_panic_hook::set_once();
    leptos::mount::hydrate_body(App);
    // Event handlers are attached now; browser tests wait for this mark
    // instead of sleeping.
    if let Some(body) = leptos::prelude::document().body() {
        let _ = body.set_attribute("data-hydrated", "");
    }
}
