use leptos::prelude::*;
use leptos_meta::Title;

use crate::components::BackoffPreview;

/// The landing page: what Switchback does, and a live taste of the policy.
#[component]
pub fn HomePage() -> impl IntoView {
    view! {
        <Title text="Home" />
        <h1>"Recover from provider failures by a policy you can read"</h1>
        <p class="lede">
            "Switchback routes each task through an ordered list of candidate models. "
            "When a provider overloads, throttles or cuts you off, it retries, waits for the "
            "reset, or moves to the next candidate, exactly as the profile says."
        </p>
        <BackoffPreview />
    }
}
