//! `switchback`: the command line.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use server::cli::{Cli, Command, PolicyCommand};
use server::clock::{Clock, SystemClock};
use server::commands::{backup, policy_check};

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            let config = match args.into_config(std::env::var("SWITCHBACK_ADMIN_TOKEN").ok()) {
                Ok(config) => config,
                Err(error) => {
                    eprintln!("switchback serve: {error}");
                    return Ok(ExitCode::from(2));
                }
            };
            server::telemetry::init();
            server::serve::run(config).await?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Classify {
            reclassify: true,
            database,
            limit,
        } => {
            // Reading again creates no database: a SQLite file must exist.
            if let Some(path) = database
                .strip_prefix("sqlite://")
                .or_else(|| database.strip_prefix("sqlite:"))
                .map(|rest| rest.split('?').next().unwrap_or(rest))
                && !std::path::Path::new(path).exists()
            {
                eprintln!("switchback classify --reclassify: no database at {path}");
                return Ok(ExitCode::FAILURE);
            }
            let store = server::store::open(&database, "classify").await?;
            let view = server::inbox::reclassify(store.as_ref(), limit).await?;
            for change in &view.changes {
                println!("{}", serde_json::to_string(change)?);
            }
            eprintln!(
                "catalogue {}: {} of the {} latest stored attempts read differently",
                view.catalogue,
                view.changes.len(),
                view.checked
            );
            Ok(ExitCode::SUCCESS)
        }
        Command::Classify { .. } => {
            let stdin = std::io::stdin();
            let stdout = std::io::stdout();
            let clock = SystemClock;
            let result = catalogue::classify_lines(
                stdin.lock(),
                // Line-buffered: each answer appears as soon as its line is read.
                stdout.lock(),
                || clock.now().as_millis(),
            );
            match result {
                Ok(_) => Ok(ExitCode::SUCCESS),
                Err(error) => {
                    eprintln!("switchback classify: {error}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
        Command::Backup { file, database } => match backup::backup(&database, &file) {
            Ok(taken) => {
                println!(
                    "backed up {} tasks ({} routes not ended) to {} ({} bytes) in {} ms",
                    taken.tasks,
                    taken.open_routes,
                    file.display(),
                    taken.bytes,
                    taken.elapsed_ms
                );
                Ok(ExitCode::SUCCESS)
            }
            Err(error) => {
                eprintln!("switchback backup: {error}");
                Ok(ExitCode::FAILURE)
            }
        },
        Command::Policy(PolicyCommand::Check { file }) => {
            let outcome = policy_check::check_file(&file);
            std::io::stdout().write_all(outcome.stdout.as_bytes())?;
            if let Some(message) = outcome.stderr {
                eprintln!("switchback policy check: {message}");
            }
            Ok(ExitCode::from(outcome.exit_code))
        }
    }
}
