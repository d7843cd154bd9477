//! SPEC 4's steps, in order, through the engine: each test drives a task through
//! a simulated provider's script and reads the route and attempts back.

use policy::route::{RouteCause, RouteState};
use policy::{Class, SemanticCode};
use serde_json::json;

use crate::engine::evidence::*;
use crate::engine::harness::*;

#[tokio::test]
async fn a_reply_completes_the_turn_and_records_its_candidate() {
    let h = Harness::new().await;
    let provider = h.simulated("sim", json!([reply("Hello!")])).await;
    let profile = h.profile(&[(&provider, "model-a", defaults())]).await;
    let task = h.task(&profile).await;
    assert_eq!(task.route.state, RouteState::Queued);
    assert_eq!(task.route.generation.get(), 0);

    h.wait(&task.id, RouteState::Running).await;
    let done = h.wait(&task.id, RouteState::Completed).await;
    assert_eq!(done.generation.get(), 2, "queued -> running -> completed");
    let view = h.view(&task.id).await;
    assert_eq!(view.turns[0].answer.as_deref(), Some("Hello!"));
    assert_eq!(view.turns[0].model.as_deref(), Some("model-a"));
    assert_eq!(view.turns[0].candidate_index, Some(0));
    assert_eq!(view.attempts.len(), 1);
    assert_eq!(view.attempts[0].outcome.as_deref(), Some("answered"));
    assert!(view.route.actions.is_empty());
}

/// Step 1: part of the answer streamed, then a failure: a person decides.
#[tokio::test]
async fn step1_partial_output_holds_for_a_person() {
    let h = Harness::new().await;
    let provider = h
        .simulated(
            "sim",
            json!([broken_stream("Once upon"), reply("Whole story.")]),
        )
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let task = h.task(&profile).await;
    let held = h.wait(&task.id, RouteState::Held).await;
    assert_eq!(held.cause, Some(RouteCause::UnsafeEffect));
    assert_eq!(held.decision.as_deref(), Some("hold"));
    assert_eq!(
        held.code,
        Some(SemanticCode::Overloaded),
        "classified all the same"
    );
    let view = h.view(&task.id).await;
    assert_eq!(view.attempts[0].decision.as_deref(), Some("hold"));
    assert_eq!(view.attempts[0].outcome.as_deref(), Some("failed"));
}

/// Step 2: `unknown` holds; another `outside` code stops.
#[tokio::test]
async fn step2_unknown_holds_and_outside_stops() {
    let h = Harness::new().await;
    let teapot = h.simulated("teapot", json!([unknown()])).await;
    let profile = h.profile(&[(&teapot, "m", defaults())]).await;
    let task = h.task(&profile).await;
    let held = h.wait(&task.id, RouteState::Held).await;
    assert_eq!(
        (held.cause, held.code),
        (Some(RouteCause::Unrecognized), Some(SemanticCode::Unknown))
    );

    let bad = h.simulated("bad", json!([invalid_request()])).await;
    let other = h.simulated("other", json!([reply("never asked")])).await;
    let profile = h
        .profile(&[(&bad, "m", defaults()), (&other, "m", defaults())])
        .await;
    let task = h.task(&profile).await;
    let stopped = h.wait(&task.id, RouteState::Stopped).await;
    assert_eq!(stopped.cause, Some(RouteCause::Unrecoverable));
    assert_eq!(stopped.class, Some(Class::Outside));
    assert_eq!(
        stopped.candidate_index, 0,
        "no skip for the request's own error"
    );
}

/// Step 3: a reset hint within the wait: wait until it, once per episode.
#[tokio::test]
async fn step3_waits_for_the_reset_once_per_episode() {
    let h = Harness::new().await;
    let provider = h
        .simulated(
            "sim",
            json!([rate_limited(20), rate_limited(20), reply("after the wait")]),
        )
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let task = h.task(&profile).await;
    let waiting = h.wait(&task.id, RouteState::WaitingForReset).await;
    let t = h.now_ms();
    assert_eq!(waiting.deadline.map(|d| d.as_millis()), Some(t + 20_000));
    assert_eq!(waiting.decision.as_deref(), Some("wait_for_reset"));
    assert!(!waiting.circuit_wait, "its own hint");

    h.advance_ms(19_999);
    assert_eq!(h.engine.fire_due().await.unwrap(), 0, "nothing is due");
    assert_eq!(
        h.view(&task.id).await.route.state,
        RouteState::WaitingForReset,
        "not a millisecond early"
    );
    h.advance_ms(1);
    h.wait(&task.id, RouteState::Retrying).await;
    // The episode has waited once: the second hint is a retry pushed to the reset.
    let retry = h.wait(&task.id, RouteState::RetryWait).await;
    assert_eq!(retry.retry_ordinal, Some(1));
    assert_eq!(
        retry.deadline.map(|d| d.as_millis()),
        Some(h.now_ms() + 20_000),
        "a retry never fires before a valid reset"
    );
    h.advance_ms(20_000);
    h.wait(&task.id, RouteState::Completed).await;
    let view = h.view(&task.id).await;
    let decisions: Vec<Option<&str>> = view
        .attempts
        .iter()
        .map(|a| a.decision.as_deref())
        .collect();
    assert_eq!(decisions, [Some("wait_for_reset"), Some("retry"), None]);
    let ordinals: Vec<Option<u32>> = view.attempts.iter().map(|a| a.ordinal).collect();
    assert_eq!(
        ordinals,
        [None, None, Some(1)],
        "the dispatch after a reset wait is not a retry"
    );
}

/// Step 4: retries back off exponentially; step 5: then the exhausted outcome,
/// a skip to the next enabled candidate, which starts a new episode.
#[tokio::test]
async fn step4_retries_back_off_then_step5_skips() {
    let h = Harness::new().await;
    let busy = h
        .simulated("busy", json!([overloaded(), overloaded(), overloaded()]))
        .await;
    let steady = h
        .simulated("steady", json!([reply("from the second")]))
        .await;
    let transient = section((true, 2, 500), (true, 60), "skip");
    let hard = section((false, 2, 500), (false, 3600), "skip");
    let profile = h
        .profile(&[
            (&busy, "m1", policy(transient.clone(), hard.clone())),
            (&steady, "m2", policy(transient, hard)),
        ])
        .await;
    let task = h.task(&profile).await;

    let first = h.wait(&task.id, RouteState::RetryWait).await;
    assert_eq!(first.retry_ordinal, Some(1));
    assert_eq!(first.max_retries, Some(2));
    assert_eq!(
        first.deadline.map(|d| d.as_millis()),
        Some(h.now_ms() + 500)
    );
    assert_eq!(first.pending_outcome.map(|o| o.as_str()), Some("skip"));
    h.advance_ms(500);
    let second = h.wait(&task.id, RouteState::RetryWait).await;
    assert_eq!(second.retry_ordinal, Some(2));
    assert_eq!(
        second.deadline.map(|d| d.as_millis()),
        Some(h.now_ms() + 1_000),
        "twice the interval"
    );
    h.advance_ms(1_000);
    let done = h.wait(&task.id, RouteState::Completed).await;
    assert_eq!(done.candidate_index, 1);
    let view = h.view(&task.id).await;
    let decisions: Vec<Option<&str>> = view
        .attempts
        .iter()
        .map(|a| a.decision.as_deref())
        .collect();
    assert_eq!(
        decisions,
        [Some("retry"), Some("retry"), Some("skip"), None]
    );
    assert_eq!(view.turns[0].model.as_deref(), Some("m2"));
}

/// Step 4 with jitter: each retry's deadline lies in its band around the backoff,
/// at the point the task's id and the retry's ordinal pick, and is stored as such.
#[tokio::test]
async fn step4_with_jitter_retries_within_the_band_the_task_id_picks() {
    let h = Harness::new().await;
    let busy = h
        .simulated(
            "busy",
            json!([overloaded(), overloaded(), reply("at last")]),
        )
        .await;
    let mut transient = section((true, 2, 1_000), (true, 60), "stop");
    transient["retry"]["jitter_pct"] = json!(50);
    let hard = section((false, 2, 500), (false, 3600), "stop");
    let profile = h.profile(&[(&busy, "m", policy(transient, hard))]).await;
    let task = h.task(&profile).await;
    let seed = policy::jitter_seed(task.id.as_str());

    for (ordinal, (earliest_ms, latest_ms)) in [(1, (500, 1_500)), (2, (1_000, 3_000))] {
        let waiting = h.wait(&task.id, RouteState::RetryWait).await;
        assert_eq!(waiting.retry_ordinal, Some(ordinal));
        let delay_ms = waiting.deadline.unwrap().as_millis() - h.now_ms();
        assert!(
            (earliest_ms..=latest_ms).contains(&delay_ms),
            "retry {ordinal}: {delay_ms} ms outside {earliest_ms}..={latest_ms}"
        );
        assert_eq!(
            delay_ms,
            policy::jittered_backoff_ms(1_000, ordinal, 50, seed) as i64,
            "retry {ordinal}: the point the task id picks"
        );
        h.advance_ms(delay_ms);
    }
    h.wait(&task.id, RouteState::Completed).await;
}

/// Step 5 with no candidate left: stop, exhausted.
#[tokio::test]
async fn step5_with_nothing_left_stops_exhausted() {
    let h = Harness::new().await;
    let provider = h.simulated("sim", json!([auth_failed()])).await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let task = h.task(&profile).await;
    let stopped = h.wait(&task.id, RouteState::Stopped).await;
    assert_eq!(stopped.cause, Some(RouteCause::Exhausted));
    assert_eq!(stopped.code, Some(SemanticCode::AuthFailed));
    assert_eq!(stopped.class, Some(Class::Hard));
}

/// A `max_tokens` stop is sent again with twice the budget, within the ceiling;
/// when it cannot grow, the truncated answer completes the turn.
#[tokio::test]
async fn token_escalation_then_a_truncated_completion() {
    let h = Harness::new().await;
    let provider = h
        .simulated(
            "sim",
            json!([{"reply": "cut", "stop": "max_tokens"}, {"reply": "cut again", "stop": "max_tokens"}]),
        )
        .await;
    let profile = h
        .profile_json(json!({"name": "escalating", "candidates": [{"provider_id": provider, "model": "m",
            "enabled": true, "max_tokens": 1000, "escalation": {"max_escalations": 1, "ceiling_tokens": 32768}}]}))
        .await;
    let task = h.task(&profile).await;
    let done = h.wait(&task.id, RouteState::Completed).await;
    assert_eq!(done.turn, 1);
    let view = h.view(&task.id).await;
    let budgets: Vec<(u32, Option<&str>)> = view
        .attempts
        .iter()
        .map(|a| (a.max_tokens, a.outcome.as_deref()))
        .collect();
    assert_eq!(
        budgets,
        [(1000, Some("escalated")), (2000, Some("truncated"))]
    );
    assert!(view.turns[0].truncated);
    assert_eq!(view.turns[0].answer.as_deref(), Some("cut again"));
}

/// A new turn starts on the candidate that served the last one; each turn keeps
/// the candidate that produced it.
#[tokio::test]
async fn turns_continue_on_the_serving_candidate() {
    let h = Harness::new().await;
    let broken = h.simulated("broken", json!([auth_failed()])).await;
    // The third turn's call never answers: that turn is still in progress
    // when the fourth is asked for, however fast the engine is.
    let steady = h
        .simulated(
            "steady",
            json!([reply("first"), reply("second"), {"hang": true}]),
        )
        .await;
    let profile = h
        .profile(&[(&broken, "m1", defaults()), (&steady, "m2", defaults())])
        .await;
    let task = h.task(&profile).await;
    h.wait(&task.id, RouteState::Completed).await;
    let refused = h.turn(&task.id, " ").await.unwrap_err();
    assert_eq!(refused.status(), 422);

    let queued = h.turn(&task.id, "And then?").await.unwrap();
    assert_eq!(queued.route.state, RouteState::Queued);
    assert_eq!(queued.route.candidate_index, 1);
    h.wait(&task.id, RouteState::Completed).await;
    let view = h.view(&task.id).await;
    let turns: Vec<(u32, Option<&str>, Option<&str>)> = view
        .turns
        .iter()
        .map(|t| (t.number, t.answer.as_deref(), t.model.as_deref()))
        .collect();
    assert_eq!(
        turns,
        [
            (1, Some("first"), Some("m2")),
            (2, Some("second"), Some("m2"))
        ]
    );
    // One call went to the broken candidate: none for turn 2.
    assert_eq!(view.attempts.iter().filter(|a| a.model == "m1").count(), 1);
    // A new turn while one is in progress is refused.
    let again = h.turn(&task.id, "x").await.unwrap();
    assert_eq!(again.route.state, RouteState::Queued);
    let refused = h.turn(&task.id, "y").await.unwrap_err();
    assert_eq!(refused.status(), 422);
}

#[tokio::test]
async fn an_idempotency_key_returns_the_first_task() {
    use api::read::Read;
    let h = Harness::new().await;
    let provider = h.simulated("sim", json!([reply("ok")])).await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let body = json!({"profile_id": profile, "prompt": "once"});
    let (first, created) = h
        .services
        .create_task(Read::from_json(&body), Some("key-1".into()))
        .await
        .unwrap();
    let (again, created_again) = h
        .services
        .create_task(Read::from_json(&body), Some("key-1".into()))
        .await
        .unwrap();
    assert!(created && !created_again);
    assert_eq!(first.id, again.id);
    let page = h
        .services
        .list_tasks(api::TaskQuery::default())
        .await
        .unwrap();
    assert_eq!(page.tasks.len(), 1);
}

#[tokio::test]
async fn a_profile_with_no_enabled_candidate_starts_nothing() {
    use api::read::Read;
    let h = Harness::new().await;
    let provider = h.simulated("sim", json!([reply("ok")])).await;
    let profile = h
        .profile_json(
            json!({"name": "off", "candidates": [{"provider_id": provider, "model": "m",
            "enabled": false, "max_tokens": 10}]}),
        )
        .await;
    let error = h
        .services
        .create_task(
            Read::from_json(&json!({"profile_id": profile, "prompt": "x"})),
            None,
        )
        .await
        .unwrap_err()
        .into_api_error();
    assert_eq!(error.status(), 422);
    assert!(
        h.services
            .list_tasks(api::TaskQuery::default())
            .await
            .unwrap()
            .tasks
            .is_empty()
    );
}

/// What a provider echoes back is kept on the attempt with its secrets redacted.
#[tokio::test]
async fn stored_evidence_keeps_no_secret() {
    let h = Harness::new().await;
    let echoed = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789ABCD";
    let provider = h
        .simulated(
            "echo",
            json!([{"error": {"provider": "openai", "status": 401,
                "headers": {"set-cookie": "session=abc", "x-request-id": "req_1"},
                "body": format!("{{\"error\":{{\"message\":\"Incorrect API key provided: {echoed}.\",\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}}}")}}]),
        )
        .await;
    let profile = h.profile(&[(&provider, "m", defaults())]).await;
    let task = h.task(&profile).await;
    h.wait(&task.id, RouteState::Stopped).await;
    let stored = h.services.store.get_task(&task.id).await.unwrap();
    let evidence = stored.attempts[0]
        .end
        .as_ref()
        .unwrap()
        .evidence
        .clone()
        .unwrap();
    let text = evidence.to_string();
    assert!(!text.contains("abcdefghijklmnop"), "{text}");
    assert!(!text.contains("session=abc"), "{text}");
    assert_eq!(evidence["headers"]["x-request-id"], "req_1");
    assert_eq!(evidence["status"], 401);
}
