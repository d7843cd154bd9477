//! Time comes from a [`Clock`]: the server uses the system's, tests drive a
//! [`ManualClock`]. Nothing else reads the time, and nothing else waits for it:
//! the scheduler sleeps through [`Clock::sleep_until`], so a test moves time
//! forward instead of sleeping.

use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use api::Timestamp;
use tokio::sync::watch;

/// A future that resolves once a clock reaches a time.
pub type Sleep<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// Now.
    fn now(&self) -> Timestamp;

    /// Resolves once [`Clock::now`] has reached `deadline`.
    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_>;
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

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        // To the microsecond: a wait computed from whole milliseconds would end up
        // to a millisecond early and then wait a whole tick more.
        let deadline_at =
            UNIX_EPOCH + Duration::from_millis(u64::try_from(deadline.as_millis()).unwrap_or(0));
        let wait = deadline_at
            .duration_since(SystemTime::now())
            .unwrap_or_default();
        Box::pin(async move {
            tokio::time::sleep(wait).await;
            // The system clock may run behind the timer: never wake early.
            while SystemClock.now() < deadline {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        })
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
#[derive(Debug)]
pub struct ManualClock {
    now_ms: watch::Sender<i64>,
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::at_millis(0)
    }
}

impl ManualClock {
    /// A clock stopped at `now_ms` milliseconds since the Unix epoch.
    pub fn at_millis(now_ms: i64) -> Self {
        Self {
            now_ms: watch::Sender::new(now_ms),
        }
    }

    /// Move the clock forward by `duration_ms`.
    pub fn advance_ms(&self, duration_ms: i64) {
        self.now_ms.send_modify(|now_ms| *now_ms += duration_ms);
    }

    /// Set the clock to `now`.
    pub fn set(&self, now: Timestamp) {
        self.now_ms.send_replace(now.as_millis());
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp::from_millis(*self.now_ms.borrow())
    }

    fn sleep_until(&self, deadline: Timestamp) -> Sleep<'_> {
        let mut receiver = self.now_ms.subscribe();
        Box::pin(async move {
            // The sender lives as long as the clock, which outlives this borrow.
            let _ = receiver
                .wait_for(|now_ms| *now_ms >= deadline.as_millis())
                .await;
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_sleep_ends_when_the_clock_is_moved_past_it() {
        let clock = ManualClock::at_millis(1_000);
        let mut sleep = clock.sleep_until(Timestamp::from_millis(1_500));
        assert!(futures_poll_once(&mut sleep).await.is_none(), "not yet");
        clock.advance_ms(499);
        assert!(futures_poll_once(&mut sleep).await.is_none(), "1 ms early");
        clock.advance_ms(1);
        sleep.await;
    }

    /// Polls a future once, without waiting.
    async fn futures_poll_once(future: &mut Sleep<'_>) -> Option<()> {
        std::future::poll_fn(|context| {
            std::task::Poll::Ready(match future.as_mut().poll(context) {
                std::task::Poll::Ready(()) => Some(()),
                std::task::Poll::Pending => None,
            })
        })
        .await
    }
}
