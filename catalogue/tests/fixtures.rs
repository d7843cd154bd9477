//! Every provider fixture in `fixtures/providers/<family>/*.json`, run through one
//! helper. A fixture is `{"source", "evidence", "expected"}`, with `"paraphrased": true`
//! when its text is not verbatim and an optional `note`: the evidence as SPEC 2.1 JSON,
//! and the fields of SPEC 2.5 it asserts. `retry_after_ms`, `reset_at` and
//! `hints_dropped` are asserted absent when a fixture does not name them.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Fixtures without `observed_at` are classified at this time: 2026-11-30T02:00:00Z.
const NOW_MS: i64 = 1_796_004_000_000;

/// The keys a fixture may have.
const FIXTURE_KEYS: [&str; 5] = ["source", "paraphrased", "note", "evidence", "expected"];

/// Fields that must be absent when the fixture does not expect them.
const ABSENT_UNLESS_EXPECTED: [&str; 3] = ["retry_after_ms", "reset_at", "hints_dropped"];

fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers")
}

fn fixture_paths() -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for family in std::fs::read_dir(fixtures_root()).expect("fixtures/providers exists") {
        let family = family.unwrap().path();
        for file in std::fs::read_dir(&family).unwrap() {
            let path = file.unwrap().path();
            if path
                .extension()
                .is_some_and(|extension| extension == "json")
            {
                paths.push(path);
            }
        }
    }
    paths.sort();
    paths
}

/// Classifies one fixture; returns one line per mismatching field.
fn check(path: &Path) -> Vec<String> {
    let name = path
        .strip_prefix(fixtures_root())
        .unwrap()
        .display()
        .to_string();
    let text = std::fs::read_to_string(path).unwrap();
    let fixture: Value =
        serde_json::from_str(&text).unwrap_or_else(|error| panic!("{name}: {error}"));
    let source = fixture["source"].as_str().unwrap_or_default();
    let mut problems = Vec::new();
    for key in fixture.as_object().expect("a fixture is an object").keys() {
        if !FIXTURE_KEYS.contains(&key.as_str()) {
            problems.push(format!(
                "{name}: unknown key `{key}` (known: {FIXTURE_KEYS:?})"
            ));
        }
    }
    if !matches!(fixture.get("paraphrased"), None | Some(Value::Bool(_))) {
        problems.push(format!("{name}: `paraphrased` is true or false"));
    }
    if !source.starts_with("https://") {
        problems.push(format!(
            "{name}: `source` must name the public page the shape comes from"
        ));
    }
    let evidence = match catalogue::Evidence::from_json_value(&fixture["evidence"]) {
        Ok(evidence) => evidence,
        Err(error) => return vec![format!("{name}: evidence does not read: {error}")],
    };
    let actual = serde_json::to_value(catalogue::classify(&evidence, NOW_MS)).unwrap();
    let expected = fixture["expected"]
        .as_object()
        .expect("`expected` is an object");
    for (field, want) in expected {
        let got = actual.get(field).unwrap_or(&Value::Null);
        if got != want {
            problems.push(format!(
                "{name}: {field}\n    expected {want}\n    got      {got}"
            ));
        }
    }
    for field in ABSENT_UNLESS_EXPECTED {
        if !expected.contains_key(field)
            && let Some(got) = actual.get(field)
        {
            problems.push(format!(
                "{name}: {field}\n    expected (absent)\n    got      {got}"
            ));
        }
    }
    if !problems.is_empty() {
        problems.push(format!("{name}: whole classification {actual}"));
    }
    problems
}

#[test]
fn every_provider_fixture_classifies_as_expected() {
    let paths = fixture_paths();
    assert!(paths.len() >= 150, "only {} fixtures", paths.len());
    let problems: Vec<String> = paths.iter().flat_map(|path| check(path)).collect();
    assert!(
        problems.is_empty(),
        "{} fixture problem(s):\n{}",
        problems
            .iter()
            .filter(|line| !line.contains("whole classification"))
            .count(),
        problems.join("\n")
    );
}

#[test]
fn classification_is_deterministic() {
    for path in fixture_paths() {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
        let first = catalogue::classify(&evidence, NOW_MS);
        let second = catalogue::classify(&evidence, NOW_MS);
        assert_eq!(first, second, "{}", path.display());
    }
}

/// The worst mistake: retrying what no retry can fix. No fixture whose expected class is
/// hard or outside is ever classified transient: not as captured, not with a short
/// `retry-after` added (a proxy or SDK that sends one on every error must not make a
/// hard error look passing), nor with its body printed the way agent CLIs and SDK
/// loggers print it.
#[test]
fn no_hard_or_outside_fixture_is_ever_classified_transient() {
    let mut wrong = Vec::new();
    for path in fixture_paths() {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let expected_class = fixture["expected"]["class"].as_str().unwrap_or_default();
        if expected_class == "transient" {
            continue;
        }
        let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
        let with_retry_after = evidence.clone().with_header("retry-after", "1");
        let mut variants = vec![
            ("as captured", evidence.clone()),
            ("with retry-after: 1", with_retry_after),
        ];
        if let Some(body) = &evidence.body {
            let mut printed = evidence.clone();
            printed.body = None;
            printed.output = Some(format!("Error: API request failed\n    {body}\n"));
            variants.push(("body printed as CLI output", printed));
        }
        for (variant, evidence) in variants {
            let verdict = catalogue::classify(&evidence, NOW_MS);
            if verdict.classification.class == policy::Class::Transient {
                wrong.push(format!(
                    "{} ({variant}): expected {expected_class}, got {} by {}",
                    path.display(),
                    verdict.classification.code.as_str(),
                    verdict.rule
                ));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} hard or outside fixture(s) classified transient:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
}

/// Every rule is held by at least one fixture: a rule no real error exercises is a
/// guess.
#[test]
fn every_rule_has_a_fixture() {
    let mut used = std::collections::HashSet::new();
    for path in fixture_paths() {
        let fixture: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
        used.insert(catalogue::classify(&evidence, NOW_MS).rule);
    }
    let unused: Vec<&str> = catalogue::Catalogue::shared()
        .rule_ids()
        .filter(|id| !used.contains(id))
        .collect();
    assert!(
        unused.is_empty(),
        "{} rule(s) without a fixture: {unused:?}",
        unused.len()
    );
}
