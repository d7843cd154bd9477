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
    /// classification JSON line each on stdout, in order. With
    /// `--reclassify`, read the evidence stored with a database's latest
    /// attempts again instead, and print each attempt the current catalogue
    /// reads differently (changing nothing).
    Classify {
        /// Read stored evidence again instead of stdin.
        #[arg(long)]
        reclassify: bool,
        /// With `--reclassify`: the database.
        #[arg(
            long,
            env = "SWITCHBACK_DATABASE_URL",
            default_value = "sqlite://switchback.db"
        )]
        database: String,
        /// With `--reclassify`: how many of the latest attempts to read.
        #[arg(long, default_value_t = crate::inbox::RECLASSIFY_ATTEMPTS)]
        limit: u32,
    },
    /// Work with policy documents.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// Copy a SQLite database to FILE while a server uses it (consistent,
    /// checked, never overwriting). Restore by starting a server on the copy.
    /// For PostgreSQL, use pg_dump.
    Backup {
        /// The new file to write.
        file: PathBuf,
        /// The database to copy.
        #[arg(
            long,
            env = "SWITCHBACK_DATABASE_URL",
            default_value = "sqlite://switchback.db"
        )]
        database: String,
    },
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
    /// route's owner). Without it, the machine's host name and a digest of the
    /// machine and the database: the same at each start, so a server restarted
    /// after a crash takes its routes back at once. Two servers on one machine
    /// and database need a name each (and a container whose host name changes
    /// at each start needs one); a name a running server holds is refused.
    #[arg(long, env = "SWITCHBACK_REPLICA", value_name = "NAME",
          value_parser = clap::builder::NonEmptyStringValueParser::new())]
    pub replica: Option<String>,
    /// A file holding the admin token (its first line). Without it the token
    /// is read from SWITCHBACK_ADMIN_TOKEN. With a token, every API call needs
    /// `Authorization: Bearer TOKEN` and every page a sign-in at /login; a
    /// server bound to anything but loopback refuses to start without one.
    #[arg(long, env = "SWITCHBACK_ADMIN_TOKEN_FILE", value_name = "FILE")]
    pub admin_token_file: Option<PathBuf>,
    /// Serve /metrics without the admin token (for a scraper that has none).
    /// /healthz is always open.
    #[arg(long, env = "SWITCHBACK_OPEN_METRICS")]
    pub open_metrics: bool,
    /// Changes (anything but GET) each client address may make a minute, in
    /// bursts of as many; past it, 429 with Retry-After. 0: no limit.
    #[arg(
        long,
        env = "SWITCHBACK_MUTATIONS_PER_MINUTE",
        value_name = "N",
        default_value_t = 600
    )]
    pub mutations_per_minute: u32,
    /// The most unfinished tasks the server holds; past it, a new task is a
    /// 429 until some finish. 0: no limit.
    #[arg(
        long,
        env = "SWITCHBACK_MAX_OPEN_TASKS",
        value_name = "N",
        default_value_t = 100_000
    )]
    pub max_open_tasks: u64,
}

/// Why `serve`'s arguments cannot start a server.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The token file could not be read.
    #[error("cannot read the admin token file {path}: {source}")]
    TokenFile {
        /// The file named by --admin-token-file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The token is too short.
    #[error("{0} (from {1})")]
    WeakToken(crate::http::access::TokenError, &'static str),
    /// Bound off loopback without a token.
    #[error(
        "switchback listens on {0}, which is not a loopback address, so it needs an admin token: \
         set SWITCHBACK_ADMIN_TOKEN, or pass --admin-token-file FILE (a file whose first line is the \
         token; at least 16 characters, for example from `openssl rand -hex 32`). \
         To serve only this machine, use --bind 127.0.0.1:3000"
    )]
    TokenRequired(SocketAddr),
    /// A public name without a token.
    #[error(
        "switchback answers to the public name {0}, so others can reach it through a proxy or DNS, and it needs an admin token: \
         set SWITCHBACK_ADMIN_TOKEN, or pass --admin-token-file FILE (at least 16 characters, for example from `openssl rand -hex 32`)"
    )]
    TokenRequiredForName(String),
}

impl ServeArgs {
    /// The server configuration these arguments describe, with the admin
    /// token from the file or `env_token` (SWITCHBACK_ADMIN_TOKEN's value).
    pub fn into_config(self, env_token: Option<String>) -> Result<Config, ConfigError> {
        let admin_token = match &self.admin_token_file {
            Some(path) => {
                let text =
                    std::fs::read_to_string(path).map_err(|source| ConfigError::TokenFile {
                        path: path.clone(),
                        source,
                    })?;
                Some((
                    text.lines().next().unwrap_or("").trim().to_owned(),
                    "--admin-token-file",
                ))
            }
            None => env_token
                .filter(|token| !token.is_empty())
                .map(|token| (token.trim().to_owned(), "SWITCHBACK_ADMIN_TOKEN")),
        };
        if let Some((token, source)) = &admin_token {
            let length = token.chars().count();
            if length < crate::http::access::MIN_TOKEN_CHARS {
                return Err(ConfigError::WeakToken(
                    crate::http::access::TokenError::TooShort(length),
                    source,
                ));
            }
        }
        if admin_token.is_none() && !self.bind.ip().is_loopback() {
            return Err(ConfigError::TokenRequired(self.bind));
        }
        // A public name means a proxy or DNS brings others to this server,
        // even when it listens on loopback behind that proxy.
        if admin_token.is_none() && !self.public_name.is_empty() {
            return Err(ConfigError::TokenRequiredForName(
                self.public_name[0].clone(),
            ));
        }
        let replica = self
            .replica
            .unwrap_or_else(|| crate::store::default_replica(&self.database));
        Ok(Config {
            bind: self.bind,
            database_url: self.database,
            allowed_key_envs: self.allow_key_env,
            public_names: self.public_name,
            demo: self.demo,
            max_in_flight: usize::from(self.max_in_flight),
            replica,
            admin_token: admin_token.map(|(token, _)| token),
            open_metrics: self.open_metrics,
            mutations_per_minute: self.mutations_per_minute,
            max_open_tasks: self.max_open_tasks,
        })
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
            "127.0.0.2:8080",
            "--database",
            "sqlite:///tmp/x.db",
        ])
        .unwrap()
        .command
        else {
            panic!("serve")
        };
        assert_eq!(args.bind.to_string(), "127.0.0.2:8080");
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
        let config = args
            .into_config(Some("a-token-long-enough-0123".to_owned()))
            .unwrap();
        assert_eq!(config.allowed_key_envs, ["VAULT_TOKEN", "other_key"]);
        assert_eq!(config.public_names, ["switchback.example.com"]);
    }

    fn serve(args: &[&str]) -> ServeArgs {
        let Command::Serve(args) = Cli::try_parse_from(["switchback", "serve"].iter().chain(args))
            .unwrap()
            .command
        else {
            panic!("serve")
        };
        args
    }

    /// Arguments, SWITCHBACK_ADMIN_TOKEN, and the token or the error's start.
    type Row<'a> = (
        &'a [&'a str],
        Option<String>,
        Result<Option<&'a str>, &'a str>,
    );

    #[test]
    fn off_loopback_a_token_is_required_and_must_be_long_enough() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "  from-the-file-0123456789  \nsecond line ignored\n").unwrap();
        let file = file.to_str().unwrap();
        let long = || Some("from-the-environment-0123".to_owned());
        // (arguments, SWITCHBACK_ADMIN_TOKEN, the token, or the error's start)
        let table: [Row<'_>; 9] = [
            (&[], None, Ok(None)),
            (&["--bind", "[::1]:3000"], None, Ok(None)),
            (
                &["--bind", "0.0.0.0:3000"],
                None,
                Err("switchback listens on 0.0.0.0:3000, which is not a loopback address"),
            ),
            (
                &["--bind", "10.0.0.7:3000"],
                Some(String::new()),
                Err("switchback listens on 10.0.0.7:3000"),
            ),
            (
                &["--bind", "0.0.0.0:3000"],
                long(),
                Ok(Some("from-the-environment-0123")),
            ),
            (
                &["--bind", "0.0.0.0:3000", "--admin-token-file", file],
                long(),
                Ok(Some("from-the-file-0123456789")),
            ),
            (
                &[],
                Some("short".to_owned()),
                Err("the admin token is 5 characters long; use at least 16"),
            ),
            (
                &["--public-name", "switchback.example.com"],
                None,
                Err("switchback answers to the public name switchback.example.com"),
            ),
            (
                &["--admin-token-file", "/nonexistent/token"],
                None,
                Err("cannot read the admin token file /nonexistent/token"),
            ),
        ];
        for (args, env_token, expected) in table {
            let outcome = serve(args).into_config(env_token);
            match (outcome, expected) {
                (Ok(config), Ok(token)) => {
                    assert_eq!(config.admin_token.as_deref(), token, "{args:?}")
                }
                (Err(error), Err(start)) => {
                    assert!(error.to_string().starts_with(start), "{args:?}: {error}")
                }
                (outcome, expected) => panic!("{args:?}: {outcome:?}, expected {expected:?}"),
            }
        }
        let config = serve(&["--bind", "0.0.0.0:3000"])
            .into_config(long())
            .unwrap();
        assert!(
            !format!("{config:?}").contains("from-the-environment"),
            "the token is never printed"
        );
    }

    #[test]
    fn limits_have_defaults_and_flags() {
        let config = serve(&[]).into_config(None).unwrap();
        assert_eq!(
            (
                config.mutations_per_minute,
                config.max_open_tasks,
                config.open_metrics
            ),
            (600, 100_000, false)
        );
        let config = serve(&[
            "--mutations-per-minute",
            "0",
            "--max-open-tasks",
            "5",
            "--open-metrics",
        ])
        .into_config(None)
        .unwrap();
        assert_eq!(
            (
                config.mutations_per_minute,
                config.max_open_tasks,
                config.open_metrics
            ),
            (0, 5, true)
        );
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
        assert_eq!(args.into_config(None).unwrap().replica, "a");
        let error = Cli::try_parse_from(["switchback", "serve", "--replica", ""]).unwrap_err();
        assert!(error.to_string().contains("--replica"), "{error}");
    }

    #[test]
    fn without_a_replica_name_a_server_takes_one_stable_for_its_machine_and_database() {
        let replica = |database: &str| {
            let Command::Serve(args) =
                Cli::try_parse_from(["switchback", "serve", "--database", database])
                    .unwrap()
                    .command
            else {
                panic!("serve");
            };
            args.into_config(None).unwrap().replica
        };
        let first = replica("postgres://app:hunter2@db.internal/switchback");
        assert_eq!(
            first,
            replica("postgres://app:hunter2@db.internal/switchback"),
            "the same at each start"
        );
        assert_eq!(
            first,
            replica("postgres://app:other-password@db.internal/switchback"),
            "a password is not part of it"
        );
        assert_ne!(
            first,
            replica("postgres://app:hunter2@db.internal/other"),
            "another database, another name"
        );
        assert!(!first.contains("hunter2"), "{first}");
    }
}
