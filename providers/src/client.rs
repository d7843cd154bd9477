//! The one HTTP client every adapter shares.

use std::sync::Arc;
use std::time::Duration;

use rustls_platform_verifier::BuilderVerifierExt;

use crate::config::Timeouts;

/// The shared HTTP client: rustls with the ring crypto provider, HTTP/1.1, no
/// proxy, no redirects, and the default connect timeout ([`Timeouts::default`]).
///
/// Build it once and clone it: clones share one connection pool, and building one
/// reads the host's trust store (tens of milliseconds). Panics only if
/// the TLS configuration cannot be built, which the fixed choices here rule out.
///
/// ```
/// let client = providers::http_client();
/// let _same_pool = client.clone();
/// ```
pub fn http_client() -> reqwest::Client {
    http_client_with_connect_timeout(Timeouts::default().connect())
}

/// The shared client's recipe with another connect timeout: reqwest bounds the
/// connect per client, so an adapter whose `connect_ms` differs from the default
/// builds one of these (see [`crate::Adapter::new`]).
pub fn http_client_with_connect_timeout(connect_timeout: Duration) -> reqwest::Client {
    http_client_builder()
        .connect_timeout(connect_timeout)
        .build()
        .expect("a client with a preconfigured rustls configuration always builds")
}

/// The shared client's settings, for a caller that needs to add one (a test's DNS
/// resolver, say) before building.
///
/// - TLS: rustls with ring (no aws-lc-rs, no OpenSSL). Certificates are checked
///   against the operating system's trust store (honouring `SSL_CERT_FILE` and
///   `SSL_CERT_DIR`), as reqwest does by default, so a self-hosted server signed by
///   an internal CA works; a host with no trust store at all falls back to the
///   bundled Mozilla roots rather than failing every call.
/// - HTTP/1.1 only: one stream per connection, so dropping a call's future closes its
///   connection, which is how the provider learns that the call was cancelled.
/// - No proxy, whatever `HTTP_PROXY`/`HTTPS_PROXY` say: a provider is reached the
///   same way on every machine, and loopback tests never meet a proxy.
/// - No redirects: a redirect would carry `x-api-key` to wherever it points (reqwest
///   strips only the standard credential headers); a 3xx is reported as evidence.
pub fn http_client_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls_config())
        .http1_only()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .user_agent(concat!("switchback/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Timeouts::default().connect())
}

/// The rustls configuration: ring, TLS 1.2 and 1.3, the platform's roots.
fn tls_config() -> rustls::ClientConfig {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = || {
        rustls::ClientConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("ring supports the default TLS versions")
    };
    let mut config = match builder().with_platform_verifier() {
        Ok(with_platform_roots) => with_platform_roots.with_no_client_auth(),
        // The platform verifier fails only when the host has no trust store at all.
        Err(_) => builder()
            .with_root_certificates(rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            })
            .with_no_client_auth(),
    };
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    config
}
