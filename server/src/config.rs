//! The server's configuration, resolved from the command line and environment.

use std::net::SocketAddr;

/// Everything `switchback serve` needs to start.
#[derive(Clone)]
pub struct Config {
    /// Where the HTTP server listens.
    pub bind: SocketAddr,
    /// The database URL: `sqlite://switchback.db`, or `postgres://…` shared by
    /// replicas.
    pub database_url: String,
    /// Environment variable names a provider may read its key from, beyond
    /// any name ending in `_API_KEY`: exactly these, whatever their form.
    pub allowed_key_envs: Vec<String>,
    /// Host names the server answers to besides IP addresses and `localhost`
    /// (the name a proxy or DNS gives it).
    pub public_names: Vec<String>,
    /// Seed an empty database with the demo (simulated providers and tasks).
    pub demo: bool,
    /// The most provider calls in flight at once.
    pub max_in_flight: usize,
    /// This replica's name on a shared database.
    pub replica: String,
    /// The admin token every call and page needs (required off loopback).
    pub admin_token: Option<String>,
    /// `/metrics` readable without the token.
    pub open_metrics: bool,
    /// Changes a minute each client may make (0: no limit).
    pub mutations_per_minute: u32,
    /// The most unfinished tasks the server holds (0: no limit).
    pub max_open_tasks: u64,
}

impl std::fmt::Debug for AdminTokenShown<'_> {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(if self.0.is_some() {
            "Some(<hidden>)"
        } else {
            "None"
        })
    }
}

/// How the token appears when the configuration is printed: never itself.
struct AdminTokenShown<'a>(&'a Option<String>);

impl std::fmt::Debug for Config {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("Config")
            .field("bind", &self.bind)
            .field(
                "database_url",
                &crate::store::without_password(&self.database_url),
            )
            .field("allowed_key_envs", &self.allowed_key_envs)
            .field("public_names", &self.public_names)
            .field("demo", &self.demo)
            .field("max_in_flight", &self.max_in_flight)
            .field("replica", &self.replica)
            .field("admin_token", &AdminTokenShown(&self.admin_token))
            .field("open_metrics", &self.open_metrics)
            .field("mutations_per_minute", &self.mutations_per_minute)
            .field("max_open_tasks", &self.max_open_tasks)
            .finish()
    }
}
