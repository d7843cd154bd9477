//! Many routes at a time: snapshots and unfinished attempts read for a batch of
//! tasks, and a batch of transitions written each behind its own fence.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use api::{AttemptId, TaskId};
use policy::route::{RouteCause, RouteState};

use super::at;
use super::tasks::{attempt, commit, route, task};
use crate::domain::{AfterCommit, AttemptEnd, AttemptOutcome, RouteCommit, Task};
use crate::store::Store;

/// `task_id`'s route held as interrupted from running at generation 1, its attempt
/// `attempt_id` finished, counting its after-commit step in `ran`.
fn hold(task_id: &TaskId, attempt_id: &str, ran: &Arc<AtomicUsize>) -> (i64, RouteCommit) {
    let mut held = route(task_id, RouteState::Held, 2);
    held.route.cause = Some(RouteCause::Interrupted);
    let ran = ran.clone();
    (
        1,
        RouteCommit {
            finish_attempt: Some((
                AttemptId::new(attempt_id),
                AttemptEnd::bare(AttemptOutcome::Interrupted, at(20_000)),
            )),
            after: AfterCommit::new(move |_| {
                ran.fetch_add(1, Ordering::SeqCst);
            }),
            ..commit(held)
        },
    )
}

/// Three tasks, each running its first attempt.
async fn running(store: &dyn Store) -> Vec<Task> {
    let mut tasks = Vec::new();
    for name in ["batch-a", "batch-b", "batch-c"] {
        let (_, task, _) = task(store, name, None).await;
        store
            .commit(
                0,
                RouteCommit {
                    start_attempt: Some(attempt(&task, &format!("{name}-a1"))),
                    ..commit(route(&task.id, RouteState::Running, 1))
                },
            )
            .await
            .unwrap();
        tasks.push(task);
    }
    tasks
}

/// A batch reads the snapshots of the tasks that exist, each with its
/// candidates, and each running task's unfinished attempt.
pub async fn a_batch_reads_snapshots_and_unfinished_attempts(store: &dyn Store) {
    let tasks = running(store).await;
    let ids: Vec<TaskId> = tasks.iter().map(|task| task.id.clone()).collect();
    let mut asked = ids.clone();
    asked.push(TaskId::new("batch-missing"));
    let mut snapshots = store.get_snapshots(&asked).await.unwrap();
    snapshots.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    assert_eq!(snapshots, tasks, "every task that exists, as stored");

    // Each running task's unfinished attempt, and none for a task without one.
    let mut unfinished = store.unfinished_attempts(&asked).await.unwrap();
    unfinished.sort_by(|a, b| a.0.as_str().cmp(b.0.as_str()));
    assert_eq!(
        unfinished,
        tasks
            .iter()
            .map(|task| (
                task.id.clone(),
                AttemptId::new(format!("{}-a1", task.id.as_str().trim_end_matches("-task")))
            ))
            .collect::<Vec<_>>()
    );
}

/// The second task's route moves on before the batch: its hold is stale and
/// writes nothing. The others are held, their attempts finished, their events
/// logged in order, their after-commit steps run once each; again, every fence
/// is stale and nothing more is written.
pub async fn a_batch_commit_fences_each_route_on_its_own(store: &dyn Store) {
    let ids: Vec<TaskId> = running(store)
        .await
        .into_iter()
        .map(|task| task.id)
        .collect();
    store
        .commit(1, commit(route(&ids[1], RouteState::Stopped, 2)))
        .await
        .unwrap();
    let events_before = store.last_event_id().await.unwrap();
    let ran = Arc::new(AtomicUsize::new(0));
    let written = store
        .commit_all(vec![
            hold(&ids[0], "batch-a-a1", &ran),
            hold(&ids[1], "batch-b-a1", &ran),
            hold(&ids[2], "batch-c-a1", &ran),
        ])
        .await
        .unwrap();
    assert!(written[0].is_some() && written[2].is_some(), "{written:?}");
    assert_eq!(written[1], None, "stale: nothing written");
    assert!(written[0] < written[2], "events in the batch's order");
    assert_eq!(
        ran.load(Ordering::SeqCst),
        2,
        "each written one's step, once"
    );
    let (events, _) = store.events_after(events_before, 10).await.unwrap();
    assert_eq!(events.len(), 2, "one event each written transition");

    for (index, expected) in [
        (0, (RouteState::Held, Some("interrupted"))),
        (1, (RouteState::Stopped, None)),
        (2, (RouteState::Held, Some("interrupted"))),
    ] {
        let detail = store.get_task(&ids[index]).await.unwrap();
        assert_eq!(detail.route.route.state, expected.0, "{index}");
        let outcome = detail.attempts[0]
            .end
            .as_ref()
            .map(|end| end.outcome.as_str());
        assert_eq!(
            outcome, expected.1,
            "{index}: the attempt ends only with its hold"
        );
        assert_eq!(
            detail.route.route.generation, 2,
            "{index}: one transition each"
        );
    }

    // Again: every fence is stale now, and nothing more is written.
    let again = store
        .commit_all(vec![hold(&ids[0], "batch-a-a1", &ran)])
        .await
        .unwrap();
    assert_eq!(again, [None]);
    assert_eq!(ran.load(Ordering::SeqCst), 2);
}

/// A transition the batch statement does not carry (a start) is written all
/// the same, behind its fence.
pub async fn a_batch_commit_carries_any_transition(store: &dyn Store) {
    let (_, fresh, _) = task(store, "batch-d", None).await;
    let started = store
        .commit_all(vec![(
            0,
            RouteCommit {
                start_attempt: Some(attempt(&fresh, "batch-d-a1")),
                ..commit(route(&fresh.id, RouteState::Running, 1))
            },
        )])
        .await
        .unwrap();
    assert!(started[0].is_some());
    let detail = store.get_task(&fresh.id).await.unwrap();
    assert_eq!(
        (detail.route.route.state, detail.attempts.len()),
        (RouteState::Running, 1)
    );
}
