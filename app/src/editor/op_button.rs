use leptos::prelude::*;

use super::context::EditorContext;
use super::form::EditOp;

/// A button that changes the form's structure (add, move, remove). Before
/// hydration it is a plain submit (`op=up:1`) that the server applies;
/// after, it edits the form in place. A button that cannot act now stays
/// focusable and says so with `aria-disabled`.
#[component]
pub fn OpButton(
    label: &'static str,
    #[prop(into)] op: Signal<EditOp>,
    #[prop(into)] unavailable: Signal<bool>,
    #[prop(optional)] class: &'static str,
) -> impl IntoView {
    let context = EditorContext::get();
    view! {
        <button
            type="submit"
            name="op"
            class=class
            value=move || op.get().to_value()
            aria-disabled=move || unavailable.get().then_some("true")
            on:click=move |ev| {
                ev.prevent_default();
                if !unavailable.get_untracked() {
                    let providers = context.providers.get_value();
                    context.form.update(|form| form.apply(&op.get_untracked(), &providers));
                }
            }
        >
            {label}
        </button>
    }
}
