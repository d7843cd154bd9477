use leptos::prelude::*;
use leptos_router::components::A;

use crate::server_fns::load_access_mode;

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
            <Access />
        </header>
    }
}

/// A Sign out button on a guarded server (whoever sees the page signed in), or
/// words saying the server is open (no token, loopback only).
#[component]
fn Access() -> impl IntoView {
    let mode = Resource::new(|| (), |()| load_access_mode());
    view! {
        <Suspense fallback=|| ()>
            {move || mode.get().and_then(Result::ok).map(|mode| {
                if mode.guarded {
                    view! {
                        <form class="sign-out" method="post" action="/logout">
                            <button type="submit">"Sign out"</button>
                        </form>
                    }
                    .into_any()
                } else {
                    view! {
                        <p class="access-open"
                            title="No admin token is set: anyone who can reach this loopback address can use the server.">
                            "Open: loopback, no sign-in"
                        </p>
                    }
                    .into_any()
                }
            })}
        </Suspense>
    }
}
