use leptos::prelude::*;
use leptos_router::components::A;

/// The banner with the product name and the main navigation. Links mark the
/// current page with `aria-current="page"` (the router's `A` does this).
#[component]
pub fn TopBar() -> impl IntoView {
    view! {
        <header class="top-bar">
            <a class="skip-link" href="#main">"Skip to content"</a>
            <A href="/" attr:class="brand">"Switchback"</A>
            <nav aria-label="Main">
                <ul>
                    <li><A href="/tasks">"Tasks"</A></li>
                    <li><A href="/profiles">"Profiles"</A></li>
                    <li><A href="/providers">"Providers"</A></li>
                    <li><A href="/client-keys">"Keys"</A></li>
                    <li><A href="/inbox">"Inbox"</A></li>
                </ul>
            </nav>
        </header>
    }
}
