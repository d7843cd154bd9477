//! The pages the browser loads when it needs them. Each is a lazy route: its
//! view (the page and everything only it uses) is compiled into a chunk of its
//! own, which `scripts/build-site` splits out of the wasm (`wasm-split-cli`) and
//! the browser fetches the first time it shows the page. The shared frame (the
//! router, the top bar, the home and not-found pages) stays in the main module.
//! On the server a lazy route renders like any other.
//!
//! The browser loads the chunk of the page it opens on before it hydrates
//! ([`preload`]): Leptos's view crate is patched to hydrate erased views
//! synchronously (`vendor/README.md`), and the app's components are erased
//! (`erase_components`), so the router reaches its lazy route synchronously
//! and needs the route's code already there.

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};

use crate::pages::{
    CircuitsPage, ClientKeysPage, HomePage, InboxPage, ProfileEditPage, ProfilesPage,
    ProvidersPage, TaskPage, TasksPage,
};

/// A lazy route that shows one page component (the page owns its data).
macro_rules! lazy_page {
    ($(#[$doc:meta])* $route:ident => $page:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $route;

        #[lazy_route]
        impl LazyRoute for $route {
            fn data() -> Self {
                Self
            }

            fn view(_this: Self) -> AnyView {
                view! { <$page /> }.into_any()
            }
        }
    };
}

lazy_page!(
    /// `/`: what needs a person.
    HomeRoute => HomePage
);
lazy_page!(
    /// `/profiles`.
    ProfilesRoute => ProfilesPage
);
lazy_page!(
    /// `/profiles/new` and `/profiles/{id}`: the editor.
    ProfileEditRoute => ProfileEditPage
);
lazy_page!(
    /// `/providers`.
    ProvidersRoute => ProvidersPage
);
lazy_page!(
    /// `/client-keys`.
    ClientKeysRoute => ClientKeysPage
);
lazy_page!(
    /// `/inbox`: the catalogue's inbox.
    InboxRoute => InboxPage
);
lazy_page!(
    /// `/circuits`: every shared circuit.
    CircuitsRoute => CircuitsPage
);
lazy_page!(
    /// `/tasks`.
    TasksRoute => TasksPage
);
lazy_page!(
    /// `/tasks/{id}`: the route view.
    TaskRoute => TaskPage
);

/// Loads the chunks of the lazy route `path` names (a browser's
/// `location.pathname`); nothing for any other path. The same paths as
/// `crate::shell::App`'s routes: a lazy route missing here fails to hydrate
/// when a page opens on it (the router panics), which the browser tests that
/// open every page catch.
#[cfg(feature = "hydrate")]
pub async fn preload(path: &str) {
    let segments: Vec<&str> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    match segments.as_slice() {
        [] => HomeRoute::preload().await,
        ["profiles"] => ProfilesRoute::preload().await,
        // `/profiles/new` and `/profiles/{id}`.
        ["profiles", _] => ProfileEditRoute::preload().await,
        ["providers"] => ProvidersRoute::preload().await,
        ["client-keys"] => ClientKeysRoute::preload().await,
        ["inbox"] => InboxRoute::preload().await,
        ["circuits"] => CircuitsRoute::preload().await,
        ["tasks"] => TasksRoute::preload().await,
        ["tasks", _] => TaskRoute::preload().await,
        _ => {}
    }
}
