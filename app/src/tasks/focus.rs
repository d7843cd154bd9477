//! Keyboard focus across a page that changes under it: when the element a
//! person was on disappears or is hidden (its action is no longer valid), or is
//! disabled for a moment (a request in flight), focus goes back to it when it
//! can, or to a nearby heading, rather than falling to the top of the
//! document. On the server nothing happens.

/// Once the page has drawn its latest change, focus the first element of `ids`
/// that can take focus (in the document, shown, enabled); with `only_if_lost`,
/// only when focus has fallen to the body (the element that held it went away).
/// The page does not scroll for it.
pub fn focus_soon(ids: Vec<String>, only_if_lost: bool) {
    #[cfg(feature = "hydrate")]
    leptos::prelude::request_animation_frame(move || {
        if !only_if_lost || focus_was_lost() {
            focus_first(&ids);
        }
    });
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = (ids, only_if_lost);
    }
}

/// Whether the document's focus has fallen to the body (or nowhere).
#[cfg(feature = "hydrate")]
fn focus_was_lost() -> bool {
    let document = leptos::prelude::document();
    match (document.active_element(), document.body()) {
        (Some(active), Some(body)) => {
            wasm_bindgen::JsValue::from(active) == wasm_bindgen::JsValue::from(body)
        }
        _ => true,
    }
}

/// Focus the first element of `ids` that takes it.
#[cfg(feature = "hydrate")]
fn focus_first(ids: &[String]) {
    use wasm_bindgen::JsCast;
    let document = leptos::prelude::document();
    let options = web_sys::FocusOptions::new();
    options.set_prevent_scroll(true);
    for id in ids {
        let Some(element) = document
            .get_element_by_id(id)
            .and_then(|element| element.dyn_into::<web_sys::HtmlElement>().ok())
        else {
            continue;
        };
        // A hidden or disabled element ignores `focus()`: try the next.
        let _ = element.focus_with_options(&options);
        let took = document.active_element().is_some_and(|active| {
            wasm_bindgen::JsValue::from(active) == wasm_bindgen::JsValue::from(element)
        });
        if took {
            return;
        }
    }
}

/// Whether the element a focus event left is still in the page and enabled:
/// then the person moved focus on purpose (rather than losing it to a
/// removal), and it should not be brought back.
pub fn left_on_purpose(event: &leptos::ev::FocusEvent) -> bool {
    #[cfg(feature = "hydrate")]
    {
        use wasm_bindgen::JsCast;
        event
            .target()
            .and_then(|target| target.dyn_into::<web_sys::HtmlElement>().ok())
            .is_some_and(|element| {
                element.is_connected()
                    && !element.has_attribute("disabled")
                    && element.offset_parent().is_some()
            })
    }
    #[cfg(not(feature = "hydrate"))]
    {
        let _ = event;
        false
    }
}
