//! Time comes from a [`Clock`]: the server uses the system's, tests drive a
//! [`ManualClock`]. Nothing else reads the time.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A source of the current time, in integer milliseconds since the Unix epoch.
pub trait Clock: Send + Sync + 'static {
    /// Now, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> i64;
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> i64 {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX)
    }
}

/// A clock that moves only when told: tests advance it instead of sleeping.
///
/// ```
/// use server::clock::{Clock, ManualClock};
/// let clock = ManualClock::new(1_000);
/// clock.advance_ms(500);
/// assert_eq!(clock.now_ms(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock stopped at `now_ms`.
    pub fn new(now_ms: i64) -> Self {
        Self {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Move the clock forward by `duration_ms`.
    pub fn advance_ms(&self, duration_ms: i64) {
        self.now_ms.fetch_add(duration_ms, Ordering::SeqCst);
    }

    /// Set the clock to `now_ms`.
    pub fn set_ms(&self, now_ms: i64) {
        self.now_ms.store(now_ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> i64 {
        self.now_ms.load(Ordering::SeqCst)
    }
}

/// `ms` as RFC 3339 (`2026-11-30T02:00:20Z`), the form the API speaks.
///
/// ```
/// assert_eq!(server::clock::rfc3339(1_796_022_000_000), "2026-11-30T07:00:00Z");
/// ```
pub fn rfc3339(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|timestamp| timestamp.to_string())
        .unwrap_or_else(|_| "invalid-time".to_owned())
}
