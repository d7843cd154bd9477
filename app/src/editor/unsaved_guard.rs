//! Unsaved changes are not lost by accident: closing or reloading the tab
//! asks the browser's question, and following a link inside the app asks
//! first. Only in the browser; the server renders nothing for it.

use leptos::prelude::*;

/// Guard the page while `dirty` is true.
pub fn guard_unsaved_changes(dirty: Memo<bool>) {
    #[cfg(feature = "hydrate")]
    browser::install(dirty);
    #[cfg(not(feature = "hydrate"))]
    let _ = dirty;
}

#[cfg(feature = "hydrate")]
mod browser {
    use leptos::prelude::*;
    use wasm_bindgen::JsCast;
    use wasm_bindgen::closure::Closure;

    const QUESTION: &str = "This profile has unsaved changes. Leave without saving?";

    pub fn install(dirty: Memo<bool>) {
        let before_unload = window_event_listener(leptos::ev::beforeunload, move |event| {
            if dirty.get_untracked() {
                event.prevent_default();
                event.set_return_value(QUESTION);
            }
        });
        // Capture phase: runs before the router turns the click into a navigation.
        let on_click =
            Closure::<dyn Fn(web_sys::MouseEvent)>::new(move |event: web_sys::MouseEvent| {
                if !dirty.get_untracked() {
                    return;
                }
                let link = event
                    .target()
                    .and_then(|target| target.dyn_into::<web_sys::Element>().ok())
                    .and_then(|element| element.closest("a[href]").ok().flatten());
                if link.is_some() && !window().confirm_with_message(QUESTION).unwrap_or(true) {
                    event.prevent_default();
                    event.stop_immediate_propagation();
                }
            });
        let _ = window().add_event_listener_with_callback_and_bool(
            "click",
            on_click.as_ref().unchecked_ref(),
            true,
        );
        // The browser's objects stay on its one thread; cleanup runs there too.
        let on_click = send_wrapper::SendWrapper::new(on_click);
        on_cleanup(move || {
            before_unload.remove();
            let _ = window().remove_event_listener_with_callback_and_bool(
                "click",
                on_click.as_ref().unchecked_ref(),
                true,
            );
        });
    }
}
