//! The key: read from its environment variable at call time, sent in the wire
//! format's header, and found nowhere else: not in evidence, not in the `Debug` of
//! the adapter, its configuration or the outcome, not even when the provider sends
//! it back (in an error body, a header, a stream's error event, an answer, or a
//! body cut at its cap part-way through it), nor in the answer's pieces as they
//! stream, when the key arrives split across them. A variable that is configured but
//! unusable fails the call before anything is sent. An agent CLI given a key
//! variable has its value scrubbed from everything it prints.
//!
//! One test in its own binary, because it sets environment variables: nothing else
//! runs in this process while it does.

use catalogue::Evidence;
use policy::ProviderKind;
use providers::mock::{MockProvider, MockResponse, MockStop, Pieces, ReceivedAuth};
use providers::{
    Adapter, CallOutcome, CallRequest, MAX_ERROR_BODY_BYTES, Message, ProviderConfig, StopReason,
    ToolPiece,
};

const ANTHROPIC_KEY: &str = "sk-ant-test-key-0123456789abcdef";
const OPENAI_KEY: &str = "sk-proj-test-key-fedcba9876543210";
const BAD_KEY: &str = "sk-bad-key\nwith-a-line-break";

fn request() -> CallRequest {
    CallRequest {
        model: "model-x".into(),
        max_tokens: 16,
        messages: vec![Message::user("Hi")],
        call_index: 0,
        client: None,
    }
}

/// What a row expects of the mock's view of the request.
enum Sent {
    /// Nothing reached the mock: the call failed with this evidence body.
    Nothing { body: &'static str },
    /// The request arrived carrying this credential (or none).
    Request { auth: Option<ReceivedAuth> },
}

fn auth(header: &str, bearer: bool, key: &str) -> Option<ReceivedAuth> {
    Some(ReceivedAuth {
        header: header.into(),
        bearer,
        credential_length: key.len(),
    })
}

#[test]
fn keys_come_from_the_environment_and_go_nowhere_else() {
    // SAFETY: this binary holds this one test, and no runtime or other thread exists
    // yet, so nothing reads the environment while it is written.
    unsafe {
        std::env::set_var("SWITCHBACK_TEST_ANTHROPIC_KEY", ANTHROPIC_KEY);
        std::env::set_var("SWITCHBACK_TEST_OPENAI_KEY", OPENAI_KEY);
        std::env::set_var("SWITCHBACK_TEST_EMPTY_KEY", "  ");
        std::env::set_var("SWITCHBACK_TEST_BAD_KEY", BAD_KEY);
        std::env::remove_var("SWITCHBACK_TEST_UNSET_KEY");
    }
    let rows: Vec<(ProviderKind, Option<&str>, Sent)> = vec![
        (
            ProviderKind::Anthropic,
            Some("SWITCHBACK_TEST_ANTHROPIC_KEY"),
            Sent::Request {
                auth: auth("x-api-key", false, ANTHROPIC_KEY),
            },
        ),
        (
            ProviderKind::Openai,
            Some("SWITCHBACK_TEST_OPENAI_KEY"),
            Sent::Request {
                auth: auth("authorization", true, OPENAI_KEY),
            },
        ),
        (
            ProviderKind::OpenaiCompatible,
            Some("SWITCHBACK_TEST_OPENAI_KEY"),
            Sent::Request {
                auth: auth("authorization", true, OPENAI_KEY),
            },
        ),
        (
            ProviderKind::OpenaiCompatible,
            None,
            Sent::Request { auth: None },
        ),
        (
            ProviderKind::Anthropic,
            Some("SWITCHBACK_TEST_UNSET_KEY"),
            Sent::Nothing {
                body: "the environment variable SWITCHBACK_TEST_UNSET_KEY that holds this provider's key is not set",
            },
        ),
        (
            ProviderKind::Openai,
            Some("SWITCHBACK_TEST_UNSET_KEY"),
            Sent::Nothing {
                body: "the environment variable SWITCHBACK_TEST_UNSET_KEY that holds this provider's key is not set",
            },
        ),
        (
            ProviderKind::Openai,
            Some("SWITCHBACK_TEST_EMPTY_KEY"),
            Sent::Nothing {
                body: "the environment variable SWITCHBACK_TEST_EMPTY_KEY that holds this provider's key is empty",
            },
        ),
        (
            ProviderKind::Anthropic,
            Some("SWITCHBACK_TEST_BAD_KEY"),
            Sent::Nothing {
                body: "the environment variable SWITCHBACK_TEST_BAD_KEY that holds this provider's key has characters an HTTP header cannot carry",
            },
        ),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        for (kind, variable, sent) in rows {
            let context = format!("{kind:?} {variable:?}");
            let mock = MockProvider::start().await;
            // An error answer, so the evidence holds everything the response had.
            mock.push(MockResponse::Error {
                status: 401,
                headers: vec![("x-request-id".into(), "req_1".into())],
                body: r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#.into(),
            });
            let config = ProviderConfig {
                api_key_env: variable.map(str::to_owned),
                ..mock.config(kind)
            };
            let adapter = Adapter::new(config, providers::http_client());
            let outcome = adapter.call(&request()).await;

            for shown in [
                format!("{adapter:?}"),
                format!("{:?}", adapter.config()),
                serde_json::to_string(adapter.config()).unwrap(),
                format!("{outcome:?}"),
            ] {
                for key in [ANTHROPIC_KEY, OPENAI_KEY, "sk-bad-key"] {
                    assert!(!shown.contains(key), "{context}: the key shows in {shown}");
                }
            }

            match sent {
                Sent::Nothing { body } => {
                    assert_eq!(mock.hits(), 0, "{context}: nothing may be sent");
                    assert_eq!(
                        outcome,
                        CallOutcome::failed(
                            Evidence::new(kind.default_family().as_str()).with_body(body)
                        ),
                        "{context}"
                    );
                }
                Sent::Request { auth } => {
                    assert_eq!(mock.hits(), 1, "{context}");
                    assert_eq!(mock.requests()[0].auth, auth, "{context}");
                    let CallOutcome::Failed { evidence, .. } = &outcome else {
                        panic!("{context}: expected the 401, got {outcome:?}");
                    };
                    assert_eq!(evidence.status, Some(401), "{context}");
                    assert_eq!(evidence.headers.get("x-request-id"), Some("req_1"));
                }
            }
        }

        // A provider that sends the key back: each response quotes it, and the
        // outcome holds `[redacted]` where it was.
        for (kind, variable, key) in [
            (ProviderKind::Anthropic, "SWITCHBACK_TEST_ANTHROPIC_KEY", ANTHROPIC_KEY),
            (ProviderKind::Openai, "SWITCHBACK_TEST_OPENAI_KEY", OPENAI_KEY),
        ] {
            for (response, expected) in echoing_responses(key) {
                let context = format!("{kind:?} {response:?}");
                let mock = MockProvider::start().await;
                mock.push(response);
                let config = ProviderConfig {
                    api_key_env: Some(variable.to_owned()),
                    ..mock.config(kind)
                };
                // The mock streams a text in three pieces, so the key it quotes
                // arrives split across them.
                let streamed = Pieces::default();
                let outcome = Adapter::new(config, providers::http_client())
                    .call_observed(&request(), &streamed)
                    .await;
                let pieces = streamed.pieces();
                let shown = format!("{outcome:?} {pieces:?}");
                for piece in [key, &key[key.len() - 12..], &key[..12]] {
                    assert!(!shown.contains(piece), "{context}: {piece} shows in {shown}");
                }
                let (CallOutcome::Answered { text, .. }
                | CallOutcome::Failed {
                    partial_output: text,
                    ..
                }) = &outcome;
                assert_eq!(pieces.concat(), *text, "{context}: streamed {pieces:?}");
                match (&outcome, expected) {
                    (CallOutcome::Answered { text, stop, .. }, Echoed::Answer(expected)) => {
                        assert_eq!(text, expected, "{context}");
                        assert_eq!(*stop, StopReason::End, "{context}");
                    }
                    (
                        CallOutcome::Failed {
                            evidence,
                            partial_output,
                        },
                        Echoed::Failure {
                            body,
                            header,
                            partial,
                        },
                    ) => {
                        let kept = evidence.body.as_deref().unwrap_or_default();
                        assert!(kept.ends_with(body), "{context}: {kept}");
                        assert_eq!(evidence.headers.get("x-echo"), header, "{context}");
                        assert_eq!(partial_output, partial, "{context}");
                    }
                    (outcome, expected) => panic!("{context}: {outcome:?}, expected {expected:?}"),
                }
            }
        }

        // A tool call whose arguments quote the key, split across three
        // pieces: no piece passed on holds it, and they join into the
        // arguments the outcome holds, the key redacted.
        for (kind, variable, key) in [
            (ProviderKind::Anthropic, "SWITCHBACK_TEST_ANTHROPIC_KEY", ANTHROPIC_KEY),
            (ProviderKind::Openai, "SWITCHBACK_TEST_OPENAI_KEY", OPENAI_KEY),
        ] {
            let arguments = format!(r#"{{"token": "{key}"}}"#);
            let (first, rest) = arguments.split_at(20);
            let (second, third) = rest.split_at(10);
            let mock = MockProvider::start().await;
            mock.push(tool_call_events(kind, [first, second, third]));
            let config = ProviderConfig {
                api_key_env: Some(variable.to_owned()),
                ..mock.config(kind)
            };
            let streamed = Pieces::default();
            let outcome = Adapter::new(config, providers::http_client())
                .call_observed(&request(), &streamed)
                .await;
            let pieces = streamed.tool_pieces();
            let shown = format!("{outcome:?} {pieces:?}");
            for piece in [key, &key[key.len() - 12..], &key[..12]] {
                assert!(!shown.contains(piece), "{kind:?}: {piece} shows in {shown}");
            }
            let joined: String = pieces
                .iter()
                .filter_map(|piece| match piece {
                    ToolPiece::Arguments { json, .. } => Some(json.as_str()),
                    ToolPiece::Begin { .. } => None,
                })
                .collect();
            assert_eq!(joined, r#"{"token": "[redacted]"}"#, "{kind:?}: {pieces:?}");
            let CallOutcome::Answered { tool_calls, .. } = &outcome else {
                panic!("{kind:?}: {outcome:?}");
            };
            assert_eq!(tool_calls[0].arguments, joined, "{kind:?}");
        }

        // An agent CLI given a key variable: its value, printed back in an
        // answer, an error event and stderr, is scrubbed from all of them.
        let dir = tempfile::tempdir().unwrap();
        let program = dir.path().join("cli");
        std::fs::write(
            &program,
            "#!/bin/sh\ncat > /dev/null\n\
             printf '{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"key %s\"}]}}\\n' \"$SWITCHBACK_TEST_ANTHROPIC_KEY\"\n\
             printf '{\"type\":\"result\",\"is_error\":true,\"result\":\"bad key %s\"}\\n' \"$SWITCHBACK_TEST_ANTHROPIC_KEY\"\n\
             echo \"stderr $SWITCHBACK_TEST_ANTHROPIC_KEY $SWITCHBACK_TEST_BAD_KEY\" >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&program, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let mut command = policy::CliPreset::ClaudeCode.command();
        command[0] = program.display().to_string();
        let config = ProviderConfig {
            kind: ProviderKind::Cli,
            cli: Some(policy::CliConfig {
                command,
                env: vec![
                    "SWITCHBACK_TEST_ANTHROPIC_KEY".to_owned(),
                    "SWITCHBACK_TEST_BAD_KEY".to_owned(),
                ],
                ..policy::CliConfig::preset(policy::CliPreset::ClaudeCode)
            }),
            ..ProviderConfig::simulated(Vec::new())
        };
        let streamed = Pieces::default();
        let outcome = Adapter::new(config, providers::http_client())
            .call_observed(&request(), &streamed)
            .await;
        let shown = format!("{outcome:?} {:?}", streamed.pieces());
        assert!(!shown.contains(ANTHROPIC_KEY), "{shown}");
        assert!(
            !shown.contains("sk-bad-key") && !shown.contains("with-a-line-break"),
            "a value no header carries is taken out too: {shown}"
        );
        let CallOutcome::Failed { evidence, partial_output } = &outcome else {
            panic!("{outcome:?}");
        };
        assert_eq!(partial_output, "key [redacted]");
        let output = evidence.output.as_deref().unwrap();
        assert!(
            output.contains("bad key [redacted]") && output.contains("stderr [redacted]"),
            "{output}"
        );
    });
}

/// A streamed answer of one tool call whose arguments come in `pieces`, in
/// `kind`'s protocol.
fn tool_call_events(kind: ProviderKind, pieces: [&str; 3]) -> MockResponse {
    let quoted = |text: &str| serde_json::to_string(text).unwrap();
    let chunks = match kind {
        ProviderKind::Anthropic => {
            let mut chunks = vec![
                "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"login\",\"input\":{}}}\n\n".to_owned(),
            ];
            for piece in pieces {
                chunks.push(format!(
                    "event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":{}}}}}\n\n",
                    quoted(piece)
                ));
            }
            chunks.push("event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"}}\n\n".to_owned());
            chunks.push("event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n".to_owned());
            chunks
        }
        _ => {
            let mut chunks = vec![
                "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"login\",\"arguments\":\"\"}}]}}]}\n\n".to_owned(),
            ];
            for piece in pieces {
                chunks.push(format!(
                    "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":0,\"function\":{{\"arguments\":{}}}}}]}}}}]}}\n\n",
                    quoted(piece)
                ));
            }
            chunks.push("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n".to_owned());
            chunks.push("data: [DONE]\n\n".to_owned());
            chunks
        }
    };
    MockResponse::Events {
        chunks,
        end: providers::mock::MockEnd::Finish,
    }
}

/// What a call to an echoing provider comes back with, the key scrubbed.
#[derive(Debug)]
enum Echoed {
    /// The answer's text.
    Answer(&'static str),
    /// A failure: how the evidence body ends, the `x-echo` header, the partial output.
    Failure {
        body: &'static str,
        header: Option<&'static str>,
        partial: &'static str,
    },
}

/// Responses quoting `key`, and what each comes back as.
fn echoing_responses(key: &str) -> Vec<(MockResponse, Echoed)> {
    // Cut at the cap ten characters into the key.
    let filler = "x".repeat(MAX_ERROR_BODY_BYTES - 10);
    vec![
        (
            MockResponse::Error {
                status: 401,
                headers: vec![("x-echo".into(), format!("key={key}"))],
                body: format!(r#"{{"error":{{"message":"Incorrect API key provided: {key}"}}}}"#),
            },
            Echoed::Failure {
                body: r#"{"error":{"message":"Incorrect API key provided: [redacted]"}}"#,
                header: Some("key=[redacted]"),
                partial: "",
            },
        ),
        (
            MockResponse::Error {
                status: 502,
                headers: Vec::new(),
                body: format!("{filler}{key}"),
            },
            Echoed::Failure {
                body: "xxx[redacted]",
                header: None,
                partial: "",
            },
        ),
        (
            MockResponse::StreamError {
                text_before: format!("You sent {key}, and"),
                event: format!(
                    r#"{{"type":"error","error":{{"type":"overloaded_error","message":"credential {key}"}}}}"#
                ),
            },
            Echoed::Failure {
                body: r#""message":"credential [redacted]"}}"#,
                header: None,
                partial: "You sent [redacted], and",
            },
        ),
        (
            MockResponse::Reply {
                text: format!("Your key is {key}."),
                stop: MockStop::End,
            },
            Echoed::Answer("Your key is [redacted]."),
        ),
    ]
}
