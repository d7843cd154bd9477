//! A tab opened before an upgrade asks for its own build's chunks, which the
//! upgraded server no longer serves (`server::site`): the splitter's loader
//! then panics, and the app, built with `panic = "abort"`, stops. Here the
//! panic hook turns that into one full load of the page the user was going
//! to, which comes from the new build and works. The same holds for a lazy
//! function's chunk (the editor's checks), which the editor asks for when it
//! is first touched, before there is an edit to lose.
//!
//! The router changes the address only once the next page's chunk has
//! loaded, so at the panic the address is still the page the user left: the
//! link they followed is remembered as they click it. Any other navigation
//! (back and forward, which change the address first, or one the app makes
//! itself) reloads the address as it stands. When the chunk is missing again
//! after that, the page stays as the server rendered it and says so.

use std::cell::RefCell;

use leptos::prelude::window;
use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;

/// Set in the tab's session storage while the page loads again for a chunk it
/// could not load, and cleared once the new page has hydrated: a chunk
/// missing for another reason (the server down, say) loads once, not forever.
const LOADED_AGAIN_FOR_A_CHUNK: &str = "switchback.loaded-again-for-a-chunk";

thread_local! {
    /// Where the last click was going: a plain click on a link that opens in
    /// this tab; any other click, and each back or forward, forgets it.
    static FOLLOWING: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Install the panic hook and the listeners that remember where the user is
/// going. Call once, before hydrating.
pub fn reload_when_one_is_missing() {
    std::panic::set_hook(Box::new(on_panic));
    let window = window();
    let on_click = Closure::<dyn Fn(web_sys::MouseEvent)>::new(|event: web_sys::MouseEvent| {
        // Only a click the router turns into a navigation in this tab: a
        // plain primary click on a link that opens here.
        let plain = event.button() == 0
            && !(event.ctrl_key() || event.meta_key() || event.shift_key() || event.alt_key());
        let link = event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
            .and_then(|element| element.closest("a[href]").ok().flatten())
            .and_then(|link| link.dyn_into::<web_sys::HtmlAnchorElement>().ok())
            .filter(|link| {
                plain
                    && matches!(link.target().as_str(), "" | "_self")
                    && !link.has_attribute("download")
            });
        FOLLOWING.set(link.map(|link| link.href()));
    });
    let on_history = Closure::<dyn Fn(web_sys::Event)>::new(|_: web_sys::Event| {
        FOLLOWING.set(None);
    });
    let _ = window.add_event_listener_with_callback("click", on_click.as_ref().unchecked_ref());
    let _ =
        window.add_event_listener_with_callback("popstate", on_history.as_ref().unchecked_ref());
    // Listeners for the life of the page.
    on_click.forget();
    on_history.forget();
}

/// The page hydrated: a chunk missing later may load the page again.
pub fn hydrated() {
    if let Ok(Some(storage)) = window().session_storage() {
        let _ = storage.remove_item(LOADED_AGAIN_FOR_A_CHUNK);
    }
}

/// Log the panic to the console; when it was a lazy route's chunk that failed
/// to load, load the page again, once.
fn on_panic(info: &std::panic::PanicHookInfo<'_>) {
    console_error_panic_hook::hook(info);
    // wasm_split's loader: `.expect("load callback should succeed")`.
    let chunk_missing = info
        .payload_as_str()
        .is_some_and(|message| message.starts_with("load callback should succeed"));
    if !chunk_missing {
        return;
    }
    let window = window();
    // Without session storage there is no flag, and no second load: no loop.
    let flagged = window
        .session_storage()
        .ok()
        .flatten()
        .is_some_and(|storage| {
            let first = storage
                .get_item(LOADED_AGAIN_FOR_A_CHUNK)
                .ok()
                .flatten()
                .is_none();
            first && storage.set_item(LOADED_AGAIN_FOR_A_CHUNK, "1").is_ok()
        });
    if !flagged {
        say_the_page_is_not_live(&window);
        return;
    }
    let location = window.location();
    let here = location.href().ok();
    // A link whose page has loaded is where the address already is.
    match FOLLOWING.take().filter(|link| Some(link) != here.as_ref()) {
        Some(link) => {
            let _ = location.assign(&link);
        }
        None => {
            let _ = location.reload();
        }
    }
}

/// What the page says when it has given up: it reads as the server rendered
/// it, and its forms post without scripts, but its controls may not answer.
const NOT_LIVE: &str = "Part of this page's code could not be loaded, so some of its \
controls may not respond. Reload the page to try again.";

/// Put [`NOT_LIVE`] at the top of the page's main content.
fn say_the_page_is_not_live(window: &web_sys::Window) {
    let Some(document) = window.document() else {
        return;
    };
    let Ok(notice) = document.create_element("p") else {
        return;
    };
    notice.set_class_name("notice");
    let _ = notice.set_attribute("role", "alert");
    notice.set_text_content(Some(NOT_LIVE));
    let main = document.query_selector("main").ok().flatten();
    if let Some(parent) = main.or_else(|| document.body().map(Into::into)) {
        let _ = parent.prepend_with_node_1(&notice);
    }
}
