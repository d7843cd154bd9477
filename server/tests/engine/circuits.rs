//! Shared circuits through the engine (SPEC 5): a reset hint closes the model for
//! every route; routes due on it wait without sending; at half-open exactly one
//! route probes and the others follow its result.

use std::collections::HashSet;

use api::read::Read;
use api::{TaskId, Timestamp};
use policy::route::RouteState;
use providers::mock::{MockProvider, MockResponse, MockStop};
use serde_json::json;

use crate::engine::harness::*;

fn rate_limited(seconds: u32) -> MockResponse {
    MockResponse::Error {
        status: 429,
        headers: vec![("retry-after".into(), seconds.to_string())],
        body: r#"{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}"#.into(),
    }
}

/// Every task in a wait, with its deadline.
async fn all_waiting_until(h: &Harness, ids: &[TaskId], deadline_ms: i64) {
    for id in ids {
        h.wait_for(id, "a wait for the circuit's reset", |route| {
            matches!(
                route.state,
                RouteState::WaitingForReset | RouteState::RetryWait
            ) && route.deadline.map(|d| d.as_millis()) == Some(deadline_ms)
        })
        .await;
    }
}

#[tokio::test]
async fn one_route_probes_a_half_open_circuit_and_the_rest_follow() {
    let h = Harness::new().await;
    let mock = MockProvider::start().await;
    let provider = h
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let t0 = h.now_ms();

    mock.push(rate_limited(10));
    let first = h.task(&profile).await;
    let own = h.wait(&first.id, RouteState::WaitingForReset).await;
    assert!(!own.circuit_wait, "its own hint");
    // The rest find the model's circuit open: they wait for it without sending.
    let mut ids = vec![first.id.clone()];
    for _ in 0..5 {
        let task = h.task(&profile).await;
        let waiting = h.wait(&task.id, RouteState::WaitingForReset).await;
        assert!(waiting.circuit_wait, "the circuit's wait");
        assert_eq!(waiting.deadline.map(|d| d.as_millis()), Some(t0 + 10_000));
        ids.push(task.id);
    }
    assert_eq!(mock.hits(), 1, "nothing sent while the circuit is open");

    // Half-open: one probe, which is throttled again; nobody else sends.
    mock.push(rate_limited(10));
    h.advance_ms(10_000);
    all_waiting_until(&h, &ids, t0 + 20_000).await;
    assert_eq!(mock.hits(), 2, "exactly one probe");

    // Half-open again: the probe is answered, and the others follow.
    mock.push(MockResponse::Reply {
        text: "ok".into(),
        stop: MockStop::End,
    });
    h.advance_ms(10_000);
    for id in &ids {
        h.wait(id, RouteState::Completed).await;
    }
    assert_eq!(mock.hits(), 2 + 1 + 5);
    let mut probes = 0;
    let mut probe_tasks = HashSet::new();
    for id in &ids {
        for attempt in h.view(id).await.attempts {
            if attempt.probe {
                probes += 1;
                probe_tasks.insert(id.clone());
            }
        }
    }
    assert_eq!(probes, 2, "one probe per half-open");
    // The history says which first sends came after the circuit's wait: all but
    // the one whose failure opened it.
    for (index, id) in ids.iter().enumerate() {
        let first_attempt = &h.view(id).await.attempts[0];
        assert_eq!(first_attempt.after_circuit_wait, index > 0, "task {index}");
    }
    assert!(
        (1..=2).contains(&probe_tasks.len()),
        "probes were made by routes of this circuit: {probe_tasks:?}"
    );
}

#[tokio::test]
async fn a_circuit_beyond_a_routes_wait_takes_its_exhausted_outcome_without_sending() {
    let h = Harness::new().await;
    let mock = MockProvider::start().await;
    let limited = h
        .provider(
            json!({"name": "limited", "kind": "openai_compatible", "base_url": mock.base_url()}),
        )
        .await;
    let other = h
        .simulated("other", json!([{"reply": "from the next candidate"}]))
        .await;
    // Short waits: a 10-minute reset is beyond them.
    let short = policy(
        section((true, 2, 500), (true, 60), "skip"),
        section((false, 2, 500), (false, 60), "skip"),
    );
    let profile = h
        .profile(&[(&limited, "m", short.clone()), (&other, "m2", short)])
        .await;
    mock.push(rate_limited(600));
    let first = h.task(&profile).await;
    // Its own hint is beyond its wait: it retries (pushed past the reset is pointless: skip).
    h.wait(&first.id, RouteState::Completed).await;
    let second = h.task(&profile).await;
    let done = h.wait(&second.id, RouteState::Completed).await;
    assert_eq!(done.model, "m2");
    let view = h.view(&second.id).await;
    assert_eq!(
        view.attempts.len(),
        1,
        "the open circuit sent nothing: {:#?}",
        view.attempts
    );
    assert_eq!(view.attempts[0].model, "m2");
    assert_eq!(mock.hits(), 1);
    // The route view says which candidate was passed over, and why.
    let [passed] = view.passed_over.as_slice() else {
        panic!("one candidate passed over: {:#?}", view.passed_over)
    };
    assert_eq!(
        (
            passed.candidate_index,
            passed.model.as_str(),
            passed.decision.as_str()
        ),
        (0, "m", "skip")
    );
    assert_eq!(passed.code, policy::SemanticCode::RateLimited);
    assert!(
        passed
            .safe_cause
            .starts_with("Not sent: limited's rate limit on m resets in 10 min (")
            && passed
                .safe_cause
                .ends_with("), past this candidate's 1 min wait."),
        "{}",
        passed.safe_cause
    );
    assert!(h.view(&first.id).await.passed_over.is_empty());
}

#[tokio::test]
async fn retry_now_goes_through_an_open_circuit_as_its_probe() {
    let h = Harness::new().await;
    let mock = MockProvider::start().await;
    let provider = h
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    mock.push(rate_limited(30));
    let first = h.task(&profile).await;
    h.wait(&first.id, RouteState::WaitingForReset).await;
    let second = h.task(&profile).await;
    let waiting = h.wait(&second.id, RouteState::WaitingForReset).await;
    assert!(waiting.circuit_wait);

    mock.push(MockResponse::Reply {
        text: "through".into(),
        stop: MockStop::End,
    });
    let acted = h
        .act(
            &second.id,
            policy::route::ManualAction::RetryNow,
            waiting.generation.get(),
        )
        .await
        .unwrap();
    assert_eq!(acted.route.state, RouteState::Retrying);
    h.wait(&second.id, RouteState::Completed).await;
    let view = h.view(&second.id).await;
    assert!(view.attempts[0].probe, "it probed the circuit");
    assert_eq!(mock.hits(), 2);
    // Its success closed the circuit: the first task's own wait is its own to keep.
    assert_eq!(
        h.view(&first.id).await.route.state,
        RouteState::WaitingForReset
    );
}

/// A retry held back by an open circuit is still that retry when it goes.
#[tokio::test]
async fn a_retry_delayed_by_a_circuit_keeps_its_ordinal() {
    let h = Harness::new().await;
    let mock = MockProvider::start().await;
    let provider = h
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    mock.push(MockResponse::Error {
        status: 503,
        headers: vec![],
        body: r#"{"error":{"message":"The server is overloaded or not ready yet.","type":"server_error"}}"#.into(),
    });
    let retried = h.task(&profile).await;
    let waiting = h.wait(&retried.id, RouteState::RetryWait).await;
    assert_eq!(waiting.retry_ordinal, Some(1));
    mock.push(rate_limited(10));
    let limiter = h.task(&profile).await;
    h.wait(&limiter.id, RouteState::WaitingForReset).await;

    // The retry comes due while the circuit is open: it waits for the circuit.
    h.advance_ms(500);
    let held_back = h.wait(&retried.id, RouteState::WaitingForReset).await;
    assert!(held_back.circuit_wait);
    assert_eq!(held_back.retry_ordinal, Some(1));
    assert_eq!(mock.hits(), 2);

    h.advance_ms(9_500);
    h.wait(&retried.id, RouteState::Completed).await;
    h.wait(&limiter.id, RouteState::Completed).await;
    let view = h.view(&retried.id).await;
    let ordinals: Vec<Option<u32>> = view.attempts.iter().map(|a| a.ordinal).collect();
    assert_eq!(ordinals, [None, Some(1)]);
}

/// Two replicas on one PostgreSQL database: a circuit one opens holds the routes of
/// the other without sending, and at half-open exactly one route, on either
/// replica, probes; the rest follow its result.
#[tokio::test]
async fn a_circuit_opened_on_one_replica_holds_the_other_and_one_route_probes() {
    let (_schema, url) = testkit::postgres::schema("switchback_circuits")
        .await
        .unwrap();
    let a = Harness::replica(&url, "a").await;
    let b = Harness::replica(&url, "b").await;
    let mock = MockProvider::start().await;
    let provider = a
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = a.profile(&[(&provider, "m", defaults())]).await;

    mock.push(rate_limited(10));
    let first = a.task(&profile).await;
    a.wait(&first.id, RouteState::WaitingForReset).await;
    let mut ids = vec![first.id.clone()];
    for _ in 0..3 {
        let task = b.task(&profile).await;
        let waiting = b.wait(&task.id, RouteState::WaitingForReset).await;
        assert!(waiting.circuit_wait, "held by the circuit replica A opened");
        assert_eq!(waiting.deadline.map(|d| d.as_millis()), Some(T0 + 10_000));
        ids.push(task.id);
    }
    assert_eq!(mock.hits(), 1, "nothing sent while the circuit is open");

    // Half-open on both replicas: one probe is answered, and the rest follow.
    a.advance_ms(10_000);
    b.advance_ms(10_000);
    for id in &ids {
        a.wait(id, RouteState::Completed).await;
    }
    assert_eq!(mock.hits(), 1 + ids.len());
    let mut probes = 0;
    for id in &ids {
        probes += a
            .view(id)
            .await
            .attempts
            .iter()
            .filter(|attempt| attempt.probe)
            .count();
    }
    assert_eq!(probes, 1, "exactly one probe across the replicas");
}

#[tokio::test]
async fn a_person_closing_a_circuit_sends_the_routes_waiting_on_it_at_once() {
    let h = Harness::new().await;
    let mock = MockProvider::start().await;
    let provider = h
        .provider(json!({"name": "mock", "kind": "openai_compatible", "base_url": mock.base_url()}))
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    mock.push(rate_limited(30));
    let first = h.task(&profile).await;
    h.wait(&first.id, RouteState::WaitingForReset).await;
    let second = h.task(&profile).await;
    assert!(
        h.wait(&second.id, RouteState::WaitingForReset)
            .await
            .circuit_wait
    );
    let page = h.services.circuits().await.unwrap();
    let [open] = page.circuits.as_slice() else {
        panic!("one circuit: {page:#?}")
    };
    assert_eq!(
        open.waiting_total, 2,
        "its own reset's wait and the circuit's"
    );
    assert_eq!(
        (page.history.len(), page.history[0].openings),
        (1, 1),
        "{page:#?}"
    );
    let until = open.circuit.until;
    let close = |until: Timestamp| api::CloseCircuitRequest {
        provider_id: provider.clone(),
        model: Some("m".into()),
        until,
    };

    // A person who saw another reset changes nothing.
    let stale = h
        .services
        .close_circuit(Read::clean(&close(until.plus_millis(-1))))
        .await
        .unwrap_err()
        .into_api_error();
    assert_eq!(stale.status(), 409, "{stale:?}");
    assert_eq!(h.services.circuits().await.unwrap().circuits.len(), 1);

    for _ in 0..2 {
        mock.push(MockResponse::Reply {
            text: "ok".into(),
            stop: MockStop::End,
        });
    }
    let closed = h
        .services
        .close_circuit(Read::clean(&close(until)))
        .await
        .unwrap();
    let released: HashSet<TaskId> = closed.released.into_iter().collect();
    assert_eq!(
        released,
        HashSet::from([first.id.clone(), second.id.clone()])
    );
    // Without the clock moving: both are sent at once, and answered.
    h.wait(&first.id, RouteState::Completed).await;
    h.wait(&second.id, RouteState::Completed).await;
    assert_eq!(mock.hits(), 3);
    let page = h.services.circuits().await.unwrap();
    assert!(page.circuits.is_empty(), "{page:#?}");
    assert_eq!(page.history[0].entries[0].kind, "closed_by_person");
    // Gone: closing it again is a 409 that says so.
    let gone = h
        .services
        .close_circuit(Read::clean(&close(until)))
        .await
        .unwrap_err()
        .into_api_error();
    assert!(gone.to_string().contains("not open any more"), "{gone}");
}
