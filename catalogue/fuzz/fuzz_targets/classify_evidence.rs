//! Evidence parsing and classification never panic, whatever the bytes: as a whole
//! evidence line, and as the body, output and hint headers of every family's evidence.
//! Every classification serializes, and its safe cause stays within 300 characters.

#![no_main]

use libfuzzer_sys::fuzz_target;

const NOW_MS: i64 = 1_796_004_000_000;

const PROVIDERS: [&str; 8] = [
    "anthropic",
    "openai",
    "gemini",
    "bedrock",
    "openrouter",
    "claude_code",
    "codex",
    "gemini_cli",
];

fn check(evidence: &catalogue::Evidence) {
    let verdict = catalogue::classify(evidence, NOW_MS);
    assert!(verdict.safe_cause.chars().count() <= catalogue::MAX_SAFE_CAUSE_CHARS);
    assert_eq!(
        verdict.classification.class,
        verdict.classification.code.class()
    );
    serde_json::to_string(&verdict).expect("a classification always serializes");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(evidence) = catalogue::Evidence::from_json_line(text) {
        check(&evidence);
    }
    let provider = PROVIDERS[data.len() % PROVIDERS.len()];
    let evidence = catalogue::Evidence::new(provider)
        .with_status(if data.len() % 2 == 0 { 429 } else { 200 })
        .with_body(text)
        .with_output(text)
        .with_header("retry-after", text)
        .with_header("anthropic-ratelimit-tokens-reset", text)
        .with_header("x-ratelimit-reset-tokens", text)
        .with_header("date", text)
        .with_observed_at_ms(NOW_MS);
    check(&evidence);
    let _ = catalogue::safe_cause(text);
});
