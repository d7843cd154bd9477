//! Limits that keep one client from wearing the server down: a per-client
//! budget of changes (every method but GET, HEAD and OPTIONS), and a time
//! limit on reading a request's body and starting its answer. The page's live stream is
//! not held to the time limit: its answer starts at once, and only the
//! answer's start is timed.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::time::Duration;

use api::ApiError;
use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use governor::clock::Clock as _;
use governor::{DefaultKeyedRateLimiter, Quota};

use super::access::client_address;
use crate::error::AppError;

/// How long a request may take to be read and answered.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The per-client budget of changes.
#[derive(Clone)]
pub struct MutationLimit {
    limiter: Option<Arc<DefaultKeyedRateLimiter<IpAddr>>>,
}

impl std::fmt::Debug for MutationLimit {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter
            .debug_struct("MutationLimit")
            .field("limited", &self.limiter.is_some())
            .finish()
    }
}

impl MutationLimit {
    /// At most `per_minute` changes a minute from each client address, in
    /// bursts of up to as many; 0 for no limit.
    pub fn per_minute(per_minute: u32) -> Self {
        Self {
            limiter: NonZeroU32::new(per_minute)
                .map(|rate| Arc::new(DefaultKeyedRateLimiter::keyed(Quota::per_minute(rate)))),
        }
    }

    /// Seconds until `client` may change something again, if it must wait.
    fn refused_for(&self, client: IpAddr) -> Option<u64> {
        let limiter = self.limiter.as_ref()?;
        let not_until = limiter.check_key(&client).err()?;
        let wait = not_until.wait_time_from(limiter.clock().now());
        // Whole seconds, rounded up: a client that waits as told is let in.
        Some(wait.as_secs() + u64::from(wait.subsec_nanos() > 0))
    }

    /// Forget clients whose budgets are full again, so the table stays small.
    pub fn forget_idle_clients(&self) {
        if let Some(limiter) = &self.limiter {
            limiter.retain_recent();
        }
    }
}

/// The middleware: refuse a change past the client's budget with 429 and
/// `Retry-After`. It sits inside the guard and the access rule, so only a
/// change that would otherwise be served spends the budget (a forged
/// cross-site post or a call without the token does not).
pub async fn budget(State(limit): State<MutationLimit>, request: Request, next: Next) -> Response {
    let changes = !matches!(
        *request.method(),
        Method::GET | Method::HEAD | Method::OPTIONS
    );
    if changes && let Some(retry_after_s) = limit.refused_for(client_address(&request)) {
        return AppError::from(ApiError::rate_limited("changes", retry_after_s)).into_response();
    }
    next.run(request).await
}

/// The middleware: give up on a request whose body is not read and whose
/// answer has not started within [`REQUEST_TIMEOUT`] (408).
pub async fn timeout(request: Request, next: Next) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => {
            AppError::from(ApiError::request_timeout(REQUEST_TIMEOUT.as_secs())).into_response()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    #[test]
    fn a_client_past_its_budget_waits_and_others_do_not() {
        let limit = MutationLimit::per_minute(3);
        let client = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 1));
        let other = IpAddr::V4(Ipv4Addr::new(192, 0, 2, 2));
        for _ in 0..3 {
            assert_eq!(limit.refused_for(client), None);
        }
        // One change comes back every 20 s.
        let wait = limit.refused_for(client).expect("past the budget");
        assert!((1..=20).contains(&wait), "{wait}");
        assert_eq!(limit.refused_for(other), None);
    }

    #[test]
    fn zero_means_no_limit() {
        let limit = MutationLimit::per_minute(0);
        let client = IpAddr::V4(Ipv4Addr::LOCALHOST);
        for _ in 0..10_000 {
            assert_eq!(limit.refused_for(client), None);
        }
    }
}
