//! The pages the browser loads when it needs them. Each is a lazy route: its
//! view (the page and everything only it uses) is compiled into a chunk of its
//! own, which `scripts/build-site` splits out of the wasm (`wasm-split-cli`) and
//! the browser fetches the first time it shows the page. The shared frame (the
//! router, the top bar, the home and not-found pages) stays in the main module.
//! On the server a lazy route renders like any other.

use leptos::prelude::*;
use leptos_router::{LazyRoute, lazy_route};

use crate::pages::{ProfileEditPage, ProfilesPage, ProvidersPage, TaskPage, TasksPage};

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
    /// `/tasks`.
    TasksRoute => TasksPage
);
lazy_page!(
    /// `/tasks/{id}`: the route view.
    TaskRoute => TaskPage
);
