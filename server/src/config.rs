//! The server's configuration, resolved from the command line and environment.

use std::net::SocketAddr;

/// Everything `switchback serve` needs to start.
#[derive(Debug, Clone)]
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
}
