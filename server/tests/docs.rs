//! The examples of the user guide (`docs/**/*.md`) are checked, by what each
//! fenced block's info string says (`docs/guide/README.md`, "The examples are
//! tested"): policy documents through the policy crate, provider and profile
//! bodies through the API's checks, evidence through the catalogue, any JSON
//! parsed, and `console` blocks run against the real binary and a fresh
//! server per chapter, their output compared.

use std::path::{Path, PathBuf};
use std::process::Command;

use api::read::Read;
use api::{KeyEnvRules, ProfileRequest, ProviderRequest};
use policy::FieldPath;
use serde_json::Value;

/// One fenced block: where it starts, its info string's words, its text.
#[derive(Debug)]
struct Block {
    line: usize,
    language: String,
    tags: Vec<String>,
    text: String,
}

impl Block {
    /// The value of `name=VALUE` among the tags.
    fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find_map(|tag| tag.strip_prefix(name)?.strip_prefix('='))
    }

    fn has(&self, name: &str) -> bool {
        self.tags.iter().any(|tag| tag == name)
    }
}

/// Every fenced block of a Markdown text, in order. A fence may be indented (in
/// a list); its lines lose that indentation.
fn blocks(markdown: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut lines = markdown.lines().enumerate();
    while let Some((number, line)) = lines.next() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let ticks = trimmed.chars().take_while(|c| *c == '`').count();
        if ticks < 3 {
            continue;
        }
        let mut words = trimmed[ticks..].split_whitespace().map(str::to_owned);
        let language = words.next().unwrap_or_default();
        let tags: Vec<String> = words.collect();
        let mut text = String::new();
        for (_, inner) in lines.by_ref() {
            let inner_trimmed = inner.trim_start();
            if inner_trimmed.starts_with(&"`".repeat(ticks))
                && inner_trimmed.trim_end().chars().all(|c| c == '`')
            {
                break;
            }
            let cut = inner.len() - inner_trimmed.len();
            text.push_str(&inner[cut.min(indent)..]);
            text.push('\n');
        }
        found.push(Block {
            line: number + 1,
            language,
            tags,
            text,
        });
    }
    found
}

fn docs_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs")
}

/// Every Markdown file under `docs/`, sorted.
fn markdown_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("docs/ is readable").flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, into);
            } else if path.extension().is_some_and(|extension| extension == "md") {
                into.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(&docs_root(), &mut files);
    files.sort();
    files
}

/// What is wrong with one JSON block, if anything.
fn check_json(block: &Block) -> Option<String> {
    let value: Value = match serde_json::from_str(&block.text) {
        Ok(value) => value,
        Err(error) => return Some(format!("not JSON: {error}")),
    };
    if block.has("policy")
        && let Err(errors) = policy::normalize_policy(&value, &FieldPath::root())
    {
        return Some(format!("not a valid policy document: {errors:?}"));
    }
    if block.has("provider") {
        let checked = Read::<ProviderRequest>::from_json(&value)
            .check(|request| request.check(&KeyEnvRules::default()));
        if let Err(errors) = checked {
            return Some(format!("refused as a provider: {errors:?}"));
        }
    }
    if block.has("profile") {
        let checked = Read::<ProfileRequest>::from_json(&value).check(ProfileRequest::check);
        if let Err(errors) = checked {
            return Some(format!("refused as a profile: {errors:?}"));
        }
    }
    if block.has("evidence") {
        let evidence = match catalogue::Evidence::from_json_value(&value) {
            Ok(evidence) => evidence,
            Err(error) => return Some(format!("not evidence: {error}")),
        };
        let verdict = catalogue::classify(&evidence, 1_796_004_000_000);
        let code = verdict.classification.code.as_str();
        match block.tag("code") {
            Some(expected) if expected != code => {
                return Some(format!(
                    "classified {code} (by {}), the fence says {expected}",
                    verdict.rule
                ));
            }
            Some(_) => {}
            None => return Some("an evidence block names its code (code=CODE)".to_owned()),
        }
    }
    None
}

/// Whether `printed` is what `expected` says: line by line, a line `...`
/// standing for any number of lines.
fn matches_expected(expected: &[&str], printed: &[&str]) -> bool {
    match expected.split_first() {
        None => printed.is_empty(),
        Some((&"...", rest)) => {
            (0..=printed.len()).any(|skip| matches_expected(rest, &printed[skip..]))
        }
        Some((line, rest)) => printed.split_first().is_some_and(|(first, others)| {
            first.trim_end() == line.trim_end() && matches_expected(rest, others)
        }),
    }
}

/// One command of a console block and what it must print.
struct Step<'b> {
    line: usize,
    command: &'b str,
    expected: Vec<&'b str>,
}

fn steps(block: &Block) -> Vec<Step<'_>> {
    let mut steps: Vec<Step<'_>> = Vec::new();
    for (offset, line) in block.text.lines().enumerate() {
        if let Some(command) = line.strip_prefix("$ ") {
            steps.push(Step {
                line: block.line + 1 + offset,
                command,
                expected: Vec::new(),
            });
        } else if let Some(step) = steps.last_mut() {
            step.expected.push(line);
        }
    }
    steps
}

/// Run a chapter's console blocks in order, in one empty directory, against a
/// server of its own; what went wrong, each with its line.
fn run_console_blocks(file: &Path, blocks: &[&Block]) -> Vec<String> {
    let work = tempfile::tempdir().unwrap();
    let server_dir = tempfile::tempdir().unwrap();
    let database = format!("sqlite://{}", server_dir.path().join("s.db").display());
    let server = crate::common::serve(
        server_dir.path(),
        &[],
        &[("SWITCHBACK_DATABASE_URL", &database)],
    );
    let binary_dir = Path::new(env!("CARGO_BIN_EXE_switchback"))
        .parent()
        .unwrap()
        .to_owned();
    let path = format!(
        "{}:{}",
        binary_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut problems = Vec::new();
    for block in blocks {
        let exit_code: i32 = block
            .tag("exit")
            .map_or(0, |code| code.parse().expect("exit=N is a number"));
        for step in steps(block) {
            let output = Command::new("sh")
                .arg("-c")
                .arg(step.command)
                .current_dir(work.path())
                .env("PATH", &path)
                .env("SWITCHBACK_URL", server.base_url())
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            let printed: Vec<&str> = stdout.lines().collect();
            let at = format!("{}:{}", file.display(), step.line);
            if output.status.code() != Some(exit_code) {
                problems.push(format!(
                    "{at}: `{}` exited {:?}, not {exit_code}\nstdout: {stdout}\nstderr: {}",
                    step.command,
                    output.status.code(),
                    String::from_utf8_lossy(&output.stderr)
                ));
            } else if !matches_expected(&step.expected, &printed) {
                problems.push(format!(
                    "{at}: `{}` printed\n{stdout}\nwhere the guide says\n{}",
                    step.command,
                    step.expected.join("\n")
                ));
            }
        }
    }
    problems
}

#[test]
fn every_example_in_the_docs_holds() {
    let mut problems = Vec::new();
    let mut counted = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        let found = blocks(&text);
        for block in found.iter().filter(|block| block.language == "json") {
            counted += 1;
            if let Some(problem) = check_json(block) {
                problems.push(format!("{}:{}: {problem}", file.display(), block.line));
            }
        }
        // JSON values one after another (JSON lines, or objects over several lines).
        for block in found.iter().filter(|block| block.language == "jsonl") {
            counted += 1;
            let values = serde_json::Deserializer::from_str(&block.text).into_iter::<Value>();
            if let Some(Err(error)) = values.into_iter().find(Result::is_err) {
                problems.push(format!(
                    "{}:{}: not JSON values: {error}",
                    file.display(),
                    block.line
                ));
            }
        }
        let console: Vec<&Block> = found
            .iter()
            .filter(|block| block.language == "console")
            .collect();
        if !console.is_empty() {
            counted += console.len();
            problems.extend(run_console_blocks(&file, &console));
        }
    }
    assert!(counted > 0, "the docs hold no example");
    assert!(problems.is_empty(), "{}", problems.join("\n\n"));
}

/// The harness reads what it is meant to: fences of any length and indentation,
/// tags, and `...` in expected output.
#[test]
fn the_harness_reads_fences_tags_and_elisions() {
    let markdown = "text\n```json evidence code=rate_limited\n{\"a\": 1}\n```\n\n  ````console exit=1\n  $ false\n  ...\n  ````\n";
    let found = blocks(markdown);
    assert_eq!(found.len(), 2);
    assert_eq!((found[0].line, found[0].language.as_str()), (2, "json"));
    assert_eq!(found[0].tag("code"), Some("rate_limited"));
    assert!(found[0].has("evidence"));
    assert_eq!(found[1].tag("exit"), Some("1"));
    assert_eq!(found[1].text, "$ false\n...\n");
    let step = &steps(&found[1])[0];
    assert_eq!(
        (step.command, step.expected.as_slice()),
        ("false", &["..."][..])
    );
    assert!(matches_expected(&["a", "...", "d"], &["a", "b", "c", "d"]));
    assert!(matches_expected(&["..."], &[]));
    assert!(!matches_expected(&["a"], &["a", "b"]));
    assert!(!matches_expected(&["a", "...", "e"], &["a", "b"]));
    // A wrong code, an invalid policy, a refused provider are each caught.
    let wrong = |info: &str, text: &str| {
        check_json(&Block {
            line: 1,
            language: "json".into(),
            tags: info.split_whitespace().map(str::to_owned).collect(),
            text: text.into(),
        })
    };
    assert!(
        wrong(
            "evidence code=overloaded",
            r#"{"provider": "openai", "status": 429}"#
        )
        .is_some()
    );
    assert!(
        wrong(
            "evidence code=rate_limited",
            r#"{"provider": "openai", "status": 429}"#
        )
        .is_none()
    );
    assert!(
        wrong(
            "policy",
            r#"{"version": 2, "transient": {"retry": {"max_retries": -1}}}"#
        )
        .is_some()
    );
    assert!(wrong("provider", r#"{"name": "", "kind": "openai"}"#).is_some());
    assert!(wrong("", "not json").is_some());
}

/// Every relative link in `docs/` names a file that exists (a chapter renamed
/// or not yet written is caught).
#[test]
fn every_link_in_the_docs_names_a_file() {
    let mut broken = Vec::new();
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (at, _) in text.match_indices("](") {
            let rest = &text[at + 2..];
            let Some(end) = rest.find(')') else { continue };
            let target = &rest[..end];
            if target.contains("://") || target.starts_with('#') || target.starts_with("mailto:") {
                continue;
            }
            let path = target.split('#').next().unwrap_or_default();
            if path.is_empty() || path.contains(' ') {
                continue;
            }
            if !file.parent().unwrap().join(path).exists() {
                broken.push(format!("{}: {target}", file.display()));
            }
        }
    }
    assert!(
        broken.is_empty(),
        "links to nothing:\n{}",
        broken.join("\n")
    );
}

/// The metric names the server records: every `"switchback_..."` string in its
/// source that a `metrics::` macro takes.
fn recorded_metrics() -> std::collections::BTreeSet<String> {
    fn walk(dir: &Path, into: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, into);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                into.push(path);
            }
        }
    }
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut names = std::collections::BTreeSet::new();
    for file in files {
        let text = std::fs::read_to_string(file).unwrap();
        for (at, _) in text.match_indices("metrics::") {
            let call = &text[at..text.len().min(at + 200)];
            let Some(start) = call.find("\"switchback_") else {
                continue;
            };
            let name: String = call[start + 1..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            names.insert(name);
        }
    }
    names
}

/// The Grafana dashboard (`docs/grafana/switchback.json`) asks only for metrics
/// the server records, and charts every one of them.
#[test]
fn the_grafana_dashboard_charts_every_recorded_metric_and_no_other() {
    let recorded = recorded_metrics();
    assert!(
        recorded.contains("switchback_routes") && recorded.contains("switchback_attempts_total"),
        "the source scan finds the metrics: {recorded:?}"
    );
    let text = std::fs::read_to_string(docs_root().join("grafana/switchback.json")).unwrap();
    let dashboard: Value = serde_json::from_str(&text).expect("the dashboard is JSON");
    let mut asked = std::collections::BTreeSet::new();
    let mut expressions = Vec::new();
    fn collect(value: &Value, into: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    match (key.as_str(), inner) {
                        ("expr", Value::String(expr)) => into.push(expr.clone()),
                        _ => collect(inner, into),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| collect(item, into)),
            _ => {}
        }
    }
    collect(&dashboard, &mut expressions);
    assert!(!expressions.is_empty(), "the dashboard has queries");
    for expr in &expressions {
        for (at, _) in expr.match_indices("switchback_") {
            let name: String = expr[at..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            let family = ["_bucket", "_sum", "_count"]
                .iter()
                .find_map(|suffix| name.strip_suffix(suffix))
                .filter(|family| recorded.contains(*family))
                .map_or(name.clone(), str::to_owned);
            asked.insert(family);
        }
    }
    let unknown: Vec<&String> = asked.difference(&recorded).collect();
    assert!(
        unknown.is_empty(),
        "the dashboard asks for metrics the server never records: {unknown:?}"
    );
    let missing: Vec<&String> = recorded.difference(&asked).collect();
    assert!(
        missing.is_empty(),
        "the dashboard charts none of: {missing:?}"
    );
}
