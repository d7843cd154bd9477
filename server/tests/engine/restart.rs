//! SPEC 5, restart: deadlines live in the database; a passed one fires on start,
//! a future one is kept; a route whose attempt started and never finished is
//! held as interrupted; nothing is dispatched twice. (The real binary killed
//! with SIGKILL is in `tests/serve.rs`.)

use policy::route::{RouteCause, RouteState};
use serde_json::json;

use crate::engine::evidence::*;
use crate::engine::harness::*;

#[tokio::test]
async fn a_wait_survives_a_restart_and_fires_once() {
    let first = Harness::new().await;
    let provider = first
        .simulated("sim", json!([rate_limited(30), reply("after restart")]))
        .await;
    let profile = first.profile(&[(&provider, "m", defaults())]).await;
    let task = first.task(&profile).await;
    let waiting = first.wait(&task.id, RouteState::WaitingForReset).await;
    let deadline = waiting.deadline.unwrap().as_millis();

    // A second engine on the same file, its clock before the deadline: the wait is kept.
    let before = Harness::open(&first.url, deadline - 1).await;
    assert_eq!(before.engine.fire_due().await.unwrap(), 0);
    assert_eq!(
        before.view(&task.id).await.route.state,
        RouteState::WaitingForReset
    );
    // And one after it: the passed deadline fires on start, once.
    let after = Harness::open(&first.url, deadline + 5_000).await;
    after.wait(&task.id, RouteState::Completed).await;
    let view = after.view(&task.id).await;
    assert_eq!(
        view.attempts.len(),
        2,
        "dispatched once: {:#?}",
        view.attempts
    );
    assert_eq!(view.turns[0].answer.as_deref(), Some("after restart"));
}

#[tokio::test]
async fn an_attempt_in_flight_at_a_restart_is_held_as_interrupted() {
    let first = Harness::new().await;
    let provider = first
        .simulated("sim", json!([{"hang": true}, reply("never sent")]))
        .await;
    let profile = first.profile(&[(&provider, "m", defaults())]).await;
    let task = first.task(&profile).await;
    first.wait(&task.id, RouteState::Running).await;

    let restarted = Harness::open(&first.url, first.now_ms() + 1_000).await;
    let view = restarted.view(&task.id).await;
    assert_eq!(view.route.state, RouteState::Held);
    assert_eq!(view.route.cause, Some(RouteCause::Interrupted));
    assert_eq!(view.attempts.len(), 1, "not sent again");
    assert_eq!(view.attempts[0].outcome.as_deref(), Some("interrupted"));
    assert!(view.attempts[0].finished_at.is_some());
}

#[tokio::test]
async fn queued_routes_are_dispatched_on_start_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("engine.db").display());
    let first = Harness::unstarted(&url, T0).await;
    let provider = first.simulated("sim", json!([reply("ok")])).await;
    let profile = first.profile(&[(&provider, "m", defaults())]).await;
    // Committed and never dispatched, as a crash right after the commit leaves them.
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(first.task(&profile).await.id);
    }
    let restarted = Harness::open(&first.url, first.now_ms()).await;
    for id in &ids {
        let view = restarted.stored(id, RouteState::Completed).await;
        assert_eq!(view.attempts.len(), 1, "dispatched once: {id}");
    }
}

/// Tasks created before the engine starts are handed to the dispatcher twice (by
/// their creation, then by the restart pass): each is dispatched once, and its
/// call's outcome is its route's (the route completes rather than stay running).
#[tokio::test]
async fn a_route_handed_over_twice_is_dispatched_once_and_completes() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("engine.db").display());
    let h = Harness::unstarted(&url, T0).await;
    // A slow provider: the first dispatch's call is still out when the second comes.
    let provider = h
        .simulated("sim", json!([{"reply": "ok", "delay_ms": 200}]))
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let mut ids = Vec::new();
    for _ in 0..5 {
        ids.push(h.task(&profile).await.id);
    }
    h.engine.start().await.unwrap();
    for id in &ids {
        let view = h.stored(id, RouteState::Completed).await;
        assert_eq!(view.attempts.len(), 1, "dispatched once: {id}");
    }
}

/// Two replicas on one PostgreSQL database: when one goes away with a call in
/// flight, the other takes its route over (SPEC 5's restart rule: held as
/// interrupted, never sent again) without waiting for anyone to restart it.
#[tokio::test]
async fn a_replica_that_goes_away_leaves_its_routes_to_the_other() {
    use providers::mock::{MockProvider, MockResponse};
    let (_schema, url) = testkit::postgres::schema("switchback_takeover")
        .await
        .unwrap();
    let a = Harness::replica(&url, "a").await;
    let b = Harness::replica(&url, "b").await;
    let mock = MockProvider::start().await;
    mock.push(MockResponse::HangBeforeHeaders);
    let provider = b
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = b.profile(&[(&provider, "m", defaults())]).await;
    let task = b.task(&profile).await;
    b.wait(&task.id, RouteState::Running).await;
    mock.wait_for_hits(1).await;

    // B leaves (its replica row goes, its connections close) with the call open.
    b.engine.shut_down();
    b.services.store.close().await;
    let held = a
        .wait_for(&task.id, "held as interrupted by replica A", |route| {
            route.state == RouteState::Held && route.cause == Some(RouteCause::Interrupted)
        })
        .await;
    assert_eq!(held.candidate_index, 0);
    let view = a.view(&task.id).await;
    assert_eq!(view.attempts.len(), 1);
    assert_eq!(view.attempts[0].outcome.as_deref(), Some("interrupted"));
    assert_eq!(mock.hits(), 1, "nothing sent again");
}
