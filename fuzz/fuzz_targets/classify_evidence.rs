//! The catalogue's classification of evidence never panics, whatever the bytes: as a
//! whole evidence line (`Evidence::from_json_line`, and the same object through
//! `from_json_value`), as the body, output and timing headers of every family's
//! evidence, and as input to `switchback classify` (`classify_lines`). Every verdict is
//! deterministic, keeps its class with its code, serializes, and has a safe cause within
//! `MAX_SAFE_CAUSE_CHARS`.
//!
//! (Ported from `catalogue/fuzz/`, which it supersedes, with the JSON-value path,
//! determinism and the line stream added.)

#![no_main]

use catalogue::{Evidence, MAX_SAFE_CAUSE_CHARS};
use libfuzzer_sys::fuzz_target;

/// 2026-11-30T02:00:00Z, the catalogue's "now".
const NOW_MS: i64 = 1_796_004_000_000;

/// One provider per family, and the agent CLIs.
const PROVIDERS: [&str; 22] = [
    "anthropic",
    "openai",
    "gemini",
    "bedrock",
    "openrouter",
    "claude_code",
    "codex",
    "gemini_cli",
    "moonshot",
    "zhipu",
    "dashscope",
    "siliconflow",
    "nvidia_nim",
    "huggingface",
    "perplexity",
    "cerebras",
    "cloudflare",
    "github_copilot",
    "cursor",
    "opencode",
    "goose",
    "other",
];

/// Statuses picked by the input's length: success, limits, server errors, auth, none.
const STATUSES: [Option<u16>; 6] = [None, Some(200), Some(429), Some(500), Some(401), Some(529)];

fn check(evidence: &Evidence) {
    let verdict = catalogue::classify(evidence, NOW_MS);
    assert_eq!(
        catalogue::classify(evidence, NOW_MS),
        verdict,
        "deterministic"
    );
    assert!(verdict.safe_cause.chars().count() <= MAX_SAFE_CAUSE_CHARS);
    assert_eq!(
        verdict.classification.class,
        verdict.classification.code.class()
    );
    serde_json::to_string(&verdict).expect("a classification always serializes");
}

fuzz_target!(|data: &[u8]| {
    // `switchback classify` takes any bytes, a line at a time.
    let mut output = Vec::new();
    let counts = catalogue::classify_lines(data, &mut output, || NOW_MS)
        .expect("writing to memory cannot fail");
    let lines = output.iter().filter(|&&byte| byte == b'\n').count();
    assert_eq!(counts.classified + counts.errors, lines);

    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(evidence) = Evidence::from_json_line(text) {
        check(&evidence);
        let value: serde_json::Value = serde_json::from_str(text).expect("it was JSON");
        assert_eq!(Evidence::from_json_value(&value).as_ref(), Ok(&evidence));
    }
    let provider = PROVIDERS[data.len() % PROVIDERS.len()];
    let mut evidence = Evidence::new(provider)
        .with_body(text)
        .with_output(text)
        .with_header("retry-after", text)
        .with_header("anthropic-ratelimit-tokens-reset", text)
        .with_header("anthropic-ratelimit-requests-reset", text)
        .with_header("x-ratelimit-reset-tokens", text)
        .with_header("x-ratelimit-reset-requests", text)
        .with_header("date", text)
        .with_observed_at_ms(NOW_MS);
    if let Some(status) = STATUSES[data.len() / PROVIDERS.len() % STATUSES.len()] {
        evidence = evidence.with_status(status);
    }
    check(&evidence);
    let _ = catalogue::safe_cause(text);
    let _ = catalogue::redact_secrets(text);
});
