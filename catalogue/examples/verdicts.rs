//! Prints the catalogue's whole verdict (code, class, confidence, rule, reset, safe
//! cause) for every fixture under the directories given, and for variants of each
//! evidence the fixtures do not hold: the same evidence under each of eight
//! families, without its status, and with its body and output swapped. Each is
//! classified twice, from its JSON value and from its evidence line, as the server
//! reads one. Two builds that print the same lines decide the same way on all of
//! them: a change meant to leave every verdict as it was (one for speed, say) is
//! checked by running this before and after and comparing the outputs.
//!
//! ```text
//! cargo run -p catalogue --release --example verdicts -- \
//!     fixtures/providers fixtures/held_out fixtures/known_misses > after.txt
//! ```

use std::path::Path;

use serde_json::Value;

#[path = "support/json_files.rs"]
mod json_files;

use json_files::json_files;

/// Evidence without `observed_at` is classified at this time: 2026-11-30T02:00:00Z.
const NOW_MS: i64 = 1_796_004_000_000;

/// The families each evidence is also classified under.
const FAMILIES: [&str; 8] = [
    "anthropic",
    "openai",
    "gemini",
    "openrouter",
    "claude_code",
    "codex",
    "other",
    "bedrock",
];

/// The evidence as the fixture holds it, then its variants.
fn variants(evidence: &Value) -> Vec<Value> {
    let mut all = vec![evidence.clone()];
    for family in FAMILIES {
        let mut variant = evidence.clone();
        variant["provider"] = Value::String(family.to_owned());
        all.push(variant);
    }
    let mut without_status = evidence.clone();
    if let Some(fields) = without_status.as_object_mut() {
        fields.remove("status");
    }
    all.push(without_status);
    let mut swapped = evidence.clone();
    if let Some(fields) = swapped.as_object_mut() {
        let body = fields.remove("body");
        let output = fields.remove("output");
        if let Some(body) = body {
            fields.insert("output".to_owned(), body);
        }
        if let Some(output) = output {
            fields.insert("body".to_owned(), output);
        }
    }
    all.push(swapped);
    all
}

fn verdict_line(evidence: &catalogue::Evidence) -> String {
    serde_json::to_string(&catalogue::classify(evidence, NOW_MS))
        .unwrap_or_else(|error| format!("unserializable: {error}"))
}

fn main() {
    let mut paths = Vec::new();
    for dir in std::env::args().skip(1) {
        json_files(Path::new(&dir), &mut paths);
    }
    paths.sort();
    for path in &paths {
        let Ok(text) = std::fs::read_to_string(path) else {
            continue;
        };
        let Ok(fixture) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let name = path.display();
        for (index, variant) in variants(&fixture["evidence"]).iter().enumerate() {
            match catalogue::Evidence::from_json_value(variant) {
                Ok(evidence) => println!("{name} {index} {}", verdict_line(&evidence)),
                Err(error) => println!("{name} {index} unreadable: {error}"),
            }
            let line = variant.to_string();
            match catalogue::Evidence::from_json_line(&line) {
                Ok(evidence) => println!("{name} {index} line {}", verdict_line(&evidence)),
                Err(error) => println!("{name} {index} line unreadable: {error}"),
            }
        }
    }
}
