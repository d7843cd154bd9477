//! The scheduler: it sleeps toward the earliest deadline, is woken only by an
//! earlier one, reads deadlines a little ahead, and never fires one early.

use policy::route::RouteState;
use serde_json::json;

use crate::engine::evidence::*;
use crate::engine::harness::*;

/// Reset waits allowed up to an hour, so a provider's `retry-after` is waited for.
fn waits_an_hour() -> serde_json::Value {
    policy(
        section((true, 2, 500), (true, 3_600), "stop"),
        section((false, 2, 500), (false, 3_600), "stop"),
    )
}

#[tokio::test]
async fn an_earlier_deadline_armed_while_the_scheduler_sleeps_fires_on_time() {
    let h = Harness::new().await;
    // Two providers, so one's open circuit does not hold the other's task.
    let slow = h
        .simulated("slow", json!([rate_limited(600), reply("late")]))
        .await;
    let quick = h
        .simulated("quick", json!([rate_limited(5), reply("soon")]))
        .await;
    let late = h
        .task(&h.profile(&[(&slow, "m", waits_an_hour())]).await)
        .await;
    let waiting = h.wait(&late.id, RouteState::WaitingForReset).await;
    assert_eq!(
        waiting.deadline.unwrap().as_millis(),
        h.now_ms() + 600_000,
        "the scheduler now sleeps toward a deadline ten minutes out"
    );

    // A deadline five seconds out is armed after it: the scheduler wakes for it.
    let soon = h
        .task(&h.profile(&[(&quick, "m", waits_an_hour())]).await)
        .await;
    h.wait(&soon.id, RouteState::WaitingForReset).await;
    h.advance_ms(5_000);
    h.wait(&soon.id, RouteState::Completed).await;
    assert_eq!(
        h.view(&late.id).await.route.state,
        RouteState::WaitingForReset,
        "the later one still waits"
    );
}

#[tokio::test]
async fn a_deadline_read_ahead_fires_at_its_deadline_and_never_before() {
    let h = Harness::new().await;
    let first = h
        .simulated("first", json!([rate_limited(5), reply("first")]))
        .await;
    let second = h
        .simulated("second", json!([rate_limited(5), reply("second")]))
        .await;
    let early = h
        .task(&h.profile(&[(&first, "m", waits_an_hour())]).await)
        .await;
    let early_deadline = h
        .wait(&early.id, RouteState::WaitingForReset)
        .await
        .deadline
        .unwrap()
        .as_millis();
    // Ten milliseconds later, a second task's deadline: both lie in one read-ahead.
    h.advance_ms(10);
    let later = h
        .task(&h.profile(&[(&second, "m", waits_an_hour())]).await)
        .await;
    let waiting = h.wait(&later.id, RouteState::WaitingForReset).await;
    let later_deadline = waiting.deadline.unwrap().as_millis();
    assert_eq!(later_deadline, early_deadline + 10);

    // At the first deadline the first fires; the second, read with it, cannot: the
    // clock has not reached its deadline.
    h.clock.set(api::Timestamp::from_millis(early_deadline));
    h.wait(&early.id, RouteState::Completed).await;
    let view = h.view(&later.id).await;
    assert_eq!(
        view.route, waiting,
        "not fired (its generation unchanged), not sent again"
    );
    assert_eq!(view.attempts.len(), 1);

    h.advance_ms(10);
    h.wait(&later.id, RouteState::Completed).await;
}
