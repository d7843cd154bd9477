//! `switchback`: the command line.

use clap::Parser;
use server::cli::{Cli, Command};

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve(args) => {
            server::telemetry::init();
            server::serve::run(args.into_config()).await
        }
    }
}
