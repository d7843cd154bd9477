//! What Switchback's tests and benches share, kept out of the shipped binary
//! (a dev-dependency only):
//!
//! - [`postgres`]: the test PostgreSQL, and a schema of a test's own in it.
//! - [`eventually`], [`eventually_every`] and [`eventually_async`]: wait for a
//!   condition another process or task brings about, polling it, up to a
//!   bound, rather than sleeping for a time and hoping.
//! - [`ServeProcess`]: `switchback serve` as a child process.
//!
//! The loopback provider is the `providers` crate's `mock` feature
//! (`providers::mock::MockProvider`), next to the adapters it answers.

pub mod postgres;
mod serve;

pub use serve::{ServeChild, ServeCommand, ServeProcess, listening_in};

use std::time::{Duration, Instant};

/// How often a condition is asked.
const POLL: Duration = Duration::from_millis(10);

/// What a check answers: `Some` or `Ok` when the condition holds, with what
/// the caller waited for; `None`, or an `Err` saying what it saw instead
/// (the last one is in the panic when the wait gives up).
pub trait Answer {
    /// What the caller waited for.
    type Value;
    /// The value, or what was seen instead.
    fn answer(self) -> Result<Self::Value, String>;
}

impl<T> Answer for Option<T> {
    type Value = T;
    fn answer(self) -> Result<T, String> {
        self.ok_or_else(|| "not yet".to_owned())
    }
}

impl<T, E: std::fmt::Display> Answer for Result<T, E> {
    type Value = T;
    fn answer(self) -> Result<T, String> {
        self.map_err(|seen| seen.to_string())
    }
}

/// Ask `check` until it answers, every 10 ms, for at most `timeout`: what it
/// answered. Panics with the timeout and what the last ask saw if it never
/// does.
pub fn eventually<A: Answer>(timeout: Duration, check: impl FnMut() -> A) -> A::Value {
    eventually_every(timeout, POLL, check)
}

/// [`eventually`], asking every `every` (a check that costs the system under
/// test, such as listing every task, asked less often).
pub fn eventually_every<A: Answer>(
    timeout: Duration,
    every: Duration,
    mut check: impl FnMut() -> A,
) -> A::Value {
    let deadline = Instant::now() + timeout;
    loop {
        match check().answer() {
            Ok(value) => return value,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "not so within {timeout:?}: {seen}"
            ),
        }
        std::thread::sleep(every);
    }
}

/// [`eventually`] for a check that awaits (the tokio runtime keeps running
/// between the asks).
pub async fn eventually_async<A, F>(timeout: Duration, mut check: impl FnMut() -> F) -> A::Value
where
    A: Answer,
    F: std::future::Future<Output = A>,
{
    let deadline = Instant::now() + timeout;
    loop {
        match check().await.answer() {
            Ok(value) => return value,
            Err(seen) => assert!(
                Instant::now() < deadline,
                "not so within {timeout:?}: {seen}"
            ),
        }
        tokio::time::sleep(POLL).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eventually_answers_what_the_check_answered_once_it_does() {
        let mut asked = 0;
        let answer = eventually(Duration::from_secs(5), || {
            asked += 1;
            (asked == 3).then_some(asked * 10)
        });
        assert_eq!((answer, asked), (30, 3));
    }

    #[test]
    #[should_panic(expected = "not so within 30ms: 2 of 3 seen")]
    fn eventually_gives_up_after_its_timeout_saying_what_it_saw() {
        eventually(Duration::from_millis(30), || Err::<(), _>("2 of 3 seen"));
    }

    #[tokio::test]
    async fn eventually_async_lets_other_tasks_run_between_asks() {
        let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let setter = flag.clone();
        tokio::spawn(async move { setter.store(true, std::sync::atomic::Ordering::SeqCst) });
        let flag = &flag;
        eventually_async(Duration::from_secs(5), || async move {
            flag.load(std::sync::atomic::Ordering::SeqCst).then_some(())
        })
        .await;
    }
}
