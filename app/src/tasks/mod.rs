//! Tasks and their routes on the page: words, live events, the server's clock.

pub mod focus;
pub mod live;
pub mod words;
