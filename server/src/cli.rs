//! Command-line arguments (clap). Every flag of `serve` also reads an
//! environment variable, so a service manager can configure it without flags.

use std::net::SocketAddr;
use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::Config;

/// Switchback routes LLM work through candidate models and recovers from
/// provider errors by a policy you can read.
#[derive(Debug, Parser)]
#[command(name = "switchback", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// What to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the web app and the HTTP API.
    Serve(ServeArgs),
    /// Classify provider errors: evidence JSON lines on stdin, one
    /// classification JSON line each on stdout, in order.
    Classify,
    /// Work with policy documents.
    #[command(subcommand)]
    Policy(PolicyCommand),
}

/// `switchback policy ...`
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Print a policy document (version 1 or 2) normalized to version 2, or
    /// its field errors as `{"errors": [...]}` and exit 1.
    Check {
        /// The JSON file holding the policy document.
        file: PathBuf,
    },
}

/// Arguments of `switchback serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// The address to listen on.
    #[arg(long, env = "SWITCHBACK_BIND", default_value = "127.0.0.1:3000")]
    pub bind: SocketAddr,
    /// The database: a SQLite URL (`sqlite://PATH`, the file created if
    /// missing) for one server, or a PostgreSQL URL (`postgres://USER@HOST/DB`)
    /// shared by several replicas.
    #[arg(
        long,
        env = "SWITCHBACK_DATABASE_URL",
        default_value = "sqlite://switchback.db"
    )]
    pub database: String,
    /// Also let providers read their key from this environment variable,
    /// exactly as written (repeatable). Names ending in `_API_KEY` are
    /// always allowed.
    #[arg(
        long = "allow-key-env",
        value_name = "NAME",
        env = "SWITCHBACK_ALLOW_KEY_ENV",
        value_delimiter = ','
    )]
    pub allow_key_env: Vec<String>,
    /// A host name this server answers to besides IP addresses and
    /// `localhost` (repeatable): the name a proxy or DNS gives it. Requests
    /// for any other name are refused, so a hostile page cannot reach the
    /// server by pointing its own name at it (DNS rebinding).
    #[arg(
        long = "public-name",
        value_name = "NAME",
        env = "SWITCHBACK_PUBLIC_NAME",
        value_delimiter = ','
    )]
    pub public_name: Vec<String>,
    /// Seed a new, empty database with simulated providers, a profile and a few
    /// tasks, so the pages show recovery happening (a reset wait, a backoff, a
    /// skip, a hold, a completion). Does nothing to a database that has providers.
    #[arg(long, env = "SWITCHBACK_DEMO")]
    pub demo: bool,
    /// The most provider calls in flight at once.
    #[arg(long, env = "SWITCHBACK_MAX_IN_FLIGHT", default_value_t = 64,
          value_parser = clap::value_parser!(u16).range(1..))]
    pub max_in_flight: u16,
    /// This server's name among the replicas sharing a PostgreSQL database (a
    /// route's owner); a new one at each start if not given. Give each replica
    /// its own, the same across its restarts, so a restarted replica takes its
    /// routes back at once instead of after its heartbeat lapses.
    #[arg(long, env = "SWITCHBACK_REPLICA", value_name = "NAME",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub replica: Option<String>,
}

impl ServeArgs {
    /// The server configuration these arguments describe.
    pub fn into_config(self) -> Config {
        Config {
            bind: self.bind,
            database_url: self.database,
            allowed_key_envs: self.allow_key_env,
            public_names: self.public_name,
            demo: self.demo,
            max_in_flight: usize::from(self.max_in_flight),
            replica: self
                .replica
                .unwrap_or_else(|| format!("replica-{}", uuid::Uuid::now_v7())),
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
            .command
        else {
            panic!("serve")
        };
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
        .command
        else {
            panic!("serve")
        };
        assert_eq!(args.bind.to_string(), "0.0.0.0:8080");
        assert_eq!(args.database, "sqlite:///tmp/x.db");

        let Command::Serve(args) = Cli::try_parse_from([
            "switchback",
            "serve",
            "--allow-key-env",
            "VAULT_TOKEN",
            "--allow-key-env",
            "other_key",
            "--public-name",
            "switchback.example.com",
        ])
        .unwrap()
        .command
        else {
            panic!("serve")
        };
        let config = args.into_config();
        assert_eq!(config.allowed_key_envs, ["VAULT_TOKEN", "other_key"]);
        assert_eq!(config.public_names, ["switchback.example.com"]);
    }

    #[test]
    fn policy_check_takes_a_file() {
        let command = Cli::try_parse_from(["switchback", "policy", "check", "p.json"])
            .unwrap()
            .command;
        assert!(
            matches!(command, Command::Policy(PolicyCommand::Check { file }) if file.as_path() == std::path::Path::new("p.json"))
        );
        assert!(Cli::try_parse_from(["switchback", "policy", "check"]).is_err());
    }

    #[test]
    fn a_bad_bind_address_is_an_error() {
        let error = Cli::try_parse_from(["switchback", "serve", "--bind", "nowhere"]).unwrap_err();
        assert!(error.to_string().contains("--bind"), "{error}");
    }

    #[test]
    fn a_replica_name_is_kept_and_an_empty_one_refused() {
        let Command::Serve(args) = Cli::try_parse_from(["switchback", "serve", "--replica", "a"])
            .unwrap()
            .command
        else {
            panic!("serve");
        };
        assert_eq!(args.into_config().replica, "a");
        let error = Cli::try_parse_from(["switchback", "serve", "--replica", ""]).unwrap_err();
        assert!(error.to_string().contains("--replica"), "{error}");
    }
}
