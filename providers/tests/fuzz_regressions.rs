//! Crashes of the stream reading, kept as regular tests beside the fuzz target that
//! covers them (`fuzz/fuzz_targets/provider_stream.rs`, run by `scripts/fuzz`).
//!
//! A body that opens with a UTF-8 byte-order mark panicked inside eventsource-stream
//! 0.2.3, which slices one byte off for a three-byte mark
//! (jpopesculian/eventsource-stream#10), and the call's task died with it: found while
//! writing the fuzz target. The mark is now stripped before the SSE parser sees the
//! body, once, as the SSE format says (`wire::events`).

use policy::ProviderKind;
use providers::mock::{MockEnd, MockProvider, MockResponse};
use providers::{
    Adapter, CallOutcome, CallRequest, Message, ProviderConfig, StopReason, StreamEnd,
    StreamReading, Wire, read_stream_chunks,
};

const BOM: &str = "\u{feff}";
const OPENAI_REPLY: &str = "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
const ANTHROPIC_REPLY: &str = "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"Hi\"}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

fn finished(text: &str, stop: Option<StopReason>) -> StreamReading {
    StreamReading {
        text: text.to_owned(),
        stop,
        tool_calls: Vec::new(),
        end: StreamEnd::Finished,
    }
}

/// The smallest bodies that panicked: the mark alone, and the mark before anything.
#[test]
fn a_byte_order_mark_alone_does_not_panic() {
    for wire in [Wire::Anthropic, Wire::OpenAi] {
        for body in [BOM.to_owned(), format!("{BOM}d")] {
            let reading = read_stream_chunks(wire, [body.as_bytes()]);
            assert_eq!(reading.end, StreamEnd::Closed, "{wire:?} {body:?}");
        }
    }
}

/// One leading mark is stripped, wherever chunks split it, and the first event is read.
#[test]
fn a_leading_byte_order_mark_is_stripped_wherever_it_is_split() {
    let rows = [
        (
            Wire::OpenAi,
            OPENAI_REPLY,
            finished("Hi", Some(StopReason::End)),
        ),
        (Wire::Anthropic, ANTHROPIC_REPLY, finished("Hi", None)),
    ];
    for (wire, reply, expected) in rows {
        let body = format!("{BOM}{reply}");
        let bytes = body.as_bytes();
        assert_eq!(
            read_stream_chunks(wire, [bytes]),
            expected,
            "{wire:?} whole"
        );
        assert_eq!(
            read_stream_chunks(wire, bytes.chunks(1)),
            expected,
            "{wire:?} byte by byte"
        );
        for cut in 0..=BOM.len() + 1 {
            let (first, rest) = bytes.split_at(cut);
            assert_eq!(
                read_stream_chunks(wire, [first, rest]),
                expected,
                "{wire:?} cut at {cut}"
            );
        }
    }
}

/// Only the first mark is the stream's: a second one starts a field name the SSE
/// format ignores (`\u{feff}data`), so that line's data is not read.
#[test]
fn only_one_byte_order_mark_is_stripped() {
    let body = format!(
        "{BOM}{BOM}data: {{\"choices\":[{{\"delta\":{{\"content\":\"lost\"}}}}]}}\n\n{OPENAI_REPLY}"
    );
    assert_eq!(
        read_stream_chunks(Wire::OpenAi, [body.as_bytes()]),
        finished("Hi", Some(StopReason::End))
    );
}

/// A body that ends inside its opening mark is not UTF-8, as before.
#[test]
fn a_body_cut_inside_its_mark_is_not_utf8() {
    let reading = read_stream_chunks(Wire::OpenAi, [&BOM.as_bytes()[..2]]);
    assert_eq!(reading.end, StreamEnd::NotUtf8);
    assert_eq!(read_stream_chunks(Wire::OpenAi, []).end, StreamEnd::Closed);
}

/// The same body through a real call: it answers instead of panicking its task.
#[tokio::test]
async fn a_call_whose_stream_opens_with_a_byte_order_mark_answers() {
    let request = CallRequest {
        model: "model-x".into(),
        max_tokens: 64,
        messages: vec![Message::user("Hello?")],
        call_index: 0,
        client: None,
    };
    for (kind, reply) in [
        (ProviderKind::Openai, OPENAI_REPLY),
        (ProviderKind::Anthropic, ANTHROPIC_REPLY),
    ] {
        let mock = MockProvider::start().await;
        let chunks = vec![BOM.to_owned(), reply.to_owned()];
        mock.push(MockResponse::Events {
            chunks,
            end: MockEnd::Finish,
        });
        let config: ProviderConfig = mock.config(kind);
        let outcome = Adapter::new(config, providers::http_client())
            .call(&request)
            .await;
        assert_eq!(
            outcome,
            CallOutcome::Answered {
                text: "Hi".into(),
                stop: StopReason::End,
                tool_calls: vec![],
            },
            "{kind:?}"
        );
    }
}
