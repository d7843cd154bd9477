//! "Try on recent failures": a candidate's draft policy played against the
//! stored calls of its provider and model, in the browser, beside what really
//! happened. The policy crate's [`policy::replay`] decides, the same code the
//! server runs; nothing is sent to a provider and nothing is stored. Reading the
//! calls and playing them is one lazy function ([`dry_run`]), split into a chunk
//! of its own that the first press of the button fetches.

use api::{ApiError, ProviderId, ReplayCallView, ReplayQuery, ReplayTaskView, TaskId, Timestamp};
use leptos::prelude::*;
use policy::replay::{Replay, ReplayEnd, StoredCall, StoredOutcome, replay};
use policy::{Classification, Confidence, Decision, PolicyDocument, format_duration_ms};

use super::context::EditorContext;
use crate::server_fns::load_replay;

/// One stored task, then and with the draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compared {
    /// The task.
    pub task_id: TaskId,
    /// Its first prompt.
    pub prompt: String,
    /// What happened, one entry a call.
    pub then: Vec<String>,
    /// How the candidate's part ended then.
    pub then_end: String,
    /// Time on the candidate then, milliseconds.
    pub then_ms: i64,
    /// What the draft would do, one entry a call.
    pub draft: Vec<String>,
    /// How the draft would end.
    pub draft_end: String,
    /// Time on the candidate with the draft, milliseconds.
    pub draft_ms: i64,
}

impl Compared {
    /// Whether the draft ends differently, or takes another time.
    pub fn differs(&self) -> bool {
        self.then_end != self.draft_end || self.then_ms != self.draft_ms
    }
}

/// Read the last `limit` tasks whose calls to `model` of `provider_id` failed,
/// and play `policy` against each.
#[cfg_attr(feature = "hydrate", leptos::lazy)]
pub async fn dry_run(
    provider_id: ProviderId,
    model: String,
    limit: u32,
    policy: PolicyDocument,
) -> Result<Vec<Compared>, ApiError> {
    let view = load_replay(ReplayQuery {
        provider_id,
        model,
        limit: Some(limit),
    })
    .await?;
    Ok(view
        .tasks
        .iter()
        .map(|task| compare(&policy, task))
        .collect())
}

/// What `policy` would have done with `task`'s calls, beside what happened.
pub fn compare(policy: &PolicyDocument, task: &ReplayTaskView) -> Compared {
    let calls: Vec<StoredCall> = task
        .calls
        .iter()
        .map(|call| stored_call(call, task.respond_by))
        .collect();
    // Jittered retries land where the engine put this task's.
    let seed = policy::backoff::jitter_seed(task.task_id.as_str());
    let played = replay(policy, &calls, task.has_next_candidate, seed);
    let (then, then_end, then_ms) = then_words(&task.calls);
    Compared {
        task_id: task.task_id.clone(),
        prompt: task.prompt.clone(),
        then,
        then_end,
        then_ms,
        draft: draft_words(&task.calls, &calls, &played),
        draft_end: end_words(played.end).to_owned(),
        draft_ms: played.elapsed_ms,
    }
}

/// A stored call as the replay plays it: a stated reset and a gateway call's
/// deadline each as a distance from its end.
fn stored_call(call: &ReplayCallView, respond_by: Option<Timestamp>) -> StoredCall {
    let took_ms = call.finished_at.as_millis() - call.started_at.as_millis();
    match (call.outcome.as_str(), call.code) {
        ("failed", Some(code)) => StoredCall {
            took_ms,
            outcome: StoredOutcome::Failed {
                classification: Classification::new(
                    code,
                    call.confidence.unwrap_or(Confidence::High),
                ),
                reset_in_ms: call
                    .reset_at
                    .map(|reset| reset.as_millis() - call.finished_at.as_millis()),
                unsafe_effect: call.unsafe_effect,
                deadline_in_ms: respond_by.map(|by| by.as_millis() - call.finished_at.as_millis()),
            },
        },
        _ => StoredCall::answered(took_ms),
    }
}

/// A call's code, or that it answered: "rate_limited", "answered".
fn call_words(call: &ReplayCallView) -> String {
    match call.code {
        Some(code) if call.outcome == "failed" => code.as_str().to_owned(),
        _ => call.outcome.clone(),
    }
}

/// A decision with the wait before what follows it.
fn decision_words(name: &str, wait_ms: Option<i64>) -> String {
    let wait = wait_ms.map(|ms| format_duration_ms(u64::try_from(ms).unwrap_or(0)));
    match (name, wait) {
        ("retry", Some(wait)) => format!("retry after {wait}"),
        ("wait_for_reset", Some(wait)) => format!("wait {wait} for the reset"),
        ("skip", _) => "skip to the next candidate".to_owned(),
        ("stop", _) => "stop".to_owned(),
        ("hold", _) => "hold for a person".to_owned(),
        (other, _) => other.replace('_', " "),
    }
}

fn end_words(end: ReplayEnd) -> &'static str {
    match end {
        ReplayEnd::Answered => "answered",
        ReplayEnd::Skipped => "skipped",
        ReplayEnd::Stopped(_) => "stopped",
        ReplayEnd::Held(_) => "held",
        ReplayEnd::BeyondTheRecord => "would call again (nothing stored says how that went)",
    }
}

/// What happened: each call and the decision taken, how it ended, and its time
/// on the candidate counted as the draft's is: each call's own time and each
/// wait its decision set (not the scheduler's lateness, a pause or a circuit's
/// wait between them), so an unchanged draft takes the same time.
fn then_words(calls: &[ReplayCallView]) -> (Vec<String>, String, i64) {
    let Some(first) = calls.first() else {
        return (Vec::new(), "no call".to_owned(), 0);
    };
    let words = calls
        .iter()
        .map(|call| {
            let wait = call
                .next_at
                .map(|next| next.as_millis() - call.finished_at.as_millis());
            match &call.decision {
                Some(decision) => {
                    format!("{}: {}", call_words(call), decision_words(decision, wait))
                }
                None => call_words(call),
            }
        })
        .collect();
    let last = calls.last().unwrap_or(first);
    let end = match last.decision.as_deref() {
        None if last.outcome != "failed" => "answered",
        Some("skip") => "skipped",
        Some("stop") => "stopped",
        Some("hold") => "held",
        _ => "left waiting (a person acted, or it still waits)",
    };
    let took_ms: i64 = calls
        .iter()
        .map(|call| {
            let took = call.finished_at.as_millis() - call.started_at.as_millis();
            let waited = call
                .next_at
                .map_or(0, |next| next.as_millis() - call.finished_at.as_millis());
            took.max(0) + waited.max(0)
        })
        .sum();
    (words, end.to_owned(), took_ms)
}

/// What the draft does: each call it plays back and its decision.
fn draft_words(stored: &[ReplayCallView], calls: &[StoredCall], played: &Replay) -> Vec<String> {
    played
        .steps
        .iter()
        .map(|step| {
            let call = &stored[step.call];
            let end_ms = step.at_ms + calls[step.call].took_ms.max(0);
            match step.decision {
                None => call_words(call),
                Some(decision) => {
                    let next_ms = match decision {
                        Decision::Retry { at_ms, .. } => Some(at_ms),
                        Decision::WaitForReset { until_ms } => Some(until_ms),
                        _ => None,
                    };
                    format!(
                        "{}: {}",
                        call_words(call),
                        decision_words(decision.name(), next_ms.map(|next| next - end_ms))
                    )
                }
            }
        })
        .collect()
}

/// The button and what it found, under a candidate's two sections.
#[component]
pub fn DryRun(key: u32) -> impl IntoView {
    let context = EditorContext::get();
    let form = context.form;
    let limit = RwSignal::new(api::REPLAY_TASKS_DEFAULT.to_string());
    let results = RwSignal::new(None::<Result<Vec<Compared>, String>>);
    let running = RwSignal::new(false);
    // Tasks the person left out of the totals.
    let left_out = RwSignal::new(Vec::<TaskId>::new());
    let run = move || {
        let Some(candidate) = form.with_untracked(|form| form.candidate(key).cloned()) else {
            return;
        };
        let policy = match (candidate.transient.parsed(), candidate.hard.parsed()) {
            (Some(transient), Some(hard)) => PolicyDocument { transient, hard },
            _ => {
                results.set(Some(Err(
                    "Fix this candidate's policy first: a value is missing or out of bounds."
                        .to_owned(),
                )));
                return;
            }
        };
        if candidate.provider_id.as_str().is_empty() || candidate.model.trim().is_empty() {
            results.set(Some(Err("Choose a provider and a model first.".to_owned())));
            return;
        }
        let limit = limit
            .get_untracked()
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|limit| (1..=api::REPLAY_TASKS_MAX).contains(limit))
            .unwrap_or(api::REPLAY_TASKS_DEFAULT);
        running.set(true);
        leptos::task::spawn_local(async move {
            let found = dry_run(
                candidate.provider_id.clone(),
                candidate.model.trim().to_owned(),
                limit,
                policy,
            )
            .await
            .map_err(|error| error.to_string());
            let _ = running.try_set(false);
            let _ = results.try_set(Some(found));
        });
    };
    let limit_id = format!("c{key}-dry-run-limit");
    view! {
        <section class="dry-run" aria-label="Try on recent failures">
            <div class="dry-run-controls">
                <label for=limit_id.clone()>"Last tasks"</label>
                <input id=limit_id type="number" inputmode="numeric" min="1" max=api::REPLAY_TASKS_MAX.to_string()
                    prop:value=move || limit.get()
                    on:input=move |ev| limit.set(event_target_value(&ev))
                    // Inside the editor's form: Enter tries, it does not save.
                    on:keydown=move |ev| if ev.key() == "Enter" {
                        ev.prevent_default();
                        run();
                    } />
                <button type="button" on:click=move |_| run() disabled=move || running.get()>
                    "Try on recent failures"
                </button>
            </div>
            <p class="hint">"Plays this draft against the stored failures of this provider and model, in your browser: nothing is sent and nothing is saved."</p>
            {move || results.get().map(|found| match found {
                Err(message) => view! { <p class="notice" role="status">{message}</p> }.into_any(),
                Ok(tasks) if tasks.is_empty() => view! {
                    <p class="empty">"No stored failure of this provider and model yet."</p>
                }.into_any(),
                Ok(tasks) => view! { <DryRunResults tasks left_out /> }.into_any(),
            })}
        </section>
    }
}

#[component]
fn DryRunResults(tasks: Vec<Compared>, left_out: RwSignal<Vec<TaskId>>) -> impl IntoView {
    let counted = {
        let tasks = tasks.clone();
        move || {
            left_out.with(|left_out| {
                tasks
                    .iter()
                    .filter(|task| !left_out.contains(&task.task_id))
                    .cloned()
                    .collect::<Vec<_>>()
            })
        }
    };
    let summary = move || {
        let counted = counted();
        let differ = counted.iter().filter(|task| task.differs()).count();
        let then: i64 = counted.iter().map(|task| task.then_ms).sum();
        let draft: i64 = counted.iter().map(|task| task.draft_ms).sum();
        let time = |ms: i64| format_duration_ms(u64::try_from(ms).unwrap_or(0));
        format!(
            "Of {} tasks, this draft would end {differ} differently. Time on this candidate: {} with the draft, {} then.",
            counted.len(),
            time(draft),
            time(then)
        )
    };
    view! {
        <p class="dry-run-summary" role="status">{summary}</p>
        <ul class="dry-run-tasks">
            {tasks.into_iter().map(|task| {
                let id = task.task_id.clone();
                let toggle_id = id.clone();
                let time = |ms: i64| format_duration_ms(u64::try_from(ms).unwrap_or(0));
                let differs = task.differs();
                view! {
                    <li class="dry-run-task">
                        <p class="task-title">
                            <label>
                                <input type="checkbox"
                                    prop:checked=move || left_out.with(|left| !left.contains(&id))
                                    on:change=move |_| left_out.update(|left| {
                                        if let Some(at) = left.iter().position(|other| *other == toggle_id) {
                                            left.remove(at);
                                        } else {
                                            left.push(toggle_id.clone());
                                        }
                                    }) />
                                " Count"
                            </label>
                            " "
                            <a href=format!("/tasks/{}", task.task_id)>{task.prompt.clone()}</a>
                            {differs.then_some(view! { " " <span class="badge state-retrying">"Differs"</span> })}
                        </p>
                        <div class="dry-run-columns">
                            <div>
                                <p class="dry-run-heading">{format!("Then: {} after {}", task.then_end, time(task.then_ms))}</p>
                                <ol>{task.then.iter().map(|step| view! { <li>{step.clone()}</li> }).collect_view()}</ol>
                            </div>
                            <div>
                                <p class="dry-run-heading">{format!("This draft: {} after {}", task.draft_end, time(task.draft_ms))}</p>
                                <ol>{task.draft.iter().map(|step| view! { <li>{step.clone()}</li> }).collect_view()}</ol>
                            </div>
                        </div>
                    </li>
                }
            }).collect_view()}
        </ul>
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use policy::{OnExhausted, SemanticCode};

    /// A task of these calls on its first candidate, with a next one to skip to,
    /// and a gateway call's deadline `respond_by` (unix milliseconds) or none.
    fn task_of(respond_by: Option<i64>, calls: Vec<ReplayCallView>) -> ReplayTaskView {
        ReplayTaskView {
            task_id: TaskId::new("t1"),
            profile_name: "p".into(),
            prompt: "Hello".into(),
            created_at: Timestamp::from_millis(0),
            candidate_index: 0,
            has_next_candidate: true,
            respond_by: respond_by.map(Timestamp::from_millis),
            calls,
        }
    }

    fn call(
        at: i64,
        took: i64,
        code: Option<SemanticCode>,
        decision: Option<&str>,
        next: Option<i64>,
    ) -> ReplayCallView {
        ReplayCallView {
            started_at: Timestamp::from_millis(at),
            finished_at: Timestamp::from_millis(at + took),
            outcome: if code.is_some() { "failed" } else { "answered" }.to_owned(),
            code,
            confidence: code.map(|_| Confidence::High),
            reset_at: None,
            unsafe_effect: false,
            decision: decision.map(str::to_owned),
            next_at: next.map(Timestamp::from_millis),
        }
    }

    #[test]
    fn an_unchanged_draft_keeps_a_gateway_calls_deadline_after_a_late_retry() {
        // A gateway call due 10 s after its first call. Its first retry came 8.9 s
        // late (held by a circuit), and the engine, at 9.6 s, would not take the
        // second retry (due at 10.6 s): it skipped. The saved policy, replayed,
        // does the same, though its own clock puts the second call at 0.6 s.
        let task = task_of(
            Some(10_000),
            vec![
                call(
                    0,
                    100,
                    Some(SemanticCode::Overloaded),
                    Some("retry"),
                    Some(600),
                ),
                call(
                    9_500,
                    100,
                    Some(SemanticCode::Overloaded),
                    Some("skip"),
                    None,
                ),
            ],
        );
        let same = compare(&PolicyDocument::default(), &task);
        assert_eq!(same.draft_end, same.then_end, "{same:?}");
        assert!(!same.differs(), "{same:?}");
        // Without the deadline the draft would retry again.
        let unbounded = ReplayTaskView {
            respond_by: None,
            ..task
        };
        assert!(compare(&PolicyDocument::default(), &unbounded).differs());
    }

    #[test]
    fn a_draft_that_skips_at_once_is_compared_with_the_retries_that_happened() {
        // Then: overloaded, retried after 0.5 s, overloaded, retried after 1 s, answered.
        let task = task_of(
            None,
            vec![
                call(
                    0,
                    100,
                    Some(SemanticCode::Overloaded),
                    Some("retry"),
                    Some(600),
                ),
                call(
                    600,
                    100,
                    Some(SemanticCode::Overloaded),
                    Some("retry"),
                    Some(1_700),
                ),
                call(1_700, 300, None, None, None),
            ],
        );
        let same = compare(&PolicyDocument::default(), &task);
        assert_eq!(
            same.then,
            [
                "overloaded: retry after 0.5 s",
                "overloaded: retry after 1 s",
                "answered"
            ]
        );
        assert_eq!((same.then_end.as_str(), same.then_ms), ("answered", 2_000));
        assert_eq!(same.draft, same.then);
        assert!(!same.differs(), "{same:#?}");

        let mut quick = PolicyDocument::default();
        quick.transient.retry.enabled = false;
        quick.transient.on_exhausted = OnExhausted::Skip;
        let skipped = compare(&quick, &task);
        assert_eq!(skipped.draft, ["overloaded: skip to the next candidate"]);
        assert_eq!(
            (skipped.draft_end.as_str(), skipped.draft_ms),
            ("skipped", 100)
        );
        assert!(skipped.differs());
    }
}
