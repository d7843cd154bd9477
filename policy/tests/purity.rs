//! The policy crate stays pure (STYLE rule 1): its manifest names no async runtime, web
//! framework, database, HTTP client, clock or randomness crate.

/// Crates that do I/O, read a clock or draw randomness, matched by name or name prefix
/// (`leptos` also catches `leptos_router`).
const FORBIDDEN: &[&str] = &[
    "tokio",
    "sqlx",
    "axum",
    "leptos",
    "reqwest",
    "hyper",
    "tower",
    "mio",
    "async-std",
    "smol",
    "rand",
    "getrandom",
    "fastrand",
    "chrono",
    "time",
    "jiff",
    "uuid",
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "tempfile",
];

/// The forbidden dependencies a manifest declares, in any dependency table.
fn forbidden_dependencies(manifest: &str) -> Vec<String> {
    let mut in_dependencies = false;
    let mut found = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            let header = line.trim_matches(|c| c == '[' || c == ']');
            // `[dependencies]`, `[dev-dependencies]`, `[target.'cfg(..)'.dependencies]`, ...
            in_dependencies = header.split('.').any(|part| part.ends_with("dependencies"));
            // `[dependencies.tokio]` names the dependency in its header.
            if let Some((_, name)) = header.rsplit_once("dependencies.") {
                check_name(name, &mut found);
            }
            continue;
        }
        if !in_dependencies || line.starts_with('#') {
            continue;
        }
        if let Some((name, spec)) = line.split_once('=') {
            check_name(name, &mut found);
            // A renamed dependency: `clock = { package = "chrono", ... }`.
            if let Some((_, renamed)) = spec.split_once("package")
                && let Some(name) = renamed.split('"').nth(1)
            {
                check_name(name, &mut found);
            }
        }
    }
    found
}

fn check_name(name: &str, found: &mut Vec<String>) {
    let name = name.trim().trim_matches('"');
    let normalized = name.replace('_', "-");
    let forbidden = FORBIDDEN
        .iter()
        .any(|banned| normalized == *banned || normalized.starts_with(&format!("{banned}-")));
    if forbidden {
        found.push(name.to_owned());
    }
}

#[test]
fn policy_manifest_has_no_io_clock_or_random_dependency() {
    let manifest =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    assert_eq!(
        forbidden_dependencies(&manifest),
        Vec::<String>::new(),
        "policy/Cargo.toml must stay pure"
    );
}

#[test]
fn the_check_itself_catches_each_form() {
    let table: &[(&str, &[&str])] = &[
        ("[dependencies]\nserde = \"1\"\n", &[]),
        ("[dependencies]\ntokio = { workspace = true }\n", &["tokio"]),
        (
            "[dependencies]\nleptos_router = \"0.8\"\n",
            &["leptos_router"],
        ),
        ("[dev-dependencies]\nsqlx = \"0.9\"\n", &["sqlx"]),
        (
            "[target.'cfg(unix)'.dependencies]\naxum = \"0.8\"\n",
            &["axum"],
        ),
        ("[dependencies.reqwest]\nversion = \"0.12\"\n", &["reqwest"]),
        (
            "[dependencies]\nclock = { package = \"chrono\", version = \"0.4\" }\n",
            &["chrono"],
        ),
        ("[dependencies]\nrand_core = \"0.9\"\n", &["rand_core"]),
        (
            "[package]\nname = \"tokio\"\n[dependencies]\nserde = \"1\"\n",
            &[],
        ),
        ("[dependencies]\n# tokio = \"1\"\nthiserror = \"2\"\n", &[]),
        ("[dependencies]\ntimeless = \"1\"\n", &[]),
    ];
    for (manifest, expected) in table {
        assert_eq!(forbidden_dependencies(manifest), *expected, "{manifest}");
    }
}
