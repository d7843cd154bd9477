//! The frame every page shares.

mod top_bar;

pub use top_bar::TopBar;
