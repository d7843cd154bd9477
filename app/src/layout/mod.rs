//! The frame every page shares.

mod top_bar;

pub use top_bar::{TopBar, paused_sentence};

/// How the server admits people, provided by the server as context with every page
/// (and written on its `<body data-access>`): the top bar offers to sign out, or says
/// the server is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AccessMode {
    /// An admin token guards the server: a person on a page signed in with it.
    /// Without one the server is open, as it may be only on a loopback address.
    pub guarded: bool,
}
