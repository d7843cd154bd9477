//! Command-line arguments (clap). Every flag of `serve` also reads an
//! environment variable, so a service manager can configure it without flags.

use std::net::SocketAddr;

use clap::{Args, Parser, Subcommand};

use crate::config::Config;

/// Switchback routes LLM work through candidate models and recovers from
/// provider errors by a policy you can read.
#[derive(Debug, Parser)]
#[command(name = "switchback", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web app and the HTTP API.
    Serve(ServeArgs),
}

/// Arguments of `switchback serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, env = "SWITCHBACK_BIND", default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    /// The database: a SQLite URL; the file is created if missing.
    #[arg(
        long,
        env = "SWITCHBACK_DATABASE_URL",
        default_value = "sqlite://switchback.db"
    )]
    pub database: String,
}

impl ServeArgs {
    /// The server configuration these arguments describe.
    pub fn into_config(self) -> Config {
        Config {
            bind: self.bind,
            database_url: self.database,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serve_defaults_and_flags() {
        let Command::Serve(args) = Cli::try_parse_from(["switchback", "serve"])
            .unwrap()
            .command;
        assert_eq!(args.bind.to_string(), "127.0.0.1:3000");
        assert_eq!(args.database, "sqlite://switchback.db");

        let Command::Serve(args) = Cli::try_parse_from([
            "switchback",
            "serve",
            "--bind",
            "0.0.0.0:8080",
            "--database",
            "sqlite:///tmp/x.db",
        ])
        .unwrap()
        .command;
        assert_eq!(args.bind.to_string(), "0.0.0.0:8080");
        assert_eq!(args.database, "sqlite:///tmp/x.db");
    }

    #[test]
    fn a_bad_bind_address_is_an_error() {
        let error = Cli::try_parse_from(["switchback", "serve", "--bind", "nowhere"]).unwrap_err();
        assert!(error.to_string().contains("--bind"), "{error}");
    }
}
