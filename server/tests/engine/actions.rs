//! Manual actions (SPEC 5): each from the states that allow it, refused (422)
//! elsewhere, 409 on a stale generation before anything else, and a race with a
//! firing deadline that exactly one side wins.

use policy::route::{ManualAction, RouteCause, RouteState};
use serde_json::json;

use crate::engine::evidence::*;
use crate::engine::harness::*;

/// Busy twice (retries of 10 s), then a reply; a second candidate that answers.
async fn waiting_task(h: &Harness) -> api::TaskView {
    let busy = h
        .simulated(
            &format!("busy {}", uuid()),
            json!([overloaded(), overloaded(), reply("late")]),
        )
        .await;
    let steady = h
        .simulated(&format!("steady {}", uuid()), json!([reply("second")]))
        .await;
    let transient = section((true, 3, 10_000), (true, 60), "skip");
    let hard = section((false, 2, 500), (false, 3600), "stop");
    let profile = h
        .profile(&[
            (&busy, "m1", policy(transient.clone(), hard.clone())),
            (&steady, "m2", policy(transient, hard)),
        ])
        .await;
    h.task(&profile).await
}

#[tokio::test]
async fn retry_now_fires_the_same_retry_early() {
    let h = Harness::new().await;
    let task = waiting_task(&h).await;
    let waiting = h.wait(&task.id, RouteState::RetryWait).await;
    let after = h
        .act(&task.id, ManualAction::RetryNow, waiting.generation.get())
        .await
        .unwrap();
    assert_eq!(after.route.state, RouteState::Retrying);
    assert_eq!(after.route.retry_ordinal, Some(1), "it keeps its ordinal");
    let again = h.wait(&task.id, RouteState::RetryWait).await;
    assert_eq!(again.retry_ordinal, Some(2));
    let view = h.view(&task.id).await;
    assert_eq!(view.attempts[1].ordinal, Some(1));
}

#[tokio::test]
async fn cancel_wait_holds_and_skip_now_moves_on() {
    let h = Harness::new().await;
    let task = waiting_task(&h).await;
    let waiting = h.wait(&task.id, RouteState::RetryWait).await;
    let held = h
        .act(&task.id, ManualAction::CancelWait, waiting.generation.get())
        .await
        .unwrap();
    assert_eq!(held.route.state, RouteState::Held);
    assert_eq!(held.route.cause, Some(RouteCause::CancelledWait));
    assert_eq!(held.route.deadline, None);
    // The cancelled deadline fires nothing.
    h.advance_ms(60_000);
    assert_eq!(h.engine.fire_due().await.unwrap(), 0);

    let skipped = h
        .act(&task.id, ManualAction::SkipNow, held.route.generation.get())
        .await
        .unwrap();
    assert_eq!(skipped.route.candidate_index, 1);
    let done = h.wait(&task.id, RouteState::Completed).await;
    assert_eq!(done.model, "m2");
}

#[tokio::test]
async fn skip_now_on_the_last_candidate_stops_with_no_candidate() {
    let h = Harness::new().await;
    let busy = h.simulated("busy", json!([overloaded()])).await;
    let transient = section((true, 3, 10_000), (true, 60), "skip");
    let profile = h
        .profile(&[(&busy, "m1", policy(transient.clone(), transient))])
        .await;
    let task = h.task(&profile).await;
    let waiting = h.wait(&task.id, RouteState::RetryWait).await;
    let stopped = h
        .act(&task.id, ManualAction::SkipNow, waiting.generation.get())
        .await
        .unwrap();
    assert_eq!(stopped.route.state, RouteState::Stopped);
    assert_eq!(stopped.route.cause, Some(RouteCause::NoCandidate));
}

#[tokio::test]
async fn stop_cancels_the_call_in_flight() {
    let h = Harness::new().await;
    let hanging = h.simulated("hang", json!([{"hang": true}])).await;
    let profile = h.profile(&[(&hanging, "m", defaults())]).await;
    let task = h.task(&profile).await;
    let running = h.wait(&task.id, RouteState::Running).await;
    let stopped = h
        .act(&task.id, ManualAction::Stop, running.generation.get())
        .await
        .unwrap();
    assert_eq!(stopped.route.state, RouteState::Stopped);
    assert_eq!(stopped.route.cause, Some(RouteCause::StoppedByUser));
    assert_eq!(stopped.attempts[0].outcome.as_deref(), Some("cancelled"));
    assert!(stopped.route.actions.is_empty());
}

/// SPEC 5's order: the body, then the generation (409, with the route now), then
/// the state (422); nothing changes on any refusal.
#[tokio::test]
async fn refusals_come_in_order_and_change_nothing() {
    use api::read::Read;
    let h = Harness::new().await;
    let task = waiting_task(&h).await;
    let waiting = h.wait(&task.id, RouteState::RetryWait).await;
    let generation = waiting.generation.get();

    let bad_body = h
        .services
        .act(
            &task.id,
            Read::from_json(&json!({"action": "jump", "generation": -1})),
        )
        .await
        .unwrap_err()
        .into_api_error();
    let fields: Vec<&str> = bad_body
        .field_errors()
        .iter()
        .map(|error| error.field.as_str())
        .collect();
    assert_eq!(fields, ["action", "generation"]);

    let stale = h
        .act(&task.id, ManualAction::RetryNow, generation - 1)
        .await
        .unwrap_err();
    assert_eq!(stale.status(), 409);
    let api::ApiError::StaleGeneration { route, .. } = &stale else {
        panic!("{stale:?}")
    };
    assert_eq!(route.generation.get(), generation);
    assert_eq!(route.state, RouteState::RetryWait);

    let held = h
        .act(&task.id, ManualAction::CancelWait, generation)
        .await
        .unwrap();
    // cancel_wait is not valid from held: 422 (and a stale generation is still 409).
    let not_now = h
        .act(
            &task.id,
            ManualAction::CancelWait,
            held.route.generation.get(),
        )
        .await
        .unwrap_err();
    assert_eq!(not_now.status(), 422);
    let stale_and_wrong = h
        .act(&task.id, ManualAction::CancelWait, generation)
        .await
        .unwrap_err();
    assert_eq!(stale_and_wrong.status(), 409);
    assert_eq!(h.view(&task.id).await.route, held.route, "nothing changed");
}

/// An action and the deadline it races: exactly one wins, and the loser changes
/// nothing (the action gets 409; the deadline fires nothing).
#[tokio::test]
async fn an_action_racing_a_firing_deadline_has_one_winner() {
    let h = Harness::new().await;
    let mut action_won = 0;
    let mut deadline_won = 0;
    for _ in 0..12 {
        let task = waiting_task(&h).await;
        let waiting = h.wait(&task.id, RouteState::RetryWait).await;
        let deadline = waiting.deadline.unwrap().as_millis();
        h.clock.set(api::Timestamp::from_millis(deadline));
        let (acted, fired) = tokio::join!(
            h.act(&task.id, ManualAction::CancelWait, waiting.generation.get()),
            h.engine.fire_due(),
        );
        let fired = fired.unwrap();
        let view = h.view(&task.id).await;
        match acted {
            Ok(after) => {
                action_won += 1;
                assert_eq!(after.route.state, RouteState::Held);
                assert_eq!(after.route.generation.get(), waiting.generation.get() + 1);
                assert_eq!(view.attempts.len(), 1, "the deadline sent nothing");
            }
            Err(error) => {
                deadline_won += 1;
                assert_eq!(error.status(), 409, "{error:?}");
                // The deadline fired it (here or in the scheduler): it moved on, and
                // the refused action left no trace.
                assert!(view.route.generation.get() > waiting.generation.get());
                assert_ne!(view.route.cause, Some(RouteCause::CancelledWait));
                assert!(fired <= 1, "fired once at most here");
            }
        }
        // Stop the route before the next round (it may still be moving: a stop on a
        // generation it just left is refused, so try again on the one it is at).
        let mut stopped = false; // or completed
        for _ in 0..100 {
            let route = h.view(&task.id).await.route;
            if matches!(route.state, RouteState::Stopped | RouteState::Completed)
                || h.act(&task.id, ManualAction::Stop, route.generation.get())
                    .await
                    .is_ok()
            {
                stopped = true;
                break;
            }
            tokio::task::yield_now().await;
        }
        assert!(stopped, "the route came to rest");
    }
    assert_eq!(action_won + deadline_won, 12, "every round has one winner");
}

/// Two replicas on one PostgreSQL database: a stop committed on one cuts the call
/// the other has in flight (not only its outcome: the request itself).
#[tokio::test]
async fn a_stop_on_one_replica_cuts_the_call_in_flight_on_the_other() {
    use providers::mock::{MockProvider, MockResponse};
    let (_schema, url) = testkit::postgres::schema("switchback_stops").await.unwrap();
    let a = Harness::replica(&url, "a").await;
    let b = Harness::replica(&url, "b").await;
    let mock = MockProvider::start().await;
    mock.push(MockResponse::HangBeforeHeaders);
    let provider = a
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = a.profile(&[(&provider, "m", defaults())]).await;
    let task = a.task(&profile).await;
    let running = a.wait(&task.id, RouteState::Running).await;
    mock.wait_for_hits(1).await;

    let stopped = b
        .act(&task.id, ManualAction::Stop, running.generation.get())
        .await
        .unwrap();
    assert_eq!(stopped.route.state, RouteState::Stopped);
    // The call's first-byte timeout is two minutes: only the cut ends it now.
    tokio::time::timeout(
        std::time::Duration::from_secs(10),
        mock.wait_for_abandoned(1),
    )
    .await
    .expect("replica A cut the call replica B stopped");
}

/// On PostgreSQL a firing skips a route another transaction holds rather than
/// wait on it; `fire_due`, which promises that nothing due is left, reads such a
/// route again until that transaction has ended and the deadline has fired.
#[tokio::test]
async fn fire_due_outlasts_a_transaction_that_holds_a_due_route() {
    let (_schema, url) = testkit::postgres::schema("switchback_held_firing")
        .await
        .unwrap();
    let h = Harness::replica(&url, "a").await;
    let task = waiting_task(&h).await;
    let waiting = h.wait(&task.id, RouteState::RetryWait).await;
    let pool = sqlx::PgPool::connect(&url).await.unwrap();
    let mut holder = pool.begin().await.unwrap();
    sqlx::query("SELECT 1 FROM routes WHERE task_id = $1 FOR UPDATE")
        .bind(task.id.as_str())
        .execute(&mut *holder)
        .await
        .unwrap();
    // The deadline passes: the scheduler's own firing meets the lock and steps
    // aside (on a shared database it leaves the route to upkeep).
    h.advance_ms(10_000);
    let patience = std::time::Duration::from_secs(10);
    let steps = || h.engine.firings_stepped_aside();
    let by_the_scheduler = testkit::eventually_async(patience, || async {
        let stepped = steps();
        (stepped >= 1).then_some(stepped)
    })
    .await;
    // fire_due meets it too; the holder lets go only once it has stepped aside,
    // so what follows proves fire_due read the route again.
    let engine = h.engine.clone();
    let firing = tokio::spawn(async move { engine.fire_due().await });
    testkit::eventually_async(patience, || async {
        assert!(
            !firing.is_finished(),
            "fire_due ended without meeting the lock"
        );
        (steps() > by_the_scheduler).then_some(())
    })
    .await;
    holder.rollback().await.unwrap();
    assert_eq!(
        firing.await.unwrap().unwrap(),
        1,
        "fire_due fired the deadline once the holder let go"
    );
    let after: (String, i64) =
        sqlx::query_as("SELECT state, generation FROM routes WHERE task_id = $1")
            .bind(task.id.as_str())
            .fetch_one(&pool)
            .await
            .unwrap();
    // Fired, and perhaps already sent and waiting again: its generation moved on.
    assert!(
        after.1 > waiting.generation.get(),
        "the deadline fired once the holder let go: {after:?}"
    );
}
