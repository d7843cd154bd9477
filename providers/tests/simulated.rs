//! The simulated provider: every form of step played through `Adapter::call`, which
//! step a call plays, the script's errors with their paths, and its JSON round trip.
//! Time is tokio's paused clock: delays and hangs take no real time.

use std::path::Path;

use catalogue::{Evidence, Transport};
use policy::{ErrorCode, SemanticCode};
use providers::mock::Pieces;
use providers::{
    Adapter, CallOutcome, CallRequest, Message, ProviderConfig, SimulatedStep, StopReason,
    Timeouts, parse_script,
};
use serde_json::{Value, json};
use tokio::time::{Duration, Instant};

/// The evidence of `fixtures/providers/anthropic/overloaded_529.json`, pasted.
fn overloaded() -> Value {
    json!({"provider": "anthropic", "status": 529,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"})
}

fn request(call_index: u32) -> CallRequest {
    CallRequest {
        model: "simulated".into(),
        max_tokens: 16,
        messages: vec![Message::user("Hi")],
        call_index,
        client: None,
    }
}

fn answered(text: &str, stop: StopReason) -> CallOutcome {
    CallOutcome::Answered {
        text: text.into(),
        stop,
        tool_calls: vec![],
    }
}

/// One row: a script, the call to make, what it gives and how long it takes.
struct Row {
    name: &'static str,
    script: Value,
    call_index: u32,
    outcome: CallOutcome,
    elapsed_ms: u64,
}

fn row(
    name: &'static str,
    script: Value,
    call_index: u32,
    outcome: CallOutcome,
    elapsed_ms: u64,
) -> Row {
    Row {
        name,
        script,
        call_index,
        outcome,
        elapsed_ms,
    }
}

#[tokio::test(start_paused = true)]
async fn every_step_form_plays_through_the_adapter() {
    let timeouts = Timeouts {
        idle_ms: 30_000,
        ..Timeouts::default()
    };
    let overloaded_evidence = Evidence::from_json_value(&overloaded()).unwrap();
    let rows = vec![
        row(
            "a reply answers",
            json!([{"reply": "Paris."}]),
            0,
            answered("Paris.", StopReason::End),
            0,
        ),
        row(
            "stop end is the default, said out loud",
            json!([{"reply": "Paris.", "stop": "end"}]),
            0,
            answered("Paris.", StopReason::End),
            0,
        ),
        row(
            "stop max_tokens truncates",
            json!([{"reply": "Par", "stop": "max_tokens"}]),
            0,
            answered("Par", StopReason::MaxTokens),
            0,
        ),
        row(
            "an error fails before any output",
            json!([{"error": overloaded()}]),
            0,
            CallOutcome::failed(overloaded_evidence.clone()),
            0,
        ),
        row(
            "partial then error fails with the partial output",
            json!([{"partial": "The capital", "error": overloaded()}]),
            0,
            CallOutcome::Failed {
                evidence: overloaded_evidence.clone(),
                partial_output: "The capital".into(),
            },
            0,
        ),
        row(
            "a hang times out after idle_ms, with no output",
            json!([{"hang": true}]),
            0,
            CallOutcome::failed(
                Evidence::new("openai_compatible").with_transport(Transport::Timeout),
            ),
            30_000,
        ),
        row(
            "delay_ms waits before the outcome",
            json!([{"reply": "slow", "delay_ms": 1_500}]),
            0,
            answered("slow", StopReason::End),
            1_500,
        ),
        row(
            "delay_ms then hang: the delay, then the idle timeout",
            json!([{"hang": true, "delay_ms": 500}]),
            0,
            CallOutcome::failed(
                Evidence::new("openai_compatible").with_transport(Transport::Timeout),
            ),
            30_500,
        ),
        row(
            "call 0 plays step 0",
            json!([{"error": overloaded()}, {"reply": "second"}]),
            0,
            CallOutcome::failed(overloaded_evidence.clone()),
            0,
        ),
        row(
            "call 1 plays step 1",
            json!([{"error": overloaded()}, {"reply": "second"}]),
            1,
            answered("second", StopReason::End),
            0,
        ),
        row(
            "past the end, the last step plays",
            json!([{"error": overloaded()}, {"reply": "second"}]),
            7,
            answered("second", StopReason::End),
            0,
        ),
        row(
            "an empty script answers ok",
            json!([]),
            3,
            answered("ok", StopReason::End),
            0,
        ),
    ];
    let client = providers::http_client();
    for row in rows {
        let script = parse_script(&row.script).unwrap();
        let config = ProviderConfig {
            timeouts,
            ..ProviderConfig::simulated(script)
        };
        let adapter = Adapter::new(config, client.clone());
        let started = Instant::now();
        let streamed = Pieces::default();
        let outcome = adapter
            .call_observed(&request(row.call_index), &streamed)
            .await;
        assert_eq!(outcome, row.outcome, "{}", row.name);
        // A step's text, or its partial output, is passed on whole.
        let (CallOutcome::Answered { text, .. }
        | CallOutcome::Failed {
            partial_output: text,
            ..
        }) = &outcome;
        let expected: Vec<String> = [text.clone()]
            .into_iter()
            .filter(|text| !text.is_empty())
            .collect();
        assert_eq!(streamed.pieces(), expected, "{}", row.name);
        assert_eq!(
            started.elapsed(),
            Duration::from_millis(row.elapsed_ms),
            "{}",
            row.name
        );
    }
}

/// A scripted failure is classified as the fixture it was pasted from says.
#[tokio::test]
async fn scripted_evidence_classifies_like_its_fixture() {
    let script = parse_script(&json!([{"error": overloaded()}])).unwrap();
    let adapter = Adapter::new(ProviderConfig::simulated(script), providers::http_client());
    let CallOutcome::Failed { evidence, .. } = adapter.call(&request(0)).await else {
        panic!("expected a failure");
    };
    assert_eq!(
        catalogue::classify(&evidence, 0).classification.code,
        SemanticCode::Overloaded
    );
}

/// A hanging step answers nothing until its future is dropped: the engine's cancel.
#[tokio::test(start_paused = true)]
async fn a_hang_lasts_until_cancelled() {
    let script = parse_script(&json!([{"hang": true}])).unwrap();
    let adapter = Adapter::new(ProviderConfig::simulated(script), providers::http_client());
    let request = request(0);
    let call = adapter.call(&request);
    // Just short of the default idle timeout (60 s), nothing has come.
    let waited = tokio::time::timeout(Duration::from_millis(59_999), call).await;
    assert!(waited.is_err(), "a hang answers nothing before idle_ms");
}

/// Every catalogue fixture's evidence can be pasted into a script as an `error` step,
/// and the call fails with exactly that evidence.
#[tokio::test]
async fn every_catalogue_fixture_pastes_into_a_script() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
    let client = providers::http_client();
    let mut pasted = 0;
    for family in std::fs::read_dir(&fixtures).unwrap() {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let path = file.unwrap().path();
            if path.extension().is_none_or(|extension| extension != "json") {
                continue;
            }
            let fixture: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap())
                .unwrap_or_else(|error| panic!("{}: {error}", path.display()));
            let evidence = &fixture["evidence"];
            let Ok(expected) = Evidence::from_json_value(evidence) else {
                // A fixture of the catalogue's input errors: refused here too.
                assert!(
                    SimulatedStep::parse(&json!({"error": evidence})).is_err(),
                    "{}",
                    path.display()
                );
                continue;
            };
            let script = parse_script(&json!([{"error": evidence}]))
                .unwrap_or_else(|errors| panic!("{}: {errors:?}", path.display()));
            let adapter = Adapter::new(ProviderConfig::simulated(script), client.clone());
            assert_eq!(
                adapter.call(&request(0)).await,
                CallOutcome::failed(expected),
                "{}",
                path.display()
            );
            pasted += 1;
        }
    }
    assert!(pasted > 100, "only {pasted} fixtures found");
}

/// (step, path from the step, code) rows: every way a step is refused.
#[test]
fn bad_steps_name_their_field() {
    let rows: Vec<(Value, &str, ErrorCode)> = vec![
        (json!(7), "", ErrorCode::Type),
        (json!("reply"), "", ErrorCode::Type),
        (json!({}), "", ErrorCode::Required),
        (json!({"delay_ms": 5}), "", ErrorCode::Required),
        (
            json!({"reply": "a", "extra": 1}),
            "extra",
            ErrorCode::UnknownField,
        ),
        (json!({"Reply": "a"}), "Reply", ErrorCode::UnknownField),
        (json!({"reply": 7}), "reply", ErrorCode::Type),
        (json!({"reply": null}), "reply", ErrorCode::Type),
        (
            json!({"reply": "a", "stop": "sometimes"}),
            "stop",
            ErrorCode::Enum,
        ),
        (json!({"reply": "a", "stop": 1}), "stop", ErrorCode::Enum),
        (
            json!({"reply": "a", "partial": "b"}),
            "partial",
            ErrorCode::Conflict,
        ),
        (
            json!({"reply": "a", "error": overloaded()}),
            "error",
            ErrorCode::Conflict,
        ),
        (
            json!({"reply": "a", "hang": true}),
            "hang",
            ErrorCode::Conflict,
        ),
        (json!({"partial": "b"}), "error", ErrorCode::Required),
        (
            json!({"error": overloaded(), "stop": "end"}),
            "stop",
            ErrorCode::Conflict,
        ),
        (json!({"error": "boom"}), "error", ErrorCode::Type),
        (json!({"error": null}), "error", ErrorCode::Type),
        (json!({"error": {}}), "error.provider", ErrorCode::Required),
        (
            json!({"error": {"provider": 3}}),
            "error.provider",
            ErrorCode::Type,
        ),
        (
            json!({"error": {"provider": "openai", "status": 42}}),
            "error.status",
            ErrorCode::Range,
        ),
        (
            json!({"error": {"provider": "openai", "status": "soon"}}),
            "error.status",
            ErrorCode::Type,
        ),
        (
            json!({"error": {"provider": "openai", "headers": [1]}}),
            "error.headers",
            ErrorCode::Type,
        ),
        (
            json!({"error": {"provider": "openai", "observed_at": "yesterday"}}),
            "error.observed_at",
            ErrorCode::Type,
        ),
        (
            json!({"error": {"provider": "codex", "time_zone": "Mars/Olympus_Mons"}}),
            "error.time_zone",
            ErrorCode::Enum,
        ),
        (
            json!({"partial": 5, "error": overloaded()}),
            "partial",
            ErrorCode::Type,
        ),
        (json!({"hang": false}), "hang", ErrorCode::Enum),
        (json!({"hang": "yes"}), "hang", ErrorCode::Type),
        (
            json!({"hang": true, "stop": "end"}),
            "stop",
            ErrorCode::Conflict,
        ),
        (
            json!({"hang": true, "partial": "a"}),
            "partial",
            ErrorCode::Conflict,
        ),
        (
            json!({"reply": "a", "delay_ms": -1}),
            "delay_ms",
            ErrorCode::Range,
        ),
        (
            json!({"reply": "a", "delay_ms": 600_001}),
            "delay_ms",
            ErrorCode::Range,
        ),
        (
            json!({"reply": "a", "delay_ms": 1e30}),
            "delay_ms",
            ErrorCode::Range,
        ),
        (
            json!({"reply": "a", "delay_ms": 1.5}),
            "delay_ms",
            ErrorCode::Type,
        ),
        (
            json!({"reply": "a", "delay_ms": "5"}),
            "delay_ms",
            ErrorCode::Type,
        ),
    ];
    for (step, path, code) in rows {
        let error = SimulatedStep::parse(&step).expect_err(&step.to_string());
        assert_eq!(
            (error.path.as_str(), error.code),
            (path, code),
            "{step}: {error}"
        );
        assert!(!error.message.is_empty());
    }
    // The bounds themselves are accepted.
    for delay_ms in [0, 600_000] {
        let step = SimulatedStep::parse(&json!({"reply": "a", "delay_ms": delay_ms})).unwrap();
        assert_eq!(step.delay_ms, delay_ms);
    }
}

/// A script's errors: one per bad step, paths from the script, ready to go under any
/// prefix as the API's field errors.
#[test]
fn bad_scripts_report_every_bad_step() {
    let errors = parse_script(&json!([
        {"reply": "fine"},
        {"reply": 1},
        {"hang": true},
        {"error": {"provider": "openai", "status": 42}},
        5,
    ]))
    .unwrap_err();
    let paths: Vec<&str> = errors.iter().map(|error| error.path.as_str()).collect();
    assert_eq!(paths, ["[1].reply", "[3].error.status", "[4]"]);
    let fields: Vec<String> = errors
        .iter()
        .map(|error| error.field_error("script").field)
        .collect();
    assert_eq!(
        fields,
        ["script[1].reply", "script[3].error.status", "script[4]"]
    );
    assert_eq!(
        errors[0].to_string(),
        "[1].reply: must be a string, not a number"
    );

    let not_an_array = parse_script(&json!({"reply": "a"})).unwrap_err();
    assert_eq!(not_an_array.len(), 1);
    assert_eq!(not_an_array[0].path, "");
    assert_eq!(not_an_array[0].field_error("script").field, "script");
}

/// A script serializes back to what was written, and a provider configuration with a
/// script round-trips through JSON; a bad step in a configuration names its field.
#[test]
fn scripts_round_trip_through_json() {
    let written = json!([
        {"reply": "Paris."},
        {"reply": "Par", "stop": "max_tokens", "delay_ms": 250},
        {"error": overloaded()},
        {"partial": "The capital", "error": {"provider": "openai", "transport": "connection_reset"}},
        {"hang": true, "delay_ms": 10},
    ]);
    let script = parse_script(&written).unwrap();
    assert_eq!(serde_json::to_value(&script).unwrap(), written);

    let config = ProviderConfig::simulated(script);
    let json_text = serde_json::to_string(&config).unwrap();
    let read_back: ProviderConfig = serde_json::from_str(&json_text).unwrap();
    assert_eq!(read_back, config);

    let bad = json!({"kind": "simulated", "family": "openai_compatible",
        "script": [{"reply": "ok"}, {"reply": "ok", "stop": "later"}]});
    let error = serde_json::from_value::<ProviderConfig>(bad).unwrap_err();
    assert!(error.to_string().starts_with("stop: must be"), "{error}");
}
