//! The browser bundle: served under its own build's path, kept by browsers for
//! good, and not served at all under any other build's path. And a page's
//! address with a trailing slash, which leads to the page.

use axum::body::Body;
use axum::http::{Request, StatusCode, header};
use server::site::pkg_dir;

use super::{Api, HOST};

fn get(path: &str) -> Request<Body> {
    Request::builder()
        .uri(path)
        .header(header::HOST, HOST)
        .body(Body::empty())
        .unwrap()
}

#[tokio::test]
async fn pages_load_the_bundle_of_their_own_build_which_browsers_keep_for_good() {
    let api = Api::new().await;
    let dir = pkg_dir();
    let id = dir.strip_prefix("pkg/").expect("under pkg/");
    assert_eq!(id.len(), 16, "{dir}");
    assert!(id.bytes().all(|byte| byte.is_ascii_hexdigit()), "{dir}");

    let page = api.send(get("/profiles")).await;
    assert_eq!(page.status, StatusCode::OK, "{}", page.text);
    for file in ["switchback.css", "switchback.js", "switchback_bg.wasm"] {
        assert!(
            page.text.contains(&format!("/{dir}/{file}")),
            "{file} in {}",
            page.text
        );
    }
    assert!(!page.text.contains("\"/pkg/switchback"), "{}", page.text);

    for (file, kind) in [
        ("switchback_bg.wasm", "application/wasm"),
        ("switchback.js", "text/javascript"),
        ("__wasm_split.js", "text/javascript"),
        ("switchback.css", "text/css"),
    ] {
        let answer = api.send(get(&format!("/{dir}/{file}"))).await;
        assert_eq!(answer.status, StatusCode::OK, "{file}");
        assert_eq!(
            answer.headers[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable",
            "{file}"
        );
        let content_type = answer.headers[header::CONTENT_TYPE].to_str().unwrap();
        assert!(content_type.starts_with(kind), "{file}: {content_type}");
    }

    // A tab opened on another build asks for its own chunks: none are served.
    for path in [
        "/pkg/switchback_bg.wasm".to_owned(),
        "/pkg/0123456789abcdef/switchback_bg.wasm".to_owned(),
        format!("/{dir}x/switchback_bg.wasm"),
        format!("/{dir}/no_such_chunk.wasm"),
        // The splitter's unoptimised output is not part of the site.
        "/split/switchback.wasm".to_owned(),
    ] {
        let answer = api.send(get(&path)).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{path}");
    }

    // A browser revalidating a bundle file is told it still holds it, and
    // may go on keeping it.
    let first = api.send(get(&format!("/{dir}/switchback.js"))).await;
    let mut again = get(&format!("/{dir}/switchback.js"));
    again
        .headers_mut()
        .insert(header::IF_NONE_MATCH, first.headers[header::ETAG].clone());
    let again = api.send(again).await;
    assert_eq!(again.status, StatusCode::NOT_MODIFIED);
    assert!(again.text.is_empty(), "{}", again.text);
    assert_eq!(
        again.headers[header::CACHE_CONTROL],
        "public, max-age=31536000, immutable"
    );

    // Files outside the bundle keep their names across builds: revalidated.
    let icon = api.send(get("/favicon.svg")).await;
    assert_eq!(icon.status, StatusCode::OK);
    assert_eq!(icon.headers[header::CACHE_CONTROL], "no-cache");
}

#[tokio::test]
async fn a_pages_address_with_a_trailing_slash_leads_to_the_page() {
    let api = Api::new().await;
    for (path, page) in [
        ("/tasks/", "/tasks"),
        ("/profiles/", "/profiles"),
        ("/providers//", "/providers"),
        ("/tasks/?state=held", "/tasks?state=held"),
    ] {
        let answer = api.send(get(path)).await;
        assert_eq!(answer.status, StatusCode::PERMANENT_REDIRECT, "{path}");
        assert_eq!(answer.headers[header::LOCATION], page, "{path}");
    }
    // Never off the site, and the home page is itself.
    let answer = api.send(get("//example.com/")).await;
    assert_eq!(answer.status, StatusCode::NOT_FOUND);
    assert!(!answer.headers.contains_key(header::LOCATION));
    assert_eq!(api.send(get("/")).await.status, StatusCode::OK);
}
