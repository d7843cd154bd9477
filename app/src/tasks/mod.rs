//! Tasks and their routes on the page: the route view's components (one a
//! file: the view, its heading, its actions, its timeline), the words they
//! say a route in, live events, the server's clock, and where focus goes.

mod actions;
pub mod focus;
mod header;
pub mod live;
pub mod route_view;
mod timeline;
pub mod words;
