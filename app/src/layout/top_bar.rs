use leptos::prelude::*;
use leptos_router::components::A;

use super::AccessMode;

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
                    <li><A href="/circuits">"Circuits"</A></li>
                    <li><A href="/inbox">"Inbox"</A></li>
                </ul>
            </nav>
            <Access />
        </header>
        {move || banner().map(|sentence| view! {
            <p class="paused-banner" role="status">
                {sentence} " " <a href="/circuits#pause-heading">"Resume on the Circuits page"</a>
            </p>
        })}
    }
}

/// The banner's sentence now: the app's shared [`super::PauseBanner`] (as the
/// page was rendered until a person pauses or resumes on the circuits page).
fn banner() -> Option<String> {
    use_context::<super::PauseBanner>().and_then(|banner| banner.0.get())
}

/// What is paused, in a sentence, when anything is: on the server from the
/// engine (no read of the store), in the browser what the server wrote on the
/// page's `<body data-paused>` (`crate::shell`), so both render the same.
pub fn paused_sentence() -> Option<String> {
    #[cfg(feature = "hydrate")]
    {
        leptos::prelude::document()
            .body()
            .and_then(|body| body.get_attribute("data-paused"))
            .filter(|sentence| !sentence.is_empty())
    }
    #[cfg(feature = "ssr")]
    {
        use_context::<crate::backend::SharedBackend>()
            .and_then(|backend| backend.pause_notice().sentence())
    }
    #[cfg(not(any(feature = "hydrate", feature = "ssr")))]
    {
        None
    }
}

/// A Sign out button on a guarded server (whoever sees the page signed in), or
/// words saying the server is open (no token, loopback only).
#[component]
fn Access() -> impl IntoView {
    if access_mode().guarded {
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
}

/// How the server admits people: its context on the server, and in the browser
/// what the server wrote on the page's `<body data-access>` (`crate::shell`), so
/// both render the same top bar without a call.
fn access_mode() -> AccessMode {
    #[cfg(feature = "hydrate")]
    {
        let written = leptos::prelude::document()
            .body()
            .and_then(|body| body.get_attribute("data-access"));
        AccessMode {
            guarded: written.as_deref() == Some("guarded"),
        }
    }
    #[cfg(not(feature = "hydrate"))]
    use_context::<AccessMode>().unwrap_or_default()
}
