//! A provider's stream body from arbitrary bytes, read the way a call reads it
//! (`providers::read_stream_chunks`: the SSE parsing and each wire format's reading of
//! its events), in both wire formats. It never panics, and where the body's chunks
//! split it does not matter: read whole, in the chunks the input chose, or byte by byte,
//! a body says the same. The data of a failing event, which a call hands the catalogue
//! as the body of a 200, classifies without panicking.
//!
//! Input layout: the first byte is a count `n` (taken modulo 16) of chunk lengths, the
//! next `n` bytes are those lengths (0 is an empty chunk), used in turn until the body
//! runs out, for at most [`MAX_CHUNKS`] chunks; the rest is the body. `n = 0` sends
//! the body as one chunk.

#![no_main]

use libfuzzer_sys::fuzz_target;
use providers::{StreamEnd, StreamReading, Wire, read_stream_chunks};

/// 2026-11-30T02:00:00Z, the catalogue's "now".
const NOW_MS: i64 = 1_796_004_000_000;

/// Bodies up to this long are also read byte by byte. Longer ones are not: the SSE
/// parser scans the whole unfinished line again for every chunk, so reading a long
/// line byte by byte is quadratic (about a second for 4 KiB under the sanitizer),
/// and the chunks the input chooses split the longer bodies anyway.
const BYTEWISE_MAX: usize = 512;

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let count = usize::from(count % 16).min(rest.len());
    let (lengths, body) = rest.split_at(count);
    let chunks = split(body, lengths);

    for (wire, family) in [(Wire::Anthropic, "anthropic"), (Wire::OpenAi, "openai")] {
        let whole = read_stream_chunks(wire, [body]);
        let chunked = read_stream_chunks(wire, chunks.iter().copied());
        assert_eq!(chunked, whole, "{wire:?} in chunks {lengths:?}");
        if body.len() <= BYTEWISE_MAX {
            let bytewise = read_stream_chunks(wire, body.chunks(1));
            assert_eq!(bytewise, whole, "{wire:?} byte by byte");
        }
        check_reading(&whole, family);
    }
});

/// At most this many chunks are cut, the rest of the body being the last (each chunk
/// costs a scan of the unfinished line; see [`BYTEWISE_MAX`]).
const MAX_CHUNKS: usize = 64;

/// `body` in chunks of `lengths`, in turn, then the rest; one chunk if there are none.
fn split<'a>(body: &'a [u8], lengths: &[u8]) -> Vec<&'a [u8]> {
    if lengths.is_empty() {
        return vec![body];
    }
    let mut chunks = Vec::new();
    let mut rest = body;
    // Empty chunks are kept, but a run of them must not go on forever.
    let mut empty_in_a_row = 0;
    for &length in lengths.iter().cycle() {
        if rest.is_empty() || empty_in_a_row > lengths.len() || chunks.len() == MAX_CHUNKS {
            break;
        }
        let (chunk, after) = rest.split_at(usize::from(length).min(rest.len()));
        empty_in_a_row = if chunk.is_empty() {
            empty_in_a_row + 1
        } else {
            0
        };
        chunks.push(chunk);
        rest = after;
    }
    if !rest.is_empty() {
        chunks.push(rest);
    }
    chunks
}

/// A failing event's data is what the catalogue gets: it must classify.
fn check_reading(reading: &StreamReading, family: &str) {
    if let StreamEnd::Failed { body } = &reading.end {
        let evidence = catalogue::Evidence::new(family)
            .with_status(200)
            .with_body(body)
            .with_observed_at_ms(NOW_MS);
        let verdict = catalogue::classify(&evidence, NOW_MS);
        assert_eq!(
            verdict.classification.class,
            verdict.classification.code.class()
        );
    }
}
