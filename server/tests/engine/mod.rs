//! The route engine end to end: tasks through the services the API uses, the real
//! adapters (simulated and, over loopback, both HTTP wire formats), a SQLite file
//! and a manual clock. No test sleeps for a deadline: the clock is moved.

mod actions;
mod circuits;
mod evidence;
mod harness;
mod pauses;
mod restart;
mod scheduler;
mod spec4;
mod wire;
