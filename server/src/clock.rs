//! Time comes from a [`Clock`]: the server uses the system's, tests drive a
//! [`ManualClock`]. Nothing else reads the time.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use api::Timestamp;

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Timestamp;
}

/// The operating system's clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let since_epoch = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp::from_millis(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX))
    }
}

/// A clock that moves only when told: tests advance it instead of sleeping.
///
/// ```
/// use server::clock::{Clock, ManualClock};
/// let clock = ManualClock::at_millis(1_000);
/// clock.advance_ms(500);
/// assert_eq!(clock.now().as_millis(), 1_500);
/// ```
#[derive(Debug, Default)]
pub struct ManualClock {
    now_ms: AtomicI64,
}

impl ManualClock {
    /// A clock stopped at `now_ms` milliseconds since the Unix epoch.
    pub fn at_millis(now_ms: i64) -> Self {
        Self {
            now_ms: AtomicI64::new(now_ms),
        }
    }

    /// Move the clock forward by `duration_ms`.
    pub fn advance_ms(&self, duration_ms: i64) {
        self.now_ms.fetch_add(duration_ms, Ordering::SeqCst);
    }

    /// Set the clock to `now`.
    pub fn set(&self, now: Timestamp) {
        self.now_ms.store(now.as_millis(), Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(self.now_ms.load(Ordering::SeqCst))
    }
}
