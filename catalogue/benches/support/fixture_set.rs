//! The fixture set as the bench and the instruction-count example read it.

use std::path::Path;

/// Fixtures without `observed_at` are classified at this time: 2026-11-30T02:00:00Z.
pub const NOW_MS: i64 = 1_796_004_000_000;

/// The evidence of every fixture in `fixtures/providers/`, parsed and as its JSON line.
pub fn fixture_evidence() -> Vec<(catalogue::Evidence, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
    let mut all = Vec::new();
    for family in std::fs::read_dir(root).expect("fixtures/providers exists") {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
            let line = fixture["evidence"].to_string();
            let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
            all.push((evidence, line));
        }
    }
    all
}
