//! The frame every page shares.

mod top_bar;

pub use top_bar::{TopBar, paused_sentence};

/// What the top bar says is paused, shared by every page: read from the page at
/// first ([`paused_sentence`]), set again by the circuits page when a person
/// pauses or resumes there.
#[derive(Debug, Clone, Copy)]
pub struct PauseBanner(pub leptos::prelude::RwSignal<Option<String>>);

impl PauseBanner {
    /// Provide the banner for the whole app, as the page was rendered.
    pub fn provide() {
        leptos::prelude::provide_context(Self(leptos::prelude::RwSignal::new(paused_sentence())));
    }
}

/// How the server admits people, provided by the server as context with every page
/// (and written on its `<body data-access>`): the top bar offers to sign out, or says
/// the server is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AccessMode {
    /// An admin token guards the server: a person on a page signed in with it.
    /// Without one the server is open, as it may be only on a loopback address.
    pub guarded: bool,
}
