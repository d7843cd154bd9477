//! `switchback`: the command line.

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;
use server::cli::{Cli, Command, PolicyCommand};
use server::commands::policy_check;

#[tokio::main]
async fn main() -> anyhow::Result<ExitCode> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            server::telemetry::init();
            server::serve::run(args.into_config()).await?;
            Ok(ExitCode::SUCCESS)
        }
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
