//! The HTTP adapters against the loopback mock provider, over real sockets: one table
//! of cases run for each wire format (Anthropic, OpenAI, OpenAI-compatible), each row
//! checked field by field, and failures run through the catalogue to show what the
//! engine will make of them.

use std::sync::Arc;

use catalogue::{Evidence, Transport};
use policy::{ProviderKind, SemanticCode};
use providers::mock::{MockProvider, MockResponse, MockStop, Pieces};
use providers::{
    Adapter, CallOutcome, CallRequest, ClientRequest, MAX_ERROR_BODY_BYTES, Message,
    ProviderConfig, StopReason, Timeouts, Wire,
};
use serde_json::json;

/// 2026-11-30T02:00:00Z, the catalogue's "now" for the hints in these rows.
const NOW_MS: i64 = 1_796_004_000_000;

/// Timeouts small enough that a row about a timeout takes a fifth of a second; the
/// timeout itself is what such a row tests, so it waits for it.
const SHORT: Timeouts = Timeouts {
    connect_ms: 10_000,
    first_byte_ms: 200,
    idle_ms: 200,
};

const KINDS: [ProviderKind; 3] = [
    ProviderKind::Anthropic,
    ProviderKind::Openai,
    ProviderKind::OpenaiCompatible,
];

fn request() -> CallRequest {
    CallRequest {
        model: "model-x".into(),
        max_tokens: 64,
        messages: vec![
            Message::user("What is the capital of France?"),
            Message::assistant("Let me think."),
            Message::user("Go on."),
        ],
        call_index: 0,
        client: None,
    }
}

/// Where a row's call goes.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// The mock, over plain HTTP.
    Mock,
    /// `https://` to the plain-HTTP mock: the TLS handshake meets an HTTP answer.
    MockOverTls,
    /// A loopback port that was bound and released: nothing listens.
    ClosedPort,
}

/// What a row expects.
#[derive(Debug)]
enum Expect {
    Answered {
        text: &'static str,
        stop: StopReason,
    },
    Failed {
        status: Option<u16>,
        /// Headers the evidence must hold (it holds every response header).
        headers: Vec<(&'static str, &'static str)>,
        body: Option<String>,
        transport: Option<Transport>,
        partial_output: &'static str,
        /// What the catalogue makes of the evidence.
        code: SemanticCode,
    },
}

struct Case {
    name: &'static str,
    target: Target,
    response: Option<MockResponse>,
    timeouts: Timeouts,
    expect: Expect,
}

fn case(name: &'static str, response: MockResponse, expect: Expect) -> Case {
    Case {
        name,
        target: Target::Mock,
        response: Some(response),
        timeouts: Timeouts::default(),
        expect,
    }
}

fn failed(
    status: Option<u16>,
    body: Option<&str>,
    transport: Option<Transport>,
    partial_output: &'static str,
    code: SemanticCode,
) -> Expect {
    Expect::Failed {
        status,
        headers: Vec::new(),
        body: body.map(str::to_owned),
        transport,
        partial_output,
        code,
    }
}

/// The rows for one wire format: the same cases, in that format's words.
fn cases(kind: ProviderKind) -> Vec<Case> {
    let anthropic = kind == ProviderKind::Anthropic;
    let rate_limit_body = if anthropic {
        r#"{"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account's rate limit. Please try again later."}}"#
    } else {
        r#"{"error":{"message":"Rate limit reached for model-x in organization org-x on requests per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms.","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#
    };
    let rate_limit_headers: Vec<(&str, &str)> = if anthropic {
        vec![
            ("retry-after", "45"),
            ("anthropic-ratelimit-requests-remaining", "0"),
            ("anthropic-ratelimit-requests-reset", "2026-11-30T02:00:45Z"),
            ("request-id", "req_mock"),
        ]
    } else {
        vec![
            ("retry-after", "1"),
            ("x-ratelimit-remaining-requests", "0"),
            ("x-ratelimit-reset-requests", "120ms"),
            ("x-request-id", "req_mock"),
        ]
    };
    let (overloaded_status, overloaded_body) = if anthropic {
        (
            529,
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
        )
    } else {
        (
            503,
            r#"{"error":{"message":"The engine is currently overloaded, please try again later.","type":"server_error","param":null,"code":null}}"#,
        )
    };
    let (stream_error, stream_error_code) = if anthropic {
        (
            r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
            SemanticCode::Overloaded,
        )
    } else {
        (
            r#"{"error":{"message":"The server had an error while processing your request. Sorry about that!","type":"server_error","param":null,"code":null}}"#,
            SemanticCode::ServerError,
        )
    };

    let with_headers =
        |status, body: &str, headers: Vec<(&'static str, &'static str)>, code| Expect::Failed {
            status: Some(status),
            headers,
            body: Some(body.to_owned()),
            transport: None,
            partial_output: "",
            code,
        };
    let owned = |headers: &[(&str, &str)]| -> Vec<(String, String)> {
        headers
            .iter()
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()))
            .collect()
    };

    vec![
        case(
            "a reply streamed in chunks is joined",
            MockResponse::Reply {
                text: "The capital of France is Paris.".into(),
                stop: MockStop::End,
            },
            Expect::Answered {
                text: "The capital of France is Paris.",
                stop: StopReason::End,
            },
        ),
        case(
            "max_tokens / length stops the answer short",
            MockResponse::Reply {
                text: "The capital of".into(),
                stop: MockStop::MaxTokens,
            },
            Expect::Answered {
                text: "The capital of",
                stop: StopReason::MaxTokens,
            },
        ),
        case(
            "an empty reply is still an answer",
            MockResponse::Reply {
                text: String::new(),
                stop: MockStop::End,
            },
            Expect::Answered {
                text: "",
                stop: StopReason::End,
            },
        ),
        case(
            "429 keeps status, every header and the body: rate_limited",
            MockResponse::Error {
                status: 429,
                headers: owned(&rate_limit_headers),
                body: rate_limit_body.into(),
            },
            with_headers(
                429,
                rate_limit_body,
                rate_limit_headers.clone(),
                SemanticCode::RateLimited,
            ),
        ),
        case(
            "529 (Anthropic) / 503 (OpenAI) with an overloaded body: overloaded",
            MockResponse::Error {
                status: overloaded_status,
                headers: Vec::new(),
                body: overloaded_body.into(),
            },
            with_headers(
                overloaded_status,
                overloaded_body,
                vec![("content-type", "application/json")],
                SemanticCode::Overloaded,
            ),
        ),
        case(
            "a 200 that is JSON, not a stream, fails with its body",
            MockResponse::Error {
                status: 200,
                headers: Vec::new(),
                body: stream_error.into(),
            },
            failed(Some(200), Some(stream_error), None, "", stream_error_code),
        ),
        case(
            "an SSE error event before the first token: partial output empty",
            MockResponse::StreamError {
                text_before: String::new(),
                event: stream_error.into(),
            },
            failed(Some(200), Some(stream_error), None, "", stream_error_code),
        ),
        case(
            "an SSE error event after text: the text is the partial output (unsafe)",
            MockResponse::StreamError {
                text_before: "Once upon a time".into(),
                event: stream_error.into(),
            },
            failed(
                Some(200),
                Some(stream_error),
                None,
                "Once upon a time",
                stream_error_code,
            ),
        ),
        case(
            "the connection dropped mid-stream: closed_early, with the partial output",
            MockResponse::CloseMidStream {
                text_before: "Once upon".into(),
            },
            failed(
                Some(200),
                None,
                Some(Transport::ClosedEarly),
                "Once upon",
                SemanticCode::Network,
            ),
        ),
        Case {
            timeouts: SHORT,
            ..case(
                "no headers within first_byte_ms: timeout",
                MockResponse::HangBeforeHeaders,
                failed(
                    None,
                    None,
                    Some(Transport::Timeout),
                    "",
                    SemanticCode::Timeout,
                ),
            )
        },
        Case {
            timeouts: SHORT,
            ..case(
                "headers but no event within first_byte_ms: timeout",
                MockResponse::HangAfterHeaders,
                failed(
                    Some(200),
                    None,
                    Some(Transport::Timeout),
                    "",
                    SemanticCode::Timeout,
                ),
            )
        },
        Case {
            timeouts: SHORT,
            ..case(
                "text, then no event within idle_ms: timeout, with the partial output",
                MockResponse::StallMidStream {
                    text_before: "Once upon".into(),
                },
                failed(
                    Some(200),
                    None,
                    Some(Transport::Timeout),
                    "Once upon",
                    SemanticCode::Timeout,
                ),
            )
        },
        Case {
            name: "nothing listening: connection_refused",
            target: Target::ClosedPort,
            response: None,
            timeouts: Timeouts::default(),
            expect: failed(
                None,
                None,
                Some(Transport::ConnectionRefused),
                "",
                SemanticCode::Network,
            ),
        },
        Case {
            name: "https to a plain-HTTP server: tls",
            target: Target::MockOverTls,
            response: None,
            timeouts: Timeouts::default(),
            expect: failed(
                None,
                None,
                Some(Transport::Tls),
                "",
                SemanticCode::ProviderMisconfigured,
            ),
        },
    ]
}

/// Awaits `future`, failing the test instead of hanging if it never completes (a
/// safety net, not a wait: each awaited event is signalled as it happens).
async fn within_ten_seconds<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(std::time::Duration::from_secs(10), future)
        .await
        .expect("the event never came")
}

/// A loopback port with nothing listening on it.
async fn closed_port() -> u16 {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    port
}

/// Every mismatch between a row's expectation and the outcome, as lines.
fn mismatches(kind: ProviderKind, expect: &Expect, outcome: &CallOutcome) -> Vec<String> {
    let mut found = Vec::new();
    match (expect, outcome) {
        (
            Expect::Answered { text, stop },
            CallOutcome::Answered {
                text: got,
                stop: got_stop,
                ..
            },
        ) => {
            if text != got {
                found.push(format!("text: expected {text:?}"));
            }
            if stop != got_stop {
                found.push(format!("stop: expected {stop:?}"));
            }
        }
        (
            Expect::Failed {
                status,
                headers,
                body,
                transport,
                partial_output,
                code,
            },
            CallOutcome::Failed {
                evidence,
                partial_output: got_partial,
            },
        ) => {
            if evidence.provider != kind.default_family().as_str() {
                found.push(format!(
                    "provider: expected {}",
                    kind.default_family().as_str()
                ));
            }
            if evidence.status != *status {
                found.push(format!("status: expected {status:?}"));
            }
            for (name, value) in headers {
                if evidence.headers.get(name) != Some(value) {
                    found.push(format!("header {name}: expected {value:?}"));
                }
            }
            // Every response header is kept: hyper always sends `date`.
            if status.is_some() && evidence.headers.get("date").is_none() {
                found.push("header date: expected one".into());
            }
            if evidence.body != *body {
                found.push(format!("body: expected {body:?}"));
            }
            if evidence.transport != *transport {
                found.push(format!("transport: expected {transport:?}"));
            }
            if evidence.observed_at_ms.is_some() {
                found.push("observed_at_ms: expected none (the engine stamps it)".into());
            }
            if got_partial != partial_output {
                found.push(format!("partial_output: expected {partial_output:?}"));
            }
            let verdict = catalogue::classify(evidence, NOW_MS);
            if verdict.classification.code != *code {
                found.push(format!(
                    "catalogue code: expected {code:?}, got {:?} (rule {})",
                    verdict.classification.code, verdict.rule
                ));
            }
        }
        _ => found.push(format!("expected {expect:?}")),
    }
    found
}

/// The pieces an observer was passed join into the answer's text, or the output
/// streamed before a failure; none is empty.
fn streamed_mismatch(pieces: &Pieces, outcome: &CallOutcome) -> Option<String> {
    let pieces = pieces.pieces();
    let streamed = match outcome {
        CallOutcome::Answered { text, .. } => text,
        CallOutcome::Failed { partial_output, .. } => partial_output,
    };
    (pieces.concat() != *streamed || pieces.iter().any(String::is_empty))
        .then(|| format!("the observer was passed {pieces:?}, the outcome streamed {streamed:?}"))
}

/// Every row through `call_observed` too: what the observer is passed as the
/// answer streams joins into the outcome's text.
#[tokio::test]
async fn each_wire_format_answers_and_fails_with_evidence() {
    let client = providers::http_client();
    let mut report = Vec::new();
    for kind in KINDS {
        for case in cases(kind) {
            let mock = MockProvider::start().await;
            if let Some(response) = case.response.clone() {
                mock.push(response);
            }
            let base_url = match case.target {
                Target::Mock => mock.base_url(),
                Target::MockOverTls => format!("https://{}", mock.address()),
                Target::ClosedPort => format!("http://127.0.0.1:{}", closed_port().await),
            };
            let config = ProviderConfig {
                base_url,
                timeouts: case.timeouts,
                ..mock.config(kind)
            };
            let pieces = Pieces::default();
            let outcome = Adapter::new(config, client.clone())
                .call_observed(&request(), &pieces)
                .await;
            let mut found = mismatches(kind, &case.expect, &outcome);
            found.extend(streamed_mismatch(&pieces, &outcome));
            if !found.is_empty() {
                report.push(format!(
                    "{} / {}:\n  {}\n  got {outcome:#?}",
                    kind.as_str(),
                    case.name,
                    found.join("\n  ")
                ));
            }
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n\n"));
}

/// What each wire format sends: path, fixed headers, no key when none is configured,
/// and the body `{"model","max_tokens","messages","stream":true}`.
#[tokio::test]
async fn requests_have_each_wire_formats_shape() {
    let client = providers::http_client();
    for kind in KINDS {
        let mock = MockProvider::start().await;
        let adapter = Adapter::new(mock.config(kind), client.clone());
        let outcome = adapter.call(&request()).await;
        assert_eq!(
            outcome,
            CallOutcome::Answered {
                text: "ok".into(),
                stop: StopReason::End,
                tool_calls: vec![],
            },
            "{kind:?}: an empty queue replies ok"
        );
        let received = mock.requests();
        assert_eq!(received.len(), 1);
        let received = &received[0];
        let expected_path = match kind {
            ProviderKind::Anthropic => "/v1/messages",
            _ => "/v1/chat/completions",
        };
        assert_eq!(received.path, expected_path, "{kind:?}");
        assert_eq!(
            received.header("content-type"),
            Some("application/json"),
            "{kind:?}"
        );
        assert_eq!(
            received.header("anthropic-version"),
            (kind == ProviderKind::Anthropic).then_some("2023-06-01"),
            "{kind:?}"
        );
        assert_eq!(
            received.auth, None,
            "{kind:?}: no key configured, none sent"
        );
        assert_eq!(
            received.body,
            json!({
                "model": "model-x",
                "max_tokens": 64,
                "messages": [
                    {"role": "user", "content": "What is the capital of France?"},
                    {"role": "assistant", "content": "Let me think."},
                    {"role": "user", "content": "Go on."},
                ],
                "stream": true,
            }),
            "{kind:?}"
        );
    }
}

/// A gateway client's own request reaches a candidate of its protocol as sent (the
/// candidate's model, streaming), and one of the other protocol translated; what
/// a candidate cannot carry is refused before anything is sent.
#[tokio::test]
async fn a_clients_request_is_passed_through_or_translated() {
    let client = providers::http_client();
    let tools = json!([{"type": "function", "function": {"name": "weather", "parameters": {}}}]);
    let with_tools = ClientRequest {
        wire: Wire::OpenAi,
        body: json!({"model": "fast", "max_tokens": 20, "tools": tools,
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}),
    };
    let text = ClientRequest {
        wire: Wire::OpenAi,
        body: json!({"model": "fast", "max_tokens": 20,
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]}),
    };
    let call = |client_request: &ClientRequest| CallRequest {
        client: Some(client_request.clone()),
        ..request()
    };
    // The same protocol: the body as the client sent it, tools and all.
    let mock = MockProvider::start().await;
    let adapter = Adapter::new(mock.config(ProviderKind::Openai), client.clone());
    assert_eq!(adapter.carries(&call(&with_tools)), Ok(()));
    assert!(matches!(
        adapter.call(&call(&with_tools)).await,
        CallOutcome::Answered { .. }
    ));
    assert_eq!(
        mock.requests()[0].body,
        json!({"model": "model-x", "max_tokens": 20, "stream": true, "tools": tools,
            "stream_options": {"include_usage": true},
            "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})
    );
    // The other protocol: text translates; tools do not, and nothing is sent.
    let mock = MockProvider::start().await;
    let adapter = Adapter::new(mock.config(ProviderKind::Anthropic), client.clone());
    assert!(matches!(
        adapter.call(&call(&text)).await,
        CallOutcome::Answered { .. }
    ));
    assert_eq!(
        mock.requests()[0].body,
        json!({"model": "model-x", "max_tokens": 20, "stream": true, "system": "Be brief.",
            "messages": [{"role": "user", "content": "Hi"}]})
    );
    let refused = adapter.carries(&call(&with_tools)).unwrap_err();
    assert_eq!(refused.field, "tools");
    let CallOutcome::Failed { evidence, .. } = adapter.call(&call(&with_tools)).await else {
        panic!("a request that cannot be carried fails");
    };
    assert_eq!(
        evidence.body.as_deref(),
        Some(format!("not sent: {refused}").as_str())
    );
    assert_eq!(mock.hits(), 1, "only the text request was sent");
    // A simulated candidate carries text only.
    let simulated = Adapter::new(ProviderConfig::simulated(Vec::new()), client.clone());
    assert_eq!(simulated.carries(&call(&text)), Ok(()));
    assert_eq!(
        simulated.carries(&call(&with_tools)).unwrap_err().field,
        "tools"
    );
    // A task's request is always carried.
    assert_eq!(simulated.carries(&request()), Ok(()));
}

/// An error body is kept up to 64 KiB, whatever its length.
#[tokio::test]
async fn error_bodies_are_capped() {
    let mock = MockProvider::start().await;
    let long_body = "x".repeat(MAX_ERROR_BODY_BYTES * 2);
    mock.push(MockResponse::Error {
        status: 500,
        headers: Vec::new(),
        body: long_body,
    });
    let outcome = Adapter::new(mock.config(ProviderKind::Openai), providers::http_client())
        .call(&request())
        .await;
    let CallOutcome::Failed { evidence, .. } = outcome else {
        panic!("expected a failure, got {outcome:?}");
    };
    assert_eq!(evidence.status, Some(500));
    assert_eq!(
        evidence.body.map(|body| body.len()),
        Some(MAX_ERROR_BODY_BYTES)
    );
}

/// Dropping an in-flight call future closes its connection: the mock sees its client
/// go away, before the headers, after them, and mid-stream, for both wire formats.
/// The same holds when the adapter gives up on a timeout.
#[tokio::test]
async fn a_dropped_call_closes_its_connection() {
    let hangs = [
        MockResponse::HangBeforeHeaders,
        MockResponse::HangAfterHeaders,
        MockResponse::StallMidStream {
            text_before: "Once".into(),
        },
    ];
    let client = providers::http_client();
    for kind in [ProviderKind::Anthropic, ProviderKind::Openai] {
        for hang in &hangs {
            let mock = MockProvider::start().await;
            mock.push(hang.clone());
            let adapter = Adapter::new(mock.config(kind), client.clone());
            let call = tokio::spawn(async move { adapter.call(&request()).await });
            within_ten_seconds(mock.wait_for_hits(1)).await;
            call.abort();
            assert!(call.await.unwrap_err().is_cancelled());
            // Returns only once hyper has dropped the response: the connection closed.
            within_ten_seconds(mock.wait_for_abandoned(1)).await;

            let mock = MockProvider::start().await;
            mock.push(hang.clone());
            let config = ProviderConfig {
                timeouts: SHORT,
                ..mock.config(kind)
            };
            let outcome = Adapter::new(config, client.clone()).call(&request()).await;
            assert!(
                matches!(&outcome, CallOutcome::Failed { evidence, .. } if evidence.transport == Some(Transport::Timeout)),
                "{kind:?} {hang:?}: {outcome:?}"
            );
            within_ten_seconds(mock.wait_for_abandoned(1)).await;
        }
    }
}

/// A name that does not resolve: `dns`. The resolver here fails every name (reqwest
/// wraps any resolver's error alike), so no query leaves the machine.
#[tokio::test]
async fn an_unresolvable_host_is_dns() {
    struct NoNames;
    impl providers::reqwest::dns::Resolve for NoNames {
        fn resolve(
            &self,
            name: providers::reqwest::dns::Name,
        ) -> providers::reqwest::dns::Resolving {
            let message = format!("no address for {}", name.as_str());
            Box::pin(async move { Err(message.into()) })
        }
    }
    let client = providers::http_client_builder()
        .dns_resolver(Arc::new(NoNames))
        .build()
        .unwrap();
    for kind in [ProviderKind::Anthropic, ProviderKind::Openai] {
        let config = ProviderConfig {
            kind,
            family: kind.default_family(),
            base_url: "http://provider.invalid".into(),
            api_key_env: None,
            timeouts: Timeouts::default(),
            script: Vec::new(),
            cli: None,
        };
        let outcome = Adapter::new(config, client.clone()).call(&request()).await;
        assert_eq!(
            outcome,
            CallOutcome::failed(
                Evidence::new(kind.default_family().as_str()).with_transport(Transport::Dns)
            ),
            "{kind:?}"
        );
    }
}

/// A provider whose connect timeout differs from the shared client's still works
/// (it gets a client of its own).
#[tokio::test]
async fn a_provider_with_its_own_connect_timeout_answers() {
    let mock = MockProvider::start().await;
    let config = ProviderConfig {
        timeouts: Timeouts {
            connect_ms: 1_234,
            ..Timeouts::default()
        },
        ..mock.config(ProviderKind::Anthropic)
    };
    let outcome = Adapter::new(config, providers::http_client())
        .call(&request())
        .await;
    assert!(
        matches!(outcome, CallOutcome::Answered { .. }),
        "{outcome:?}"
    );
}

fn sse(name: &str, data: &str) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn data(data: &str) -> String {
    format!("data: {data}\n\n")
}

fn openai_text(text: &str, finish_reason: Option<&str>) -> String {
    data(
        &json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish_reason}]})
            .to_string(),
    )
}

fn anthropic_text(text: &str) -> String {
    sse(
        "content_block_delta",
        &json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}})
            .to_string(),
    )
}

/// How streams end short of, or without, their usual terminal event: OpenAI's answer
/// is complete at its `finish_reason`, Anthropic's only at `message_stop`.
#[tokio::test]
async fn streams_end_where_their_protocol_says() {
    use providers::mock::MockEnd;
    let anthropic_stop = |reason: &str| {
        sse(
            "message_delta",
            &json!({"type": "message_delta", "delta": {"stop_reason": reason}}).to_string(),
        )
    };
    let message_stop = sse("message_stop", r#"{"type":"message_stop"}"#);
    let rows: Vec<(&str, ProviderKind, Vec<String>, MockEnd, Expect)> = vec![
        (
            "openai: finish_reason, then the body ends without [DONE]: answered",
            ProviderKind::Openai,
            vec![openai_text("Hi", None), openai_text("!", Some("stop"))],
            MockEnd::Finish,
            Expect::Answered {
                text: "Hi!",
                stop: StopReason::End,
            },
        ),
        (
            "openai: finish_reason length, then silence past idle_ms: answered, truncated",
            ProviderKind::Openai,
            vec![openai_text("Hi", Some("length"))],
            MockEnd::Stall,
            Expect::Answered {
                text: "Hi",
                stop: StopReason::MaxTokens,
            },
        ),
        (
            "openai: finish_reason, then the connection drops: answered",
            ProviderKind::OpenaiCompatible,
            vec![openai_text("Hi", Some("stop"))],
            MockEnd::Close,
            Expect::Answered {
                text: "Hi",
                stop: StopReason::End,
            },
        ),
        (
            "openai: [DONE] without a finish_reason: answered, ended",
            ProviderKind::Openai,
            vec![
                ": keep-alive comment\n\n".into(),
                openai_text("Hi", None),
                data(r#"{"choices":[],"usage":{"total_tokens":5}}"#),
                data("[DONE]"),
            ],
            MockEnd::Finish,
            Expect::Answered {
                text: "Hi",
                stop: StopReason::End,
            },
        ),
        (
            "openai: the body ends before any finish: closed_early with the text",
            ProviderKind::Openai,
            vec![openai_text("Hi", None)],
            MockEnd::Finish,
            failed(
                Some(200),
                None,
                Some(Transport::ClosedEarly),
                "Hi",
                SemanticCode::Network,
            ),
        ),
        (
            "openai: a chunk that is not JSON fails with it as the body",
            ProviderKind::Openai,
            vec![openai_text("Hi", None), data("<html>oops</html>")],
            MockEnd::Finish,
            failed(
                Some(200),
                Some("<html>oops</html>"),
                None,
                "Hi",
                SemanticCode::Unknown,
            ),
        ),
        (
            "anthropic: a stop_reason, then the body ends without message_stop: closed_early",
            ProviderKind::Anthropic,
            vec![anthropic_text("Hi"), anthropic_stop("end_turn")],
            MockEnd::Finish,
            failed(
                Some(200),
                None,
                Some(Transport::ClosedEarly),
                "Hi",
                SemanticCode::Network,
            ),
        ),
        (
            "anthropic: message_stop without a stop_reason: answered, ended",
            ProviderKind::Anthropic,
            vec![anthropic_text("Hi"), message_stop.clone()],
            MockEnd::Finish,
            Expect::Answered {
                text: "Hi",
                stop: StopReason::End,
            },
        ),
        (
            "anthropic: events named only in their data, and unknown events, read",
            ProviderKind::Anthropic,
            vec![
                sse("brand_new_event", r#"{"type":"brand_new_event"}"#),
                data(
                    r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}"#,
                ),
                data(r#"{"type":"message_delta","delta":{"stop_reason":"tool_use"}}"#),
                data(r#"{"type":"message_stop"}"#),
            ],
            MockEnd::Finish,
            Expect::Answered {
                text: "Hi",
                stop: StopReason::Other("tool_use".into()),
            },
        ),
        (
            "anthropic: an error event whose data is not JSON still fails with it",
            ProviderKind::Anthropic,
            vec![anthropic_text("Hi"), sse("error", "upstream went away")],
            MockEnd::Finish,
            failed(
                Some(200),
                Some("upstream went away"),
                None,
                "Hi",
                SemanticCode::Unknown,
            ),
        ),
    ];
    let client = providers::http_client();
    let mut report = Vec::new();
    for (name, kind, chunks, end, expect) in rows {
        let mock = MockProvider::start().await;
        mock.push(MockResponse::Events { chunks, end });
        let config = ProviderConfig {
            timeouts: SHORT,
            ..mock.config(kind)
        };
        let outcome = Adapter::new(config, client.clone()).call(&request()).await;
        let found = mismatches(kind, &expect, &outcome);
        if !found.is_empty() {
            report.push(format!(
                "{name}:\n  {}\n  got {outcome:#?}",
                found.join("\n  ")
            ));
        }
    }
    assert!(report.is_empty(), "{}", report.join("\n\n"));
}
