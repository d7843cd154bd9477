//! Tasks, routes, attempts, turns, circuits and route events: the generation fence,
//! immutable attempts, idempotent creation, the in-use refusals, and the queries
//! the scheduler and the restart pass rely on.

use api::{AttemptId, ProfileId, ProviderId, TaskId};
use policy::SemanticCode;
use policy::route::{Route, RouteState};

use super::{at, candidate, provider_write};
use crate::domain::{
    AfterCommit, Attempt, AttemptEnd, AttemptOutcome, CircuitChange, CircuitHistoryEntry,
    CircuitHistoryKind, CircuitKey, CircuitWait, CompletedTurn, IdOrigin, PassedOver, Pause,
    Producer, ProfileWrite, RouteCommit, RouteRecord, Task, TaskDetail, TaskWrite, Turn,
};
use crate::store::{Store, StoreError};

pub(super) fn route(task_id: &TaskId, state: RouteState, generation: i64) -> RouteRecord {
    RouteRecord {
        task_id: task_id.clone(),
        route: Route {
            state,
            generation,
            ..Route::new(0)
        },
        updated_at: at(10_000 + generation),
    }
}

pub(super) fn commit(record: RouteRecord) -> RouteCommit {
    RouteCommit {
        event_json: format!(r#"{{"generation": {}}}"#, record.route.generation).into(),
        after: AfterCommit::default(),
        route: record,
        start_attempt: None,
        finish_attempt: None,
        complete_turn: None,
        new_turn: None,
        circuit: None,
        passed_over: None,
        fires_deadline: false,
        unhurried: false,
    }
}

/// An attempt `id` of `task`'s first candidate, started at generation 1.
pub(super) fn attempt(task: &Task, id: &str) -> Attempt {
    Attempt {
        id: AttemptId::new(id),
        task_id: task.id.clone(),
        seq: 0,
        turn: 1,
        generation: 1,
        candidate_index: 0,
        candidate_id: task.candidates[0].id.clone(),
        provider_id: task.candidates[0].provider_id.clone(),
        model: "m".into(),
        ordinal: None,
        max_tokens: 100,
        probe: false,
        after_circuit_wait: false,
        started_at: at(11_000),
        end: None,
    }
}

/// A profile `name` on its own provider, and a task on it.
pub(super) async fn task(
    store: &dyn Store,
    name: &str,
    key: Option<&str>,
) -> (ProfileId, Task, bool) {
    let (profile_id, detail, created) = write_task(store, name, key, None).await;
    (profile_id, detail.task, created)
}

/// [`task`], written with `first` (from the task) as its first transition,
/// answering the task as the write left it.
async fn write_task(
    store: &dyn Store,
    name: &str,
    key: Option<&str>,
    first: Option<&(dyn Fn(&Task) -> RouteCommit + Sync)>,
) -> (ProfileId, TaskDetail, bool) {
    let provider = store
        .create_provider(provider_write(
            &format!("{name}-p"),
            &format!("{name} provider"),
        ))
        .await
        .unwrap_or_else(|_| panic!("provider {name}"));
    let profile = store
        .create_profile(ProfileWrite {
            id: ProfileId::new(format!("{name}-profile")),
            name: name.to_owned(),
            candidates: vec![(
                candidate(&format!("{name}-c"), provider.id.as_str(), "m"),
                IdOrigin::New,
            )],
            gateway_deadline_s: None,
            now: at(2_000),
        })
        .await
        .unwrap();
    let task = Task {
        id: TaskId::new(format!("{name}-task")),
        profile_id: profile.id.clone(),
        profile_name: profile.name.clone(),
        candidates: profile.candidates.clone(),
        created_at: at(3_000),
        gateway: None,
    };
    let (detail, event) = store
        .create_task(TaskWrite {
            task: task.clone(),
            route: route(&task.id, RouteState::Queued, 0),
            turn: Turn {
                number: 1,
                prompt: "hello".into(),
                answer: None,
                truncated: false,
                tool_calls: Vec::new(),
                producer: None,
                created_at: at(3_000),
                completed_at: None,
            },
            idempotency_key: key.map(str::to_owned),
            event_json: "{}".into(),
            start: first.map(|first| first(&task)),
        })
        .await
        .unwrap();
    (profile.id, detail, event.is_some())
}

/// The commit that starts `first`'s first attempt (a probe, after a circuit
/// wait) from generation 0: the attempt, the route it commits, and the commit.
fn start(first: &Task) -> (Attempt, RouteRecord, RouteCommit) {
    let started = Attempt {
        probe: true,
        after_circuit_wait: true,
        ..attempt(first, "alpha-a1")
    };
    let mut running = route(&first.id, RouteState::Running, 1);
    running.route.circuit_waited = true;
    let mut with_attempt = commit(running.clone());
    with_attempt.start_attempt = Some(started.clone());
    (started, running, with_attempt)
}

/// The `alpha` task (idempotency key `key-a`) with its first attempt started,
/// at generation 1: the task, the attempt and the route as committed.
async fn started(store: &dyn Store) -> (ProfileId, Task, Attempt, RouteRecord) {
    let (profile_id, first, _) = task(store, "alpha", Some("key-a")).await;
    let (started, running, with_attempt) = start(&first);
    store.commit(0, with_attempt).await.unwrap();
    (profile_id, first, started, running)
}

/// An attempt's end, at 12 s.
fn end(outcome: AttemptOutcome) -> AttemptEnd {
    AttemptEnd {
        finished_at: at(12_000),
        outcome,
        verdict: None,
        decision: None,
        evidence: None,
    }
}

/// [`started`], then held with its attempt cancelled, at generation 2.
async fn held(store: &dyn Store) -> (ProfileId, Task, Attempt) {
    let (profile_id, first, started, _) = started(store).await;
    let mut finished = commit(route(&first.id, RouteState::Held, 2));
    finished.finish_attempt = Some((started.id.clone(), end(AttemptOutcome::Cancelled)));
    store.commit(1, finished).await.unwrap();
    (profile_id, first, started)
}

/// A task keeps its snapshot of the profile, and starts queued on its first turn.
pub async fn a_task_keeps_its_snapshot(store: &dyn Store) {
    let (_, first, created) = task(store, "alpha", Some("key-a")).await;
    assert!(created);
    assert_eq!(first.candidates.len(), 1);
    let detail = store.get_task(&first.id).await.unwrap();
    assert_eq!(detail.route.route.state, RouteState::Queued);
    assert_eq!(detail.turns.len(), 1);
    assert_eq!(store.get_snapshot(&first.id).await.unwrap(), detail.task);
}

/// A new task may come with its first transition (a gateway call's first
/// attempt started): both in one commit, the route running at generation 1
/// with its attempt, the creation's event before the start's, and the start's
/// after-commit step run once it is durable.
pub async fn a_new_task_comes_with_its_first_start(store: &dyn Store) {
    let ran = std::sync::Arc::new(std::sync::atomic::AtomicI64::new(0));
    let first = |task: &Task| {
        let (_, _, mut with_attempt) = start(task);
        let ran = ran.clone();
        with_attempt.after = AfterCommit::new(move |event_id| {
            ran.store(event_id, std::sync::atomic::Ordering::SeqCst);
        });
        with_attempt
    };
    let (_, created, is_new) = write_task(store, "alpha", None, Some(&first)).await;
    assert!(is_new);
    let shape = |detail: &TaskDetail| {
        (
            detail.route.route.state,
            detail.route.route.generation,
            detail
                .attempts
                .iter()
                .map(|attempt| attempt.id.as_str().to_owned())
                .collect::<Vec<_>>(),
        )
    };
    let expected = (RouteState::Running, 1, vec!["alpha-a1".to_owned()]);
    assert_eq!(shape(&created), expected);
    assert_eq!(
        shape(&store.get_task(&created.task.id).await.unwrap()),
        expected
    );
    let (events, _) = store.events_after(0, 10).await.unwrap();
    let data: Vec<&str> = events
        .iter()
        .map(|event| event.data_json.as_str())
        .collect();
    assert_eq!(data, ["{}", r#"{"generation": 1}"#]);
    assert!(
        ran.load(std::sync::atomic::Ordering::SeqCst) > 0,
        "the start's after-commit step ran"
    );
}

/// A client key is found by its digest until it is revoked; revoking is kept
/// once (again changes nothing), and an unknown key is `NotFound`.
pub async fn client_keys_are_found_by_digest_until_revoked(store: &dyn Store) {
    use crate::domain::{ClientKey, ClientKeyWrite};
    let key = |id: &str, at_ms: i64| ClientKey {
        id: api::ClientKeyId::new(id),
        name: format!("key {id}"),
        prefix: "sbk_abcd".to_owned(),
        profile_ids: vec![ProfileId::new("p-1"), ProfileId::new("p-2")],
        created_at: at(at_ms),
        revoked_at: None,
    };
    for (id, digest, at_ms) in [("k1", "d1", 1_000), ("k2", "d2", 2_000)] {
        let written = ClientKeyWrite {
            key: key(id, at_ms),
            digest: digest.to_owned(),
        };
        assert_eq!(
            store.create_client_key(written).await.unwrap(),
            key(id, at_ms)
        );
    }
    let listed = store.list_client_keys().await.unwrap();
    assert_eq!(
        listed,
        vec![key("k2", 2_000), key("k1", 1_000)],
        "newest first"
    );
    assert_eq!(
        store.client_key_by_digest("d1").await.unwrap(),
        Some(key("k1", 1_000))
    );
    assert_eq!(store.client_key_by_digest("nope").await.unwrap(), None);
    let revoked = store
        .revoke_client_key(&api::ClientKeyId::new("k1"), at(5_000))
        .await
        .unwrap();
    assert_eq!(revoked.revoked_at, Some(at(5_000)));
    let again = store
        .revoke_client_key(&api::ClientKeyId::new("k1"), at(9_000))
        .await
        .unwrap();
    assert_eq!(
        again.revoked_at,
        Some(at(5_000)),
        "the first revocation stands"
    );
    assert_eq!(store.client_key_by_digest("d1").await.unwrap(), None);
    assert_eq!(
        store.client_key_by_digest("d2").await.unwrap(),
        Some(key("k2", 2_000))
    );
    assert!(matches!(
        store
            .revoke_client_key(&api::ClientKeyId::new("k9"), at(9_000))
            .await,
        Err(StoreError::NotFound { .. })
    ));
}

/// A gateway call's task keeps its client's request (protocol, stream, body)
/// and its deadline, read back alike one at a time, in a batch and in a list.
pub async fn a_gateway_call_keeps_its_request_and_deadline(store: &dyn Store) {
    let (_, first, _) = task(store, "alpha", None).await;
    let call = std::sync::Arc::new(crate::domain::GatewayCall {
        request: providers::ClientRequest {
            wire: providers::Wire::Anthropic,
            body: serde_json::json!({"model": "alpha", "max_tokens": 64,
                "messages": [{"role": "user", "content": "Hi ✓"}], "stream": true}),
        },
        stream: true,
        respond_by: at(123_000),
    });
    let task = Task {
        id: TaskId::new("alpha-gateway"),
        gateway: Some(call),
        ..first.clone()
    };
    let detail = store.get_task(&first.id).await.unwrap();
    store
        .create_task(TaskWrite {
            task: task.clone(),
            route: route(&task.id, RouteState::Queued, 0),
            turn: detail.turns[0].clone(),
            idempotency_key: None,
            event_json: "{}".into(),
            start: None,
        })
        .await
        .unwrap();
    assert_eq!(store.get_task(&task.id).await.unwrap().task, task);
    assert_eq!(store.get_snapshot(&task.id).await.unwrap(), task);
    assert_eq!(task.kind(), "gateway");
    assert_eq!(task.respond_by_ms(), Some(123_000));
    let batch = store
        .get_snapshots(&[task.id.clone(), first.id.clone()])
        .await
        .unwrap();
    assert!(batch.contains(&task) && batch.contains(&first), "{batch:?}");
    let listed = store.list_tasks(None, None, 10).await.unwrap();
    let kinds: Vec<_> = listed
        .iter()
        .map(|listing| (listing.task.id.as_str(), listing.task.kind()))
        .collect();
    assert!(kinds.contains(&("alpha-gateway", "gateway")), "{kinds:?}");
    assert!(kinds.contains(&("alpha-task", "task")), "{kinds:?}");
}

/// The generation fence: a commit from generation 0 wins once; again, it is
/// stale and writes nothing (not its attempt, not its event).
pub async fn a_commit_is_fenced_by_its_generation(store: &dyn Store) {
    let (_, first, _) = task(store, "alpha", Some("key-a")).await;
    let events_before = store.last_event_id().await.unwrap();
    let (_, running, with_attempt) = start(&first);
    store.commit(0, with_attempt.clone()).await.unwrap();
    let event = store.last_event_id().await.unwrap();
    assert_eq!(event, events_before + 1, "its event is in the log");
    match store.commit(0, with_attempt).await {
        Err(StoreError::StaleGeneration { sent, current }) => {
            assert_eq!((sent, current.route.generation), (0, 1));
        }
        other => panic!("expected a stale generation, got {other:?}"),
    }
    let detail = store.get_task(&first.id).await.unwrap();
    assert_eq!(
        detail.attempts.len(),
        1,
        "the stale commit wrote no attempt"
    );
    assert_eq!(detail.attempts[0].seq, 1);
    assert!(detail.attempts[0].probe && detail.attempts[0].after_circuit_wait);
    assert_eq!(detail.route.route, running.route, "the route as committed");
    assert_eq!(store.last_event_id().await.unwrap(), event, "nor an event");
}

/// An attempt, once finished, never changes.
pub async fn a_finished_attempt_never_changes(store: &dyn Store) {
    let (_, first, started) = held(store).await;
    store
        .finish_attempt(&started.id, &end(AttemptOutcome::Superseded))
        .await
        .unwrap();
    let detail = store.get_task(&first.id).await.unwrap();
    assert_eq!(
        detail.attempts[0].end.as_ref().map(|end| end.outcome),
        Some(AttemptOutcome::Cancelled)
    );
}

/// Finished attempts with evidence are read newest first, all or only those the
/// catalogue was unsure of; one without evidence is not.
pub async fn attempts_with_evidence_are_read_newest_first(store: &dyn Store) {
    let verdict = |code: SemanticCode, confidence: policy::Confidence| crate::domain::Verdict {
        class: code.class(),
        code,
        confidence,
        catalogue: "2026.12.2".to_owned(),
        rule: "r".to_owned(),
        safe_cause: "why".to_owned(),
        reset_at_ms: None,
    };
    let mut seen = Vec::new();
    for (name, ended_ms, verdict_given, evidence) in [
        (
            "a",
            10_000,
            verdict(SemanticCode::Overloaded, policy::Confidence::High),
            true,
        ),
        (
            "b",
            30_000,
            verdict(SemanticCode::Unknown, policy::Confidence::High),
            true,
        ),
        (
            "c",
            20_000,
            verdict(
                SemanticCode::InsufficientCredits,
                policy::Confidence::Medium,
            ),
            true,
        ),
        (
            "d",
            40_000,
            verdict(SemanticCode::Unknown, policy::Confidence::High),
            false,
        ),
    ] {
        let (_, task, _) = task(store, name, None).await;
        let (_, _, mut with_attempt) = start(&task);
        let started = attempt(&task, &format!("{name}-a1"));
        with_attempt.start_attempt = Some(started.clone());
        store.commit(0, with_attempt).await.unwrap();
        let mut finished = commit(route(&task.id, RouteState::Held, 2));
        finished.finish_attempt = Some((
            started.id.clone(),
            AttemptEnd {
                finished_at: at(ended_ms),
                outcome: AttemptOutcome::Failed,
                verdict: Some(verdict_given),
                decision: None,
                evidence: evidence
                    .then(|| serde_json::json!({"provider": "other", "output": name})),
            },
        ));
        store.commit(1, finished).await.unwrap();
        seen.push(task.id);
    }
    let tasks = |attempts: Vec<Attempt>| -> Vec<TaskId> {
        attempts
            .into_iter()
            .map(|attempt| attempt.task_id)
            .collect()
    };
    assert_eq!(
        tasks(store.attempts_with_evidence(false, 10).await.unwrap()),
        [seen[1].clone(), seen[2].clone(), seen[0].clone()],
        "every one with evidence, newest first"
    );
    assert_eq!(
        tasks(store.attempts_with_evidence(true, 10).await.unwrap()),
        [seen[1].clone(), seen[2].clone()],
        "unknown, or medium"
    );
    let newest = store.attempts_with_evidence(false, 1).await.unwrap();
    assert_eq!(tasks(newest.clone()), [seen[1].clone()]);
    let end = newest[0].end.as_ref().unwrap();
    assert_eq!(
        end.evidence,
        Some(serde_json::json!({"provider": "other", "output": "b"}))
    );
}

/// A turn answered (by whom, truncated or not) and a new one asked; what
/// dispatching reads agrees with the task.
pub async fn turns_are_answered_and_added_and_progress_agrees(store: &dyn Store) {
    let (_, first, _) = held(store).await;
    let mut answered = commit(route(&first.id, RouteState::Completed, 3));
    answered.complete_turn = Some(CompletedTurn {
        number: 1,
        answer: "an \"answer\"\nover lines".into(),
        truncated: true,
        tool_calls: vec![providers::ToolCall {
            id: "call_1".into(),
            name: "read_file".into(),
            arguments: r#"{"path": "ünï.rs"}"#.into(),
        }],
        producer: Producer {
            candidate_index: 0,
            candidate_id: first.candidates[0].id.clone(),
            model: "m".into(),
        },
    });
    store.commit(2, answered).await.unwrap();
    let mut asked = commit(route(&first.id, RouteState::Queued, 4));
    asked.new_turn = Some(Turn {
        number: 2,
        prompt: "and then? ünïcödé".into(),
        answer: None,
        truncated: false,
        tool_calls: Vec::new(),
        producer: None,
        created_at: at(13_000),
        completed_at: None,
    });
    store.commit(3, asked).await.unwrap();
    let detail = store.get_task(&first.id).await.unwrap();
    assert_eq!(detail.turns.len(), 2);
    assert!(detail.turns[0].truncated);
    assert_eq!(
        detail.turns[0].answer.as_deref(),
        Some("an \"answer\"\nover lines")
    );
    assert_eq!(
        detail.turns[0].tool_calls[0].arguments,
        r#"{"path": "ünï.rs"}"#
    );
    assert_eq!(detail.turns[1].prompt, "and then? ünïcödé");
    let progress = store.get_progress(&first.id).await.unwrap();
    assert_eq!(progress.route, detail.route);
    assert_eq!(progress.turns, detail.turns);
    assert_eq!((progress.calls_on(0), progress.calls_on(1)), (1, 0));
    let mut held_again = commit(route(&first.id, RouteState::Held, 5));
    held_again.route.route.turn = 2;
    store.commit(4, held_again).await.unwrap();
    assert_eq!(
        store.get_route(&first.id).await.unwrap().route.turn,
        2,
        "the route is on the new turn"
    );
}

/// An unfinished task keeps its profile (and so its provider).
pub async fn an_unfinished_task_keeps_its_profile(store: &dyn Store) {
    let (profile_id, _, _) = held(store).await;
    let profile_in_use = store.delete_profile(&profile_id).await.unwrap_err();
    assert!(
        matches!(profile_in_use, StoreError::InUse { .. }),
        "{profile_in_use:?}"
    );
}

/// The same idempotency key again answers the first task and makes nothing new.
pub async fn an_idempotency_key_answers_the_first_task(store: &dyn Store) {
    let (_, first, _) = task(store, "alpha", Some("key-a")).await;
    let detail = store.get_task(&first.id).await.unwrap();
    let events = store.last_event_id().await.unwrap();
    let again = store
        .create_task(TaskWrite {
            task: Task {
                id: TaskId::new("alpha-other"),
                ..first.clone()
            },
            route: route(&TaskId::new("alpha-other"), RouteState::Queued, 0),
            turn: detail.turns[0].clone(),
            idempotency_key: Some("key-a".into()),
            event_json: "{}".into(),
            start: None,
        })
        .await
        .unwrap();
    assert_eq!((again.0.task.id.clone(), again.1), (first.id.clone(), None));
    assert_eq!(store.last_event_id().await.unwrap(), events, "no event");
    assert!(matches!(
        store.get_task(&TaskId::new("alpha-other")).await,
        Err(StoreError::NotFound { .. })
    ));
    let by_key = store
        .task_by_idempotency_key("key-a")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(by_key.task.id, first.id);
    assert!(
        store
            .task_by_idempotency_key("key-b")
            .await
            .unwrap()
            .is_none()
    );
}

/// The `beta` task waiting on a deadline at 50 s, at generation 1.
async fn waiting(store: &dyn Store) -> Task {
    let (_, waiting, _) = task(store, "beta", None).await;
    let mut wait = route(&waiting.id, RouteState::RetryWait, 1);
    wait.route.deadline_ms = Some(50_000);
    store.commit(0, commit(wait)).await.unwrap();
    waiting
}

/// Deadlines: due ones, earliest first, and the next one; a waiting route is
/// among the routes in its state.
pub async fn deadlines_are_due_once_they_pass(store: &dyn Store) {
    let waiting = waiting(store).await;
    assert_eq!(store.next_deadline(0).await.unwrap(), Some(50_000));
    assert_eq!(store.next_deadline(50_000).await.unwrap(), None, "after it");
    assert!(store.due_routes(49_999, 10).await.unwrap().is_empty());
    let due = store.due_routes(50_000, 10).await.unwrap();
    assert_eq!(due.len(), 1);
    assert_eq!((&due[0].task_id, due[0].route.generation), (&waiting.id, 1));
    let unfinished = store
        .routes_in(&[RouteState::Queued, RouteState::RetryWait], 10, None)
        .await
        .unwrap();
    assert!(unfinished.iter().any(|record| record.task_id == waiting.id));
}

/// Routes read a page at a time: in task id order across the states asked
/// for, from after the last one read, of those states only.
pub async fn routes_are_read_a_page_at_a_time(store: &dyn Store) {
    let mut queued = Vec::new();
    for name in ["d", "a", "c", "b", "e"] {
        let id = task(store, name, None).await.1.id;
        // Two of them running: a page merges the states in task id order.
        if matches!(name, "a" | "c") {
            store
                .commit(0, commit(route(&id, RouteState::Running, 1)))
                .await
                .unwrap();
        }
        queued.push(id);
    }
    waiting(store).await;
    queued.sort_unstable_by(|a, b| a.as_str().cmp(b.as_str()));
    let page = |after: Option<TaskId>| async move {
        store
            .routes_in(&[RouteState::Queued, RouteState::Running], 2, after)
            .await
            .unwrap()
            .into_iter()
            .map(|record| record.task_id)
            .collect::<Vec<_>>()
    };
    assert_eq!(page(None).await, queued[..2]);
    assert_eq!(page(Some(queued[1].clone())).await, queued[2..4]);
    assert_eq!(page(Some(queued[3].clone())).await, queued[4..]);
    assert!(page(Some(queued[4].clone())).await.is_empty());
}

/// Circuits: opened, extended only later, one probe at half-open (the claims
/// released at a restart), closed by a success.
pub async fn circuits_open_probe_once_and_close(store: &dyn Store) {
    let (_, first, _) = task(store, "alpha", None).await;
    let waiting = waiting(store).await;
    let provider = ProviderId::new("beta-p");
    let key = CircuitKey {
        provider_id: provider.clone(),
        model: Some("m".into()),
    };
    let mut opening = commit(route(&waiting.id, RouteState::WaitingForReset, 2));
    opening.circuit = Some(CircuitChange::Open {
        key: key.clone(),
        code: SemanticCode::RateLimited,
        until_ms: 60_000,
    });
    store.commit(1, opening).await.unwrap();
    let circuits = store.circuits_over(&provider, "m").await.unwrap();
    assert_eq!(circuits.len(), 1);
    assert_eq!(circuits[0].until_ms, 60_000);
    assert!(
        !store.claim_probe(&key, &waiting.id, 59_999).await.unwrap(),
        "not before half-open"
    );
    let mut queued = commit(route(&waiting.id, RouteState::Retrying, 3));
    queued.route.route.deadline_ms = None;
    store.commit(2, queued).await.unwrap();
    assert!(store.claim_probe(&key, &waiting.id, 60_000).await.unwrap());
    assert!(
        !store.claim_probe(&key, &first.id, 60_000).await.unwrap(),
        "one probe while the first is live"
    );
    store.release_probes().await.unwrap();
    assert!(store.claim_probe(&key, &first.id, 60_000).await.unwrap());
    let mut closing = commit(route(&waiting.id, RouteState::Completed, 4));
    closing.circuit = Some(CircuitChange::Close {
        provider_id: provider.clone(),
        model: "m".into(),
    });
    store.commit(3, closing).await.unwrap();
    assert!(
        store
            .circuits_over(&provider, "m")
            .await
            .unwrap()
            .is_empty()
    );
}

/// Route events: read after an id, and pruned to the newest, a bounded step
/// at a time.
pub async fn route_events_are_read_after_an_id_and_pruned(store: &dyn Store) {
    held(store).await;
    let last = store.last_event_id().await.unwrap();
    let (after, oldest) = store.events_after(last - 2, 10).await.unwrap();
    assert_eq!(after.len(), 2);
    assert!(oldest.is_some());
    let before = store.events_after(0, 100).await.unwrap().0.len();
    assert!(before > 2);
    assert_eq!(
        store.prune_events(1, 1).await.unwrap(),
        1,
        "one step drops at most one"
    );
    assert_eq!(
        store.events_after(0, 100).await.unwrap().0.len(),
        before - 1
    );
    assert_eq!(
        store.prune_events(1, 1_000).await.unwrap(),
        u64::try_from(before - 2).unwrap()
    );
    assert_eq!(store.prune_events(1, 1_000).await.unwrap(), 0);
    let (kept, oldest) = store.events_after(0, 10).await.unwrap();
    assert_eq!((kept.len(), oldest), (1, Some(last)));
}

/// Tasks are listed newest first, by state, each with its first prompt; the
/// unfinished ones are counted.
pub async fn tasks_are_listed_by_state(store: &dyn Store) {
    let (_, first, _) = held(store).await;
    waiting(store).await;
    let held = store
        .list_tasks(Some(RouteState::Held), None, 10)
        .await
        .unwrap();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].task.id, first.id);
    assert_eq!(held[0].prompt, "hello");
    assert_eq!(store.list_tasks(None, None, 10).await.unwrap().len(), 2);
    assert_eq!(store.count_open_routes().await.unwrap(), 2);
    store
        .commit(2, commit(route(&first.id, RouteState::Stopped, 3)))
        .await
        .unwrap();
    assert_eq!(
        store.count_open_routes().await.unwrap(),
        1,
        "a stopped route is not open"
    );
}

/// The commit of a firing from generation `expected`, at `now_ms`.
pub(crate) fn firing(task: &Task, expected: i64, now_ms: i64) -> RouteCommit {
    let mut record = route(&task.id, RouteState::Retrying, expected + 1);
    record.updated_at = at(now_ms);
    RouteCommit {
        fires_deadline: true,
        ..commit(record)
    }
}

/// A route waiting until `deadline_ms`, at generation 1.
pub(crate) async fn waiting_until(store: &dyn Store, name: &str, deadline_ms: i64) -> Task {
    let (_, task, _) = task(store, name, None).await;
    let mut wait = route(&task.id, RouteState::RetryWait, 1);
    wait.route.deadline_ms = Some(deadline_ms);
    store.commit(0, commit(wait)).await.unwrap();
    task
}

/// The current generation a refused commit reports, or a panic.
pub(crate) fn refused_at(result: Result<i64, StoreError>) -> i64 {
    match result {
        Err(StoreError::StaleGeneration { current, .. }) => current.route.generation,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// A commit that fires a deadline claims only a route still waiting on it: one
/// not due yet by the commit's time, or not waiting any more, is refused like a
/// stale generation (the route as it is, nothing written).
pub async fn firings(store: &dyn Store) {
    let task = waiting_until(store, "firing", 50_000).await;
    let events = store.last_event_id().await.unwrap();
    assert_eq!(
        refused_at(store.commit(1, firing(&task, 1, 49_999)).await),
        1,
        "not due yet"
    );
    assert_eq!(
        store.last_event_id().await.unwrap(),
        events,
        "nothing written"
    );
    store.commit(1, firing(&task, 1, 50_000)).await.unwrap();
    assert_eq!(
        store.get_route(&task.id).await.unwrap().route.state,
        RouteState::Retrying
    );
    assert_eq!(
        refused_at(store.commit(2, firing(&task, 2, 60_000)).await),
        2,
        "no longer waiting"
    );
}

/// Commits racing from one generation: exactly one wins, the rest are stale.
pub async fn concurrent_commits_exactly_one_wins(store: &dyn Store) {
    concurrent_commits_exactly_one_wins_across(store, store).await;
}

/// As [`concurrent_commits_exactly_one_wins`], the commits sent half through one
/// handle and half through another on the same database (two replicas).
pub async fn concurrent_commits_exactly_one_wins_across(first: &dyn Store, second: &dyn Store) {
    let store = first;
    let (_, task, _) = task(store, "race", None).await;
    let attempts = (0..8).map(|index| {
        let mut record = route(&task.id, RouteState::Stopped, 1);
        record.route.turn = index;
        let through = if index % 2 == 0 { first } else { second };
        through.commit(0, commit(record))
    });
    let results = futures_util::future::join_all(attempts).await;
    let won = results.iter().filter(|result| result.is_ok()).count();
    let stale = results
        .iter()
        .filter(|result| matches!(result, Err(StoreError::StaleGeneration { .. })))
        .count();
    assert_eq!((won, stale), (1, 7), "{results:?}");
    assert_eq!(store.get_route(&task.id).await.unwrap().route.generation, 1);
}

/// Many routes committing at once (the writer batches them): each runs its
/// `after` once durable, before its writer hears, and its event is published
/// on the feed in the order of the event ids; a stale commit and a failing one write
/// nothing, run nothing and publish nothing, and take nothing else with them.
pub async fn concurrent_commits_keep_their_order(store: &dyn Store) {
    let mut tasks = Vec::new();
    for index in 0..24 {
        tasks.push(task(store, &format!("order{index}"), None).await.1);
    }
    let before = store.last_event_id().await.unwrap();
    let (feed, mut published) = tokio::sync::broadcast::channel(256);
    store.attach_feed(feed);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let hook = |tag: i64| {
        let seen = seen.clone();
        AfterCommit::new(move |id| seen.lock().unwrap().push((tag, id)))
    };
    let mut commits = Vec::new();
    for (index, task) in tasks.iter().enumerate() {
        let mut running = commit(route(&task.id, RouteState::Running, 1));
        // The last two start attempts with one id: exactly one of them can be written.
        let attempt_id = if index >= 22 {
            "shared-attempt".to_owned()
        } else {
            format!("order-attempt-{index}")
        };
        running.start_attempt = Some(attempt(task, &attempt_id));
        running.event_json = format!(r#"{{"task": "{}"}}"#, task.id).into();
        running.after = hook(i64::try_from(index).unwrap());
        commits.push((0, running));
    }
    // From a generation the route never had: stale.
    let mut stale = commit(route(&tasks[0].id, RouteState::Stopped, 6));
    stale.after = hook(-1);
    commits.push((5, stale));
    let results = futures_util::future::join_all(commits.into_iter().map(|(expected, commit)| {
        let seen = seen.clone();
        async move {
            let result = store.commit(expected, commit).await;
            if let Ok(id) = &result {
                assert!(
                    seen.lock().unwrap().iter().any(|(_, seen)| seen == id),
                    "{id} ran its after-commit step before its writer heard"
                );
            }
            result
        }
    }))
    .await;

    let seen = seen.lock().unwrap().clone();
    assert!(
        seen.iter().all(|(tag, _)| *tag >= 0),
        "the stale commit ran nothing: {seen:?}"
    );
    assert!(
        matches!(results[24], Err(StoreError::StaleGeneration { .. })),
        "{:?}",
        results[24]
    );
    for (index, result) in results[..22].iter().enumerate() {
        let id = *result.as_ref().unwrap();
        assert!(
            seen.contains(&(i64::try_from(index).unwrap(), id)),
            "{index} ran with {id}"
        );
    }
    let shared: Vec<_> = results[22..24].iter().collect();
    assert_eq!(
        shared.iter().filter(|result| result.is_ok()).count(),
        1,
        "one attempt id, one write: {shared:?}"
    );
    for (offset, result) in shared.iter().enumerate() {
        let route = store.get_route(&tasks[22 + offset].id).await.unwrap();
        if result.is_ok() {
            assert_eq!(route.route.generation, 1);
        } else {
            assert_eq!(
                route.route.generation, 0,
                "the failed commit left its route"
            );
            assert!(
                store
                    .get_task(&tasks[22 + offset].id)
                    .await
                    .unwrap()
                    .attempts
                    .is_empty(),
                "and wrote no attempt"
            );
        }
    }
    assert_eq!(seen.len(), 23, "22 + the one shared write: {seen:?}");

    // The feed carries exactly the committed events, once each, in the order of
    // their ids.
    let mut fed = Vec::new();
    while fed.len() < 23 {
        match tokio::time::timeout(std::time::Duration::from_secs(10), published.recv()).await {
            Ok(Ok(crate::domain::Feed::Event(event))) => {
                // Past the tasks' creation, which a driver may publish after `before`.
                if event.id > before && event.data.starts_with(r#"{"task""#) {
                    fed.push(event);
                }
            }
            other => panic!("the feed ended early, after {fed:?}: {other:?}"),
        }
    }
    assert!(
        fed.windows(2).all(|pair| pair[0].id < pair[1].id),
        "in id order: {fed:?}"
    );
    let mut fed: Vec<String> = fed.iter().map(|event| event.data.to_string()).collect();
    fed.sort_unstable();
    let mut committed: Vec<String> = tasks
        .iter()
        .zip(&results)
        .filter(|(_, result)| result.is_ok())
        .map(|(task, _)| format!(r#"{{"task": "{}"}}"#, task.id))
        .collect();
    committed.sort_unstable();
    assert_eq!(fed, committed, "published once each");
}

/// What the home page reads: the waiting routes by deadline, every circuit by when
/// it half-opens, and the routes held or waiting now and those of the recent tasks,
/// counted by state.
pub async fn overview_reads_held_waiting_circuits_and_counts(store: &dyn Store) {
    let empty = store.route_counts(0).await.unwrap();
    assert_eq!(empty, crate::domain::RouteCounts::default());
    assert!(store.list_waiting(10).await.unwrap().is_empty());
    assert!(store.list_circuits().await.unwrap().is_empty());

    // Created at 3,000: one queued, one held, two waiting (the later deadline
    // first written), one completed.
    let (_, queued, _) = task(store, "queued", None).await;
    let mut ids = Vec::new();
    for (name, state, deadline_ms) in [
        ("held", RouteState::Held, None),
        ("late", RouteState::WaitingForReset, Some(90_000)),
        ("soon", RouteState::RetryWait, Some(60_000)),
        ("done", RouteState::Completed, None),
    ] {
        let (_, written, _) = task(store, name, None).await;
        let mut record = route(&written.id, state, 1);
        record.route.deadline_ms = deadline_ms;
        let mut change = commit(record);
        if name == "late" {
            change.circuit = Some(CircuitChange::Open {
                key: CircuitKey {
                    provider_id: ProviderId::new("late-p"),
                    model: None,
                },
                code: SemanticCode::UsageLimited,
                until_ms: 90_000,
            });
        }
        if name == "soon" {
            change.circuit = Some(CircuitChange::Open {
                key: CircuitKey {
                    provider_id: ProviderId::new("soon-p"),
                    model: Some("m".into()),
                },
                code: SemanticCode::RateLimited,
                until_ms: 60_000,
            });
        }
        store.commit(0, change).await.unwrap();
        ids.push(written.id);
    }

    let waiting: Vec<TaskId> = store
        .list_waiting(10)
        .await
        .unwrap()
        .into_iter()
        .map(|listing| listing.task.id)
        .collect();
    assert_eq!(waiting, [ids[2].clone(), ids[1].clone()], "soonest first");
    assert_eq!(
        store.list_waiting(1).await.unwrap().len(),
        1,
        "at most the limit"
    );

    let circuits = store.list_circuits().await.unwrap();
    let read: Vec<(&str, Option<&str>, i64)> = circuits
        .iter()
        .map(|circuit| {
            (
                circuit.key.provider_id.as_str(),
                circuit.key.model.as_deref(),
                circuit.until_ms,
            )
        })
        .collect();
    assert_eq!(
        read,
        [("soon-p", Some("m"), 60_000), ("late-p", None, 90_000)],
        "the soonest to half-open first"
    );

    let counts = store.route_counts(3_000).await.unwrap();
    assert_eq!((counts.held, counts.waiting), (1, 2));
    let mut recent = counts.created_since.clone();
    recent.sort_by_key(|(state, _)| state.as_str());
    assert_eq!(
        recent,
        [
            (RouteState::Completed, 1),
            (RouteState::Held, 1),
            (RouteState::Queued, 1),
            (RouteState::RetryWait, 1),
            (RouteState::WaitingForReset, 1),
        ]
    );
    // Tasks created before the window are not counted in it; held and waiting
    // routes are, whenever their task began.
    let later = store.route_counts(3_001).await.unwrap();
    assert!(later.created_since.is_empty());
    assert_eq!((later.held, later.waiting), (1, 2));
    let _ = queued;
}

/// The circuits page's reads and a person's "Close now": the routes waiting on
/// a circuit are listed with their candidate's provider and model, each opening
/// is in the history with the route whose failure made it, and a close fenced by
/// the reset the person saw makes those routes due at once (their generation
/// unchanged) and is recorded; a close at another reset, or of a circuit gone,
/// writes nothing. A candidate passed over is kept with its task.
pub async fn circuits_are_listed_closed_by_a_person_and_kept_in_history(store: &dyn Store) {
    let (_, waiting, _) = task(store, "cw", None).await;
    let (_, other, _) = task(store, "cx", None).await;
    let key = CircuitKey {
        provider_id: ProviderId::new("cw-p"),
        model: None,
    };
    // cw waits for its provider's reset, which its own failure stated and
    // which opened the provider's circuit.
    let mut record = route(&waiting.id, RouteState::WaitingForReset, 1);
    record.route.deadline_ms = Some(90_000);
    record.route.failure = Some(crate::domain::Failure {
        class: SemanticCode::UsageLimited.class(),
        code: SemanticCode::UsageLimited,
        catalogue: "test".into(),
        safe_cause: "usage limit reached".into(),
    });
    let mut change = commit(record);
    change.circuit = Some(CircuitChange::Open {
        key: key.clone(),
        code: SemanticCode::UsageLimited,
        until_ms: 90_000,
    });
    store.commit(0, change).await.unwrap();
    // cx waits for a retry of its own, and passed a candidate over on the way.
    let passed = PassedOver {
        turn: 1,
        candidate_index: 0,
        candidate_id: other.candidates[0].id.clone(),
        provider_id: other.candidates[0].provider_id.clone(),
        model: "m".into(),
        at: at(10_001),
        code: SemanticCode::UsageLimited,
        safe_cause: "Not sent: its window resets in 3 h.".into(),
        decision: policy::Decision::Skip,
    };
    let mut record = route(&other.id, RouteState::RetryWait, 1);
    record.route.deadline_ms = Some(80_000);
    let mut change = commit(record);
    change.passed_over = Some(passed.clone());
    store.commit(0, change).await.unwrap();
    assert_eq!(
        store.get_task(&other.id).await.unwrap().passed_over,
        [passed]
    );
    assert!(
        store
            .get_task(&waiting.id)
            .await
            .unwrap()
            .passed_over
            .is_empty()
    );

    assert_eq!(
        store.list_circuit_waits(10).await.unwrap(),
        [CircuitWait {
            task_id: waiting.id.clone(),
            code: SemanticCode::UsageLimited,
            provider_id: key.provider_id.clone(),
            model: "m".into(),
            deadline_ms: 90_000,
        }]
    );
    let circuits = store.list_circuits().await.unwrap();
    assert_eq!(circuits.len(), 1);
    assert_eq!(circuits[0].opened_at_ms, 10_001);
    let opened = CircuitHistoryEntry {
        key: key.clone(),
        kind: CircuitHistoryKind::Opened,
        code: SemanticCode::UsageLimited,
        until_ms: 90_000,
        at_ms: 10_001,
        task_id: Some(waiting.id.clone()),
    };
    assert_eq!(
        store.circuit_history(0, 10).await.unwrap(),
        std::slice::from_ref(&opened)
    );
    assert!(store.circuit_history(10_002, 10).await.unwrap().is_empty());

    // Seen at another reset: nothing changes.
    assert_eq!(
        store.close_circuit(&key, 89_999, 20_000).await.unwrap(),
        None
    );
    assert_eq!(store.list_circuits().await.unwrap().len(), 1);
    assert_eq!(store.circuit_history(0, 10).await.unwrap().len(), 1);

    assert_eq!(
        store.close_circuit(&key, 90_000, 20_000).await.unwrap(),
        Some(vec![waiting.id.clone()])
    );
    assert!(store.list_circuits().await.unwrap().is_empty());
    let released = store.get_route(&waiting.id).await.unwrap();
    assert_eq!(
        (released.route.deadline_ms, released.route.generation),
        (Some(20_000), 1),
        "due now, at the generation it waited at"
    );
    let due: Vec<TaskId> = store
        .due_routes(20_000, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|record| record.task_id)
        .collect();
    assert_eq!(due, std::slice::from_ref(&waiting.id));
    assert_eq!(
        store.get_route(&other.id).await.unwrap().route.deadline_ms,
        Some(80_000),
        "a route not waiting on the circuit keeps its deadline"
    );
    assert_eq!(
        store.circuit_history(0, 10).await.unwrap(),
        [
            CircuitHistoryEntry {
                kind: CircuitHistoryKind::ClosedByPerson,
                at_ms: 20_000,
                task_id: None,
                ..opened.clone()
            },
            opened
        ],
        "newest first"
    );
    assert_eq!(
        store.close_circuit(&key, 90_000, 21_000).await.unwrap(),
        None
    );

    assert_eq!(store.prune_circuit_history(20_000).await.unwrap(), 1);
    assert_eq!(store.circuit_history(0, 10).await.unwrap().len(), 1);
}

/// A pause leaves routes out of the scheduler's reads (due routes and the next
/// deadline): everywhere, or on their current candidate's provider. Pauses are
/// listed with their provider's name, oldest first; pausing what is paused, or
/// resuming what is not, writes nothing.
pub async fn paused_routes_are_not_due_and_pauses_are_kept(store: &dyn Store) {
    let a = waiting_until(store, "pa", 5_000).await;
    let b = waiting_until(store, "pb", 6_000).await;
    let due = || async {
        store
            .due_routes(10_000, 10)
            .await
            .unwrap()
            .into_iter()
            .map(|record| record.task_id)
            .collect::<Vec<TaskId>>()
    };
    assert_eq!(due().await, [a.id.clone(), b.id.clone()]);
    assert_eq!(store.next_deadline(0).await.unwrap(), Some(5_000));

    let pa = ProviderId::new("pa-p");
    assert!(store.set_pause(Some(&pa), true, 7_000).await.unwrap());
    assert!(!store.set_pause(Some(&pa), true, 7_001).await.unwrap());
    assert_eq!(due().await, std::slice::from_ref(&b.id));
    assert_eq!(store.next_deadline(0).await.unwrap(), Some(6_000));
    let paused_pa = Pause {
        provider_id: Some(pa.clone()),
        provider_name: Some("pa provider".into()),
        paused_at_ms: 7_000,
    };
    assert_eq!(
        store.list_pauses().await.unwrap(),
        std::slice::from_ref(&paused_pa)
    );

    assert!(store.set_pause(None, true, 8_000).await.unwrap());
    assert!(due().await.is_empty());
    assert_eq!(store.next_deadline(0).await.unwrap(), None);
    assert_eq!(
        store.list_pauses().await.unwrap(),
        [
            paused_pa,
            Pause {
                provider_id: None,
                provider_name: None,
                paused_at_ms: 8_000,
            }
        ]
    );

    assert!(store.set_pause(None, false, 9_000).await.unwrap());
    assert!(store.set_pause(Some(&pa), false, 9_000).await.unwrap());
    assert!(!store.set_pause(Some(&pa), false, 9_001).await.unwrap());
    assert!(store.list_pauses().await.unwrap().is_empty());
    assert_eq!(due().await, [a.id, b.id]);
}
