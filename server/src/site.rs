//! The browser bundle and public files, embedded in the binary so that
//! `switchback serve` needs nothing beside it. `scripts/build-site` writes them
//! to `target/site`; `build.rs` makes sure they exist before this compiles.
//!
//! The bundle (`pkg/`) is served under a path of its own build,
//! `/pkg/{id}/...`, where the id is a hash of every file in it. A page loads
//! its route's chunks on demand, long after it loaded the main module: a tab
//! opened before an upgrade asks for its own build's chunks at its own build's
//! path, which the upgraded server does not serve, so it gets a 404, never a
//! chunk of the new build (whose function indices are another build's). The
//! app's panic hook then loads that page once more, from the new build
//! (`app/src/missing_chunk.rs`). And since a path never changes content,
//! browsers keep the bundle for good and ask for nothing on the next visit.

use std::sync::LazyLock;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::Response;
use rust_embed::RustEmbed;
use sha2::{Digest, Sha256};

#[derive(RustEmbed)]
#[folder = "../target/site/"]
struct Site;

/// Where this build's bundle is served, without the leading slash:
/// `pkg/{id}` (Leptos's `site_pkg_dir`).
pub fn pkg_dir() -> &'static str {
    &PKG_DIR
}

static PKG_DIR: LazyLock<String> = LazyLock::new(|| format!("pkg/{}", bundle_id()));

/// The first 16 hex digits of a SHA-256 over every bundle file's name and
/// content hash, in name order: a new build of any file is a new id.
fn bundle_id() -> String {
    let mut names: Vec<_> = Site::iter()
        .filter(|name| name.starts_with("pkg/"))
        .collect();
    names.sort();
    let mut hasher = Sha256::new();
    for name in names {
        hasher.update(name.as_bytes());
        hasher.update([0]);
        if let Some(file) = Site::get(&name) {
            hasher.update(file.metadata.sha256_hash());
        }
    }
    hex(&hasher.finalize()[..8])
}

/// The embedded file at `path` (no leading slash), answered with its type and
/// an `ETag`; `304 Not Modified` when the browser already holds it. A bundle
/// file is found only under this build's [`pkg_dir`] and may be kept for a
/// year; any other file is revalidated on every use.
pub fn file(path: &str, request_headers: &HeaderMap) -> Option<Response> {
    match path.strip_prefix("pkg/") {
        Some(in_pkg) => {
            let name = in_pkg
                .strip_prefix(bundle_id_str())
                .and_then(|name| name.strip_prefix('/'))?;
            answer(
                &format!("pkg/{name}"),
                request_headers,
                "public, max-age=31536000, immutable",
            )
        }
        None => answer(path, request_headers, "no-cache"),
    }
}

fn bundle_id_str() -> &'static str {
    &PKG_DIR["pkg/".len()..]
}

fn answer(path: &str, request_headers: &HeaderMap, cache: &'static str) -> Option<Response> {
    let file = Site::get(path)?;
    let etag = format!("\"{}\"", hex(&file.metadata.sha256_hash()));
    let not_modified = request_headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(',').any(|tag| tag.trim() == etag));
    let builder = Response::builder()
        .header(header::ETAG, &etag)
        .header(header::CACHE_CONTROL, HeaderValue::from_static(cache));
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
