//! Reading how a connection failed out of reqwest's error chain.

use std::error::Error as StdError;
use std::io;

use catalogue::Transport;

/// Which part of the call a reqwest error interrupted: with no clearer sign in the
/// chain, a failure while reading the body means the answer was cut short.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Connecting, sending, or waiting for the response headers.
    Request,
    /// Reading the response body.
    Body,
}

/// The SPEC 2.1 transport failure `error` shows, or `None` when the chain names none
/// the catalogue knows (the caller then keeps the error's text as the body).
pub(crate) fn transport_of(error: &reqwest::Error, phase: Phase) -> Option<Transport> {
    // Checked first: a connect timeout is also a connect error.
    if error.is_timeout() {
        return Some(Transport::Timeout);
    }
    if error.is_dns() {
        return Some(Transport::Dns);
    }
    let mut found = None;
    visit_chain(error, &mut |cause| {
        if found.is_none() {
            found = transport_of_cause(cause);
        }
    });
    match (found, phase) {
        (Some(transport), _) => Some(transport),
        (None, Phase::Body) => Some(Transport::ClosedEarly),
        (None, Phase::Request) => None,
    }
}

/// One link of the chain.
fn transport_of_cause(cause: &(dyn StdError + 'static)) -> Option<Transport> {
    if cause.is::<rustls::Error>() {
        return Some(Transport::Tls);
    }
    if let Some(hyper_error) = cause.downcast_ref::<hyper::Error>() {
        if hyper_error.is_timeout() {
            return Some(Transport::Timeout);
        }
        if hyper_error.is_incomplete_message() {
            return Some(Transport::ClosedEarly);
        }
    }
    let io_error = cause.downcast_ref::<io::Error>()?;
    match io_error.kind() {
        io::ErrorKind::ConnectionRefused => Some(Transport::ConnectionRefused),
        io::ErrorKind::ConnectionReset
        | io::ErrorKind::ConnectionAborted
        | io::ErrorKind::BrokenPipe => Some(Transport::ConnectionReset),
        io::ErrorKind::TimedOut => Some(Transport::Timeout),
        io::ErrorKind::UnexpectedEof => Some(Transport::ClosedEarly),
        _ => None,
    }
}

/// Calls `visit` on every error of the chain, outermost first, including the error
/// an `io::Error` wraps (which `io::Error::source` skips: it returns the wrapped
/// error's source, not the wrapped error, and rustls's errors travel that way).
fn visit_chain(error: &(dyn StdError + 'static), visit: &mut dyn FnMut(&(dyn StdError + 'static))) {
    let mut next = Some(error);
    while let Some(cause) = next {
        visit(cause);
        next = match cause
            .downcast_ref::<io::Error>()
            .and_then(io::Error::get_ref)
        {
            Some(wrapped) => Some(wrapped),
            None => cause.source(),
        };
    }
}

/// The error's whole chain as one line (`a: b: c`), for evidence whose failure the
/// catalogue has no name for. reqwest's texts name the URL, never a header.
pub(crate) fn chain_text(error: &reqwest::Error) -> String {
    let mut parts: Vec<String> = Vec::new();
    visit_chain(error, &mut |cause| {
        let text = cause.to_string();
        if !parts.iter().any(|part| part == &text) {
            parts.push(text);
        }
    });
    parts.join(": ")
}
