//! Scores the catalogue on fixture files it was not written from: every `*.json` under
//! the directories given (fixture shape: `{"evidence", "expected": {"code", "class"}}`),
//! classified as `catalogue/tests/fixtures.rs` classifies them, and counted: right
//! code, right class, `unknown`, and the dangerous miss (a hard or outside failure read
//! as transient, which retries what waiting cannot fix). With `-v`, each miss; with
//! `-j`, one JSON line per file instead (its path and what the catalogue said), for
//! turning a scored set into fixtures.
//!
//! ```text
//! cargo run -p catalogue --example score -- -v fixtures/held_out
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

#[path = "support/json_files.rs"]
mod json_files;

use json_files::json_files;

/// Fixtures without `observed_at` are classified at this time: 2026-11-30T02:00:00Z.
const NOW_MS: i64 = 1_796_004_000_000;

#[derive(Default)]
struct Tally {
    cases: usize,
    code: usize,
    class: usize,
    unknown: usize,
    dangerous: usize,
}

fn main() {
    let mut verbose = false;
    let mut lines = false;
    let mut paths = Vec::new();
    for argument in std::env::args().skip(1) {
        if argument == "-v" {
            verbose = true;
        } else if argument == "-j" {
            lines = true;
        } else {
            json_files(Path::new(&argument), &mut paths);
        }
    }
    paths.sort();
    let mut by_code: BTreeMap<String, Tally> = BTreeMap::new();
    let mut all = Tally::default();
    for path in &paths {
        let Ok(fixture) = std::fs::read_to_string(path)
            .map_err(|error| error.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()))
        else {
            eprintln!("{}: not JSON", path.display());
            continue;
        };
        let Ok(evidence) = catalogue::Evidence::from_json_value(&fixture["evidence"]) else {
            eprintln!("{}: evidence does not read", path.display());
            continue;
        };
        let expected_code = fixture["expected"]["code"].as_str().unwrap_or_default();
        let expected_class = fixture["expected"]["class"].as_str().unwrap_or_default();
        let verdict = catalogue::classify(&evidence, NOW_MS);
        if lines {
            let mut said = serde_json::to_value(&verdict).unwrap_or_default();
            said["path"] = Value::String(path.display().to_string());
            println!("{said}");
            continue;
        }
        let code = verdict.classification.code.as_str();
        let class = verdict.classification.class.as_str();
        let tally = by_code.entry(expected_code.to_owned()).or_default();
        for tally in [tally, &mut all] {
            tally.cases += 1;
            tally.code += usize::from(code == expected_code);
            tally.class += usize::from(class == expected_class);
            tally.unknown += usize::from(code == "unknown");
            tally.dangerous += usize::from(class == "transient" && expected_class != "transient");
        }
        if verbose && code != expected_code {
            println!(
                "miss {}: expected {expected_code}, got {code} ({}, {}) by {}: {}",
                path.display(),
                class,
                verdict.classification.confidence.as_str(),
                verdict.rule,
                verdict.safe_cause
            );
        }
    }
    if lines {
        return;
    }
    println!(
        "{:<26} {:>5} {:>5} {:>6} {:>8} {:>9}",
        "expected", "cases", "code", "class", "unknown", "dangerous"
    );
    for (code, tally) in by_code.iter().chain([(&"all".to_owned(), &all)]) {
        println!(
            "{code:<26} {:>5} {:>5} {:>6} {:>8} {:>9}",
            tally.cases, tally.code, tally.class, tally.unknown, tally.dangerous
        );
    }
}
