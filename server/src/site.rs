//! The browser bundle and public files, embedded in the binary so that
//! `switchback serve` needs nothing beside it. `scripts/build-site` writes them
//! to `target/site`; `build.rs` makes sure they exist before this compiles.

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use rust_embed::RustEmbed;

#[derive(RustEmbed)]
#[folder = "../target/site/"]
struct Site;

/// The embedded file at `path` (no leading slash), answered with its type and
/// an `ETag`; `304 Not Modified` when the browser already holds it.
pub fn file(path: &str, request_headers: &HeaderMap) -> Option<Response> {
    let file = Site::get(path)?;
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()));
    let not_modified = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    let builder = Response::builder()
        .header(header::ETAG, &etag)
        // Names are stable across builds, so browsers revalidate every time.
        .header(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    let response = if not_modified {
        builder.status(StatusCode::NOT_MODIFIED).body(Body::empty())
    } else {
        builder
            .header(header::CONTENT_TYPE, file.metadata.mimetype())
            .body(Body::from(file.data.into_owned()))
    };
    Some(response.expect("static headers are valid"))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}
