//! A person's pause of automatic recovery: while paused, no deadline fires and no
//! attempt starts on what is paused, routes keep their states and deadlines; it
//! survives a restart; a resume fires what came due and sends what was held back.

use std::time::Duration;

use api::read::Read;
use api::{PauseRequest, ProviderId, TaskId};
use policy::route::RouteState;
use providers::mock::{MockProvider, MockResponse, MockStop};
use serde_json::json;

use crate::engine::evidence::*;
use crate::engine::harness::*;

fn throttled(seconds: u32) -> MockResponse {
    MockResponse::Error {
        status: 429,
        headers: vec![("retry-after".into(), seconds.to_string())],
        body: r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#.into(),
    }
}

fn ok() -> MockResponse {
    MockResponse::Reply {
        text: "ok".into(),
        stop: MockStop::End,
    }
}

async fn pause(h: &Harness, provider_id: Option<&ProviderId>, paused: bool) {
    h.services
        .set_pause(Read::clean(&PauseRequest {
            provider_id: provider_id.cloned(),
            paused,
        }))
        .await
        .unwrap();
}

/// Until the engine holds `id` back for a pause (its dispatch is its own task).
async fn until_held_back(h: &Harness, id: &TaskId) {
    tokio::time::timeout(Duration::from_secs(10), async {
        while !h.engine.held_back().contains(id) {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{id} was never held back"));
}

#[tokio::test]
async fn a_paused_provider_fires_nothing_and_sends_nothing_until_resumed_even_after_a_restart() {
    let first = Harness::new().await;
    let mock = MockProvider::start().await;
    let paused = first
        .provider(
            json!({"name": "paused", "kind": "openai_compatible", "base_url": mock.base_url()}),
        )
        .await;
    let free = first.simulated("free", json!([reply("not paused")])).await;
    let m = first.profile(&[(&paused, "m", defaults())]).await;
    let m2 = first.profile(&[(&paused, "m2", defaults())]).await;
    let elsewhere = first.profile(&[(&free, "m", defaults())]).await;

    // A waits for its own 30 s reset; then the provider is paused.
    mock.push(throttled(30));
    let a = first.task(&m).await;
    let deadline = first
        .wait(&a.id, RouteState::WaitingForReset)
        .await
        .deadline
        .unwrap();
    pause(&first, Some(&paused), true).await;
    let page = first.services.pauses().await.unwrap();
    assert!(page.everywhere.is_none());
    assert!(
        page.providers
            .iter()
            .any(|provider| provider.provider_id == paused && provider.paused_since.is_some())
    );
    assert_eq!(
        first.services.pause_notice().sentence().as_deref(),
        Some("Automatic recovery is paused for paused.")
    );

    // A new task on it is accepted and held back (no circuit covers m2); one
    // on another provider goes on.
    let b = first.task(&m2).await;
    until_held_back(&first, &b.id).await;
    let c = first.task(&elsewhere).await;
    first.wait(&c.id, RouteState::Completed).await;

    // A's deadline passes: it does not fire, and keeps its state and deadline.
    first.advance_ms(60_000);
    assert_eq!(first.engine.fire_due().await.unwrap(), 0);
    let a_now = first.view(&a.id).await.route;
    assert_eq!(
        (a_now.state, a_now.deadline),
        (RouteState::WaitingForReset, Some(deadline))
    );
    assert_eq!(first.view(&b.id).await.route.state, RouteState::Queued);
    assert_eq!(mock.hits(), 1, "nothing sent while paused");

    // A restart keeps the pause: nothing fires or starts on start either.
    first.engine.shut_down();
    first.engine.stopped().await;
    let restarted = Harness::open(&first.url, first.now_ms()).await;
    assert_eq!(restarted.engine.pauses().len(), 1);
    until_held_back(&restarted, &b.id).await;
    assert_eq!(restarted.engine.fire_due().await.unwrap(), 0);
    assert_eq!(mock.hits(), 1, "nothing sent after the restart");

    // Resumed: what came due fires, what was held back is sent.
    mock.push(ok());
    mock.push(ok());
    pause(&restarted, Some(&paused), false).await;
    restarted.wait(&a.id, RouteState::Completed).await;
    restarted.wait(&b.id, RouteState::Completed).await;
    assert_eq!(mock.hits(), 3);
    assert!(restarted.engine.pauses().is_empty());
    assert!(restarted.engine.held_back().is_empty());
    drop(first);
}

#[tokio::test]
async fn a_pause_everywhere_holds_every_provider_until_resumed() {
    let h = Harness::new().await;
    let sim = h.simulated("sim", json!([overloaded(), reply("ok")])).await;
    let profile = h.profile(&[(&sim, "m", defaults())]).await;
    let early = h.task(&profile).await;
    let early_deadline = h
        .wait(&early.id, RouteState::RetryWait)
        .await
        .deadline
        .unwrap();
    h.advance_ms(100);
    let late = h.task(&profile).await;
    let late_deadline = h
        .wait(&late.id, RouteState::RetryWait)
        .await
        .deadline
        .unwrap();
    assert!(early_deadline < late_deadline);
    pause(&h, None, true).await;
    assert_eq!(
        h.services.pause_notice().sentence().as_deref(),
        Some("Automatic recovery is paused everywhere.")
    );
    // Pausing what is paused changes nothing.
    assert!(!h.engine.set_pause(None, true).await.unwrap());
    h.advance_ms(10_000);
    assert_eq!(h.engine.fire_due().await.unwrap(), 0);
    for id in [&early.id, &late.id] {
        assert_eq!(h.view(id).await.route.state, RouteState::RetryWait);
    }
    let fresh = h.task(&profile).await;
    until_held_back(&h, &fresh.id).await;

    pause(&h, None, false).await;
    for id in [&early.id, &late.id] {
        h.wait(id, RouteState::Completed).await;
    }
    // The task held back is sent: its script's first step fails, and its retry
    // comes when the clock says.
    h.wait(&fresh.id, RouteState::RetryWait).await;
    h.advance_ms(1_000);
    h.wait(&fresh.id, RouteState::Completed).await;
}

#[tokio::test]
async fn a_pause_made_on_one_replica_holds_the_other_until_resumed_there() {
    let (_schema, url) = testkit::postgres::schema("switchback_pauses")
        .await
        .unwrap();
    let a = Harness::replica(&url, "a").await;
    let b = Harness::replica(&url, "b").await;
    let sim = a.simulated("sim", json!([overloaded(), reply("ok")])).await;
    let profile = a.profile(&[(&sim, "m", defaults())]).await;
    // A route of replica B waits for its retry.
    let waiting = b.task(&profile).await;
    b.wait(&waiting.id, RouteState::RetryWait).await;

    // Replica A pauses everywhere; B hears of it at its next upkeep.
    pause(&a, None, true).await;
    tokio::time::timeout(Duration::from_secs(10), async {
        while b.engine.pauses().is_empty() {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("replica B never heard of the pause");
    b.advance_ms(10_000);
    assert_eq!(b.engine.fire_due().await.unwrap(), 0);
    assert_eq!(b.view(&waiting.id).await.route.state, RouteState::RetryWait);
    let fresh = b.task(&profile).await;
    until_held_back(&b, &fresh.id).await;

    // Resumed on A: B fires what came due and sends what it held back.
    pause(&a, None, false).await;
    b.wait(&waiting.id, RouteState::Completed).await;
    b.wait(&fresh.id, RouteState::RetryWait).await;
}
