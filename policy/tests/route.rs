//! The route machine (SPEC 5) as tables: every (state, event) pair with the state,
//! cause and effects it gives, and every event with what it does to the rest of the
//! route (the failure and its exhausted outcome, the episode, the turn, the token
//! budget).

use RouteEffect::*;
use RouteState::*;
use policy::route::*;
use policy::{
    Class, Decision, Episode, HoldCause, OnExhausted, RetryCounts, SemanticCode, StopCause,
};

const NOW: i64 = 1_796_004_000_000;

/// A route in `state`, on candidate 0, with what that state carries.
fn route_in(state: RouteState) -> Route {
    Route {
        state,
        generation: 7,
        deadline_ms: state.has_deadline().then_some(NOW + 5_000),
        retry_ordinal: (state == RetryWait).then_some(2),
        cause: match state {
            Held => Some(RouteCause::Unrecognized),
            Stopped => Some(RouteCause::Exhausted),
            _ => None,
        },
        new_episode: false,
        ..Route::new(0)
    }
}

/// A route waiting on an open circuit.
fn circuit_wait() -> Route {
    Route {
        circuit_wait: true,
        ..route_in(WaitingForReset)
    }
}

/// A failure of `code`, as the catalogue classified it.
fn failure(code: SemanticCode) -> Failure {
    Failure {
        class: code.class(),
        code,
        catalogue: "2026.12.0".to_owned(),
        safe_cause: format!("{} from the provider", code.as_str()),
    }
}

fn failed(decision: Decision) -> RouteEvent {
    RouteEvent::Failed {
        decision,
        failure: failure(SemanticCode::Overloaded),
        on_exhausted: Some(OnExhausted::Skip),
    }
}

fn not_sent(decision: Decision) -> RouteEvent {
    RouteEvent::NotSent {
        decision,
        failure: failure(SemanticCode::UsageLimited),
        on_exhausted: OnExhausted::Skip,
    }
}

fn circuit_open(until_ms: i64) -> RouteEvent {
    RouteEvent::CircuitOpen {
        until_ms,
        failure: failure(SemanticCode::UsageLimited),
        on_exhausted: OnExhausted::Stop,
    }
}

/// What an accepted transition must give: the new state, its cause, the effects.
type Expected = (RouteState, Option<RouteCause>, &'static [RouteEffect]);

/// An event, its context, and the states that accept it with what they give.
type Row = (RouteEvent, RouteContext, Vec<(RouteState, Expected)>);

const NONE: &[RouteEffect] = &[];
const TIMED: &[RouteEffect] = &[ArmDeadline];
const QUEUED: &[RouteEffect] = &[Enqueue];
const CANCELLED: &[RouteEffect] = &[CancelInFlight];

const NEXT: RouteContext = RouteContext {
    next_candidate: Some(1),
};
const LAST: RouteContext = RouteContext {
    next_candidate: None,
};

/// Every (state, event) pair: the states listed accept the event as given, every
/// other state refuses it and nothing changes.
#[test]
fn every_state_and_event() {
    use RouteCause as C;
    let user = Some(C::StoppedByUser);
    let client = Some(C::CancelledByClient);
    let rows: Vec<Row> = vec![
        (
            RouteEvent::AttemptStarted,
            NEXT,
            vec![
                (Queued, (Running, None, NONE)),
                (Retrying, (Running, None, NONE)),
            ],
        ),
        (
            RouteEvent::Succeeded,
            NEXT,
            vec![(Running, (Completed, None, NONE))],
        ),
        (
            failed(Decision::WaitForReset {
                until_ms: NOW + 60_000,
            }),
            NEXT,
            vec![(Running, (WaitingForReset, None, TIMED))],
        ),
        (
            failed(Decision::Retry {
                ordinal: 1,
                at_ms: NOW + 500,
            }),
            NEXT,
            vec![(Running, (RetryWait, None, TIMED))],
        ),
        (
            failed(Decision::Skip),
            NEXT,
            vec![(Running, (Retrying, None, QUEUED))],
        ),
        (
            failed(Decision::Skip),
            LAST,
            vec![(Running, (Stopped, Some(C::NoCandidate), NONE))],
        ),
        (
            failed(Decision::Stop {
                cause: StopCause::Unrecoverable,
            }),
            NEXT,
            vec![(Running, (Stopped, Some(C::Unrecoverable), NONE))],
        ),
        (
            failed(Decision::Hold {
                cause: HoldCause::UnsafeEffect,
            }),
            NEXT,
            vec![(Running, (Held, Some(C::UnsafeEffect), NONE))],
        ),
        (
            RouteEvent::DeadlineReached,
            NEXT,
            vec![
                (RetryWait, (Retrying, None, QUEUED)),
                (WaitingForReset, (Retrying, None, QUEUED)),
            ],
        ),
        (
            circuit_open(NOW + 90_000),
            NEXT,
            vec![
                (Queued, (WaitingForReset, None, TIMED)),
                (Retrying, (WaitingForReset, None, TIMED)),
            ],
        ),
        (
            RouteEvent::Action(ManualAction::RetryNow),
            NEXT,
            vec![
                (RetryWait, (Retrying, None, QUEUED)),
                (WaitingForReset, (Retrying, None, QUEUED)),
                (Held, (Retrying, None, QUEUED)),
            ],
        ),
        (
            RouteEvent::Action(ManualAction::SkipNow),
            NEXT,
            vec![
                (RetryWait, (Retrying, None, QUEUED)),
                (WaitingForReset, (Retrying, None, QUEUED)),
                (Held, (Retrying, None, QUEUED)),
            ],
        ),
        (
            RouteEvent::Action(ManualAction::SkipNow),
            LAST,
            vec![
                (RetryWait, (Stopped, Some(C::NoCandidate), NONE)),
                (WaitingForReset, (Stopped, Some(C::NoCandidate), NONE)),
                (Held, (Stopped, Some(C::NoCandidate), NONE)),
            ],
        ),
        (
            RouteEvent::Action(ManualAction::CancelWait),
            NEXT,
            vec![
                (RetryWait, (Held, Some(C::CancelledWait), NONE)),
                (WaitingForReset, (Held, Some(C::CancelledWait), NONE)),
            ],
        ),
        (
            RouteEvent::Action(ManualAction::Stop),
            NEXT,
            vec![
                (Queued, (Stopped, user, NONE)),
                (Running, (Stopped, user, CANCELLED)),
                (RetryWait, (Stopped, user, NONE)),
                (WaitingForReset, (Stopped, user, NONE)),
                (Retrying, (Stopped, user, NONE)),
                (Held, (Stopped, user, NONE)),
            ],
        ),
        (
            not_sent(Decision::Skip),
            NEXT,
            vec![
                (Queued, (Retrying, None, QUEUED)),
                (Retrying, (Retrying, None, QUEUED)),
            ],
        ),
        (
            not_sent(Decision::Skip),
            LAST,
            vec![
                (Queued, (Stopped, Some(C::NoCandidate), NONE)),
                (Retrying, (Stopped, Some(C::NoCandidate), NONE)),
            ],
        ),
        (
            not_sent(Decision::Stop {
                cause: StopCause::Exhausted,
            }),
            NEXT,
            vec![
                (Queued, (Stopped, Some(C::Exhausted), NONE)),
                (Retrying, (Stopped, Some(C::Exhausted), NONE)),
            ],
        ),
        (
            not_sent(Decision::Hold {
                cause: HoldCause::Unrecognized,
            }),
            NEXT,
            vec![
                (Queued, (Held, Some(C::Unrecognized), NONE)),
                (Retrying, (Held, Some(C::Unrecognized), NONE)),
            ],
        ),
        // A wait is a circuit's (circuit_open), never a decision of a route not sent.
        (
            not_sent(Decision::Retry {
                ordinal: 1,
                at_ms: NOW + 500,
            }),
            NEXT,
            vec![],
        ),
        (
            not_sent(Decision::WaitForReset {
                until_ms: NOW + 500,
            }),
            NEXT,
            vec![],
        ),
        (
            RouteEvent::Escalated { max_tokens: 8_192 },
            NEXT,
            vec![(Running, (Retrying, None, QUEUED))],
        ),
        (
            RouteEvent::NewTurn,
            NEXT,
            vec![(Completed, (Queued, None, QUEUED))],
        ),
        (
            RouteEvent::Interrupted,
            NEXT,
            vec![(Running, (Held, Some(C::Interrupted), NONE))],
        ),
        // A held route waits for a person, not for the client that went away.
        (
            RouteEvent::ClientCancelled,
            NEXT,
            vec![
                (Queued, (Stopped, client, NONE)),
                (Running, (Stopped, client, CANCELLED)),
                (RetryWait, (Stopped, client, NONE)),
                (WaitingForReset, (Stopped, client, NONE)),
                (Retrying, (Stopped, client, NONE)),
            ],
        ),
    ];
    for (event, context, accepted) in &rows {
        for state in RouteState::ALL {
            let before = route_in(state);
            let got = transition(&before, event, context);
            match accepted.iter().find(|(from, _)| *from == state) {
                Some((_, (to, cause, effects))) => {
                    let Transition {
                        route,
                        effects: got_effects,
                    } = got.unwrap_or_else(|refused| panic!("{state:?} {event:?}: {refused:?}"));
                    assert_eq!(
                        (
                            route.state,
                            route.cause,
                            got_effects.as_slice(),
                            route.generation
                        ),
                        (*to, *cause, *effects, before.generation + 1),
                        "{state:?} {event:?}"
                    );
                    assert_eq!(
                        route.deadline_ms.is_some(),
                        route.state.has_deadline(),
                        "{state:?} {event:?}: a deadline only where one is pending"
                    );
                    assert_eq!(
                        got_effects.contains(&ArmDeadline),
                        route.state.has_deadline(),
                        "{state:?} {event:?}: a deadline entered is armed"
                    );
                    assert_eq!(
                        got_effects.contains(&Enqueue),
                        matches!(route.state, Queued | Retrying),
                        "{state:?} {event:?}: a route due to send is handed to the dispatcher"
                    );
                    assert!(
                        route.retry_ordinal.is_none()
                            || matches!(route.state, RetryWait | Retrying | Running)
                            || route.circuit_wait,
                        "{state:?} {event:?}: a retry ordinal only while a retry is on"
                    );
                    let skipped = matches!(event.decision(), Some(Decision::Skip))
                        || *event == RouteEvent::Action(ManualAction::SkipNow);
                    assert_eq!(
                        route.candidate,
                        if skipped && route.state == Retrying {
                            1
                        } else {
                            before.candidate
                        },
                        "{state:?} {event:?}: only a skip moves the candidate"
                    );
                }
                None => assert_eq!(
                    got,
                    Err(Refused {
                        state,
                        event: event.name()
                    }),
                    "{state:?} {event:?} must be refused"
                ),
            }
        }
    }
    // The table covers every event kind, every decision of the two that carry one,
    // and every action.
    let labels: std::collections::BTreeSet<String> = rows
        .iter()
        .map(|(event, _, _)| match event.decision() {
            Some(decision) => format!("{} {}", event.name(), decision.name()),
            None => event.name().to_owned(),
        })
        .collect();
    assert_eq!(
        labels.len(),
        8 + 2 * 5 + ManualAction::ALL.len(),
        "{labels:?}"
    );
}

/// What recovery keeps beside the state: each event's row says all of it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Kept {
    failure: Option<Failure>,
    pending_outcome: Option<OnExhausted>,
    episode: Episode,
    turn: u32,
    escalations: u32,
    max_tokens: Option<u32>,
    new_episode: bool,
    candidate: usize,
}

impl Kept {
    fn of(route: &Route) -> Self {
        Self {
            failure: route.failure.clone(),
            pending_outcome: route.pending_outcome,
            episode: route.episode,
            turn: route.turn,
            escalations: route.escalations,
            max_tokens: route.max_tokens,
            new_episode: route.new_episode,
            candidate: route.candidate,
        }
    }
}

/// A route in `state` that has been through things: an earlier failure with its
/// outcome, a retry and a reset wait in its episode, a second turn, an escalation.
fn worn(state: RouteState) -> Route {
    Route {
        failure: Some(failure(SemanticCode::RateLimited)),
        pending_outcome: Some(OnExhausted::Stop),
        episode: Episode {
            retries: RetryCounts {
                transient: 1,
                hard: 0,
            },
            waited_for_reset: false,
        },
        turn: 2,
        escalations: 1,
        max_tokens: Some(4_096),
        ..route_in(state)
    }
}

/// One row: the rule it proves, the route before, the event and its context, and
/// how what the route keeps changes (from the worn route's).
struct RecordRow {
    name: &'static str,
    before: Route,
    event: RouteEvent,
    context: RouteContext,
    change: fn(&mut Kept),
}

fn keeps(_: &mut Kept) {}

fn record_table() -> Vec<RecordRow> {
    let row = |name, before, event, context, change| RecordRow {
        name,
        before,
        event,
        context,
        change,
    };
    vec![
        row(
            "an attempt in the same episode keeps its counts",
            worn(Retrying),
            RouteEvent::AttemptStarted,
            NEXT,
            keeps,
        ),
        row(
            "an attempt that starts a new episode clears its counts",
            Route {
                new_episode: true,
                ..worn(Retrying)
            },
            RouteEvent::AttemptStarted,
            NEXT,
            |kept| {
                kept.episode = Episode::default();
                kept.new_episode = false;
            },
        ),
        row(
            "an answer ends the turn's failure, outcome, episode and token budget",
            worn(Running),
            RouteEvent::Succeeded,
            NEXT,
            |kept| {
                kept.failure = None;
                kept.pending_outcome = None;
                kept.episode = Episode::default();
                kept.escalations = 0;
                kept.max_tokens = None;
                kept.new_episode = true;
            },
        ),
        row(
            "an escalation is counted and sets the next send's budget",
            worn(Running),
            RouteEvent::Escalated { max_tokens: 8_192 },
            NEXT,
            |kept| {
                kept.escalations = 2;
                kept.max_tokens = Some(8_192);
            },
        ),
        row(
            "a failure retried is counted in its class; it and its outcome are kept",
            worn(Running),
            failed(Decision::Retry {
                ordinal: 2,
                at_ms: NOW + 1_000,
            }),
            NEXT,
            |kept| {
                kept.episode.retries.transient = 2;
                kept.failure = Some(failure(SemanticCode::Overloaded));
                kept.pending_outcome = Some(OnExhausted::Skip);
            },
        ),
        row(
            "a hard failure retried is counted as hard",
            worn(Running),
            RouteEvent::Failed {
                decision: Decision::Retry {
                    ordinal: 1,
                    at_ms: NOW + 1_000,
                },
                failure: failure(SemanticCode::AuthFailed),
                on_exhausted: Some(OnExhausted::Stop),
            },
            NEXT,
            |kept| {
                kept.episode.retries.hard = 1;
                kept.failure = Some(failure(SemanticCode::AuthFailed));
            },
        ),
        row(
            "a reset wait uses up the episode's one wait",
            worn(Running),
            failed(Decision::WaitForReset {
                until_ms: NOW + 30_000,
            }),
            NEXT,
            |kept| {
                kept.episode.waited_for_reset = true;
                kept.failure = Some(failure(SemanticCode::Overloaded));
                kept.pending_outcome = Some(OnExhausted::Skip);
            },
        ),
        row(
            "an outside failure has no section, so no exhausted outcome",
            worn(Running),
            RouteEvent::Failed {
                decision: Decision::Stop {
                    cause: StopCause::Unrecoverable,
                },
                failure: failure(SemanticCode::InvalidRequest),
                on_exhausted: None,
            },
            NEXT,
            |kept| {
                kept.failure = Some(failure(SemanticCode::InvalidRequest));
                kept.pending_outcome = None;
            },
        ),
        row(
            "a failure held for a person is kept as the route's cause",
            worn(Running),
            failed(Decision::Hold {
                cause: HoldCause::UnsafeEffect,
            }),
            NEXT,
            |kept| {
                kept.failure = Some(failure(SemanticCode::Overloaded));
                kept.pending_outcome = Some(OnExhausted::Skip);
            },
        ),
        row(
            "a skip moves to the next candidate: a new episode at its start, a new token budget",
            worn(Running),
            failed(Decision::Skip),
            NEXT,
            |kept| {
                kept.failure = Some(failure(SemanticCode::Overloaded));
                kept.pending_outcome = Some(OnExhausted::Skip);
                kept.candidate = 1;
                kept.new_episode = true;
                kept.escalations = 0;
                kept.max_tokens = None;
            },
        ),
        row(
            "a skip with no candidate left stays on its candidate and budget",
            worn(Running),
            failed(Decision::Skip),
            LAST,
            |kept| {
                kept.failure = Some(failure(SemanticCode::Overloaded));
                kept.pending_outcome = Some(OnExhausted::Skip);
            },
        ),
        row(
            "a circuit's wait shows the circuit's failure and the section's outcome",
            worn(Retrying),
            circuit_open(NOW + 90_000),
            NEXT,
            |kept| {
                kept.failure = Some(failure(SemanticCode::UsageLimited));
                kept.pending_outcome = Some(OnExhausted::Stop);
            },
        ),
        row(
            "a fresh route's circuit wait shows them too",
            route_in(Queued),
            circuit_open(NOW + 90_000),
            NEXT,
            |kept| {
                *kept = Kept::of(&route_in(Queued));
                kept.failure = Some(failure(SemanticCode::UsageLimited));
                kept.pending_outcome = Some(OnExhausted::Stop);
            },
        ),
        row(
            "a route not sent records the circuit's failure, and a skip moves it on",
            worn(Retrying),
            not_sent(Decision::Skip),
            NEXT,
            |kept| {
                kept.failure = Some(failure(SemanticCode::UsageLimited));
                kept.pending_outcome = Some(OnExhausted::Skip);
                kept.candidate = 1;
                kept.new_episode = true;
                kept.escalations = 0;
                kept.max_tokens = None;
            },
        ),
        row(
            "a person's skip moves past the failure and its outcome",
            worn(Held),
            RouteEvent::Action(ManualAction::SkipNow),
            NEXT,
            |kept| {
                kept.failure = None;
                kept.pending_outcome = None;
                kept.candidate = 1;
                kept.new_episode = true;
                kept.escalations = 0;
                kept.max_tokens = None;
            },
        ),
        row(
            "retry now from held starts a new episode with its next attempt",
            worn(Held),
            RouteEvent::Action(ManualAction::RetryNow),
            NEXT,
            |kept| kept.new_episode = true,
        ),
        row(
            "retry now from a wait is the same retry, in the same episode",
            worn(RetryWait),
            RouteEvent::Action(ManualAction::RetryNow),
            NEXT,
            keeps,
        ),
        row(
            "a deadline keeps the record",
            worn(WaitingForReset),
            RouteEvent::DeadlineReached,
            NEXT,
            keeps,
        ),
        row(
            "a cancelled wait keeps the failure it waited on",
            worn(RetryWait),
            RouteEvent::Action(ManualAction::CancelWait),
            NEXT,
            keeps,
        ),
        row(
            "a stop keeps the record",
            worn(Running),
            RouteEvent::Action(ManualAction::Stop),
            NEXT,
            keeps,
        ),
        row(
            "an interrupted attempt keeps the record",
            worn(Running),
            RouteEvent::Interrupted,
            NEXT,
            keeps,
        ),
        row(
            "a client gone keeps the record",
            worn(RetryWait),
            RouteEvent::ClientCancelled,
            NEXT,
            keeps,
        ),
        row(
            "a new turn is counted and starts clean",
            worn(Completed),
            RouteEvent::NewTurn,
            NEXT,
            |kept| {
                kept.turn = 3;
                kept.failure = None;
                kept.pending_outcome = None;
                kept.episode = Episode::default();
                kept.escalations = 0;
                kept.max_tokens = None;
                kept.new_episode = true;
            },
        ),
    ]
}

/// Each event does to the rest of the route exactly what its row says.
#[test]
fn record_table_rows() {
    for row in record_table() {
        let mut expected = Kept::of(&worn(row.before.state));
        if row.before.new_episode {
            expected.new_episode = true;
        }
        (row.change)(&mut expected);
        let after = transition(&row.before, &row.event, &row.context)
            .unwrap_or_else(|refused| panic!("{}: {refused:?}", row.name))
            .route;
        assert_eq!(Kept::of(&after), expected, "{}", row.name);
    }
}

/// The record table has a row for every kind of event and every action.
#[test]
fn the_record_table_covers_every_event() {
    let covered: std::collections::BTreeSet<&str> =
        record_table().iter().map(|row| row.event.name()).collect();
    let all: std::collections::BTreeSet<&str> = [
        "attempt_started",
        "succeeded",
        "failed",
        "deadline_reached",
        "circuit_open",
        "not_sent",
        "escalated",
        "new_turn",
        "interrupted",
        "client_cancelled",
    ]
    .into_iter()
    .chain(ManualAction::ALL.iter().map(|action| action.as_str()))
    .collect();
    assert_eq!(covered, all);
}

/// The actions a page shows are exactly those the machine accepts.
#[test]
fn the_actions_shown_are_the_actions_accepted() {
    for state in RouteState::ALL {
        for action in ManualAction::ALL {
            let accepted = transition(&route_in(state), &RouteEvent::Action(action), &NEXT).is_ok();
            assert_eq!(
                accepted,
                state.actions().contains(&action),
                "{state:?} {action:?}"
            );
        }
    }
}

/// Every state on restart, before and after its deadline; what the answer leads to
/// is a transition the machine accepts.
#[test]
fn restart_gives_every_route_one_answer() {
    for state in RouteState::ALL {
        let route = route_in(state);
        for now_ms in [NOW, NOW + 10_000] {
            let expected = match state {
                Queued | Retrying => OnRestart::Enqueue,
                Running => OnRestart::Interrupt,
                RetryWait | WaitingForReset if now_ms < NOW + 5_000 => OnRestart::Rearm,
                RetryWait | WaitingForReset => OnRestart::Fire,
                Held | Completed | Stopped => OnRestart::Nothing,
            };
            let answer = on_restart(&route, now_ms);
            assert_eq!(answer, expected, "{state:?} at {now_ms}");
            if let Some(event) = answer.event() {
                let held_or_due = transition(&route, &event, &LAST).unwrap().route.state;
                assert!(
                    matches!(held_or_due, Held | Retrying),
                    "{state:?}: {held_or_due:?}"
                );
            }
        }
    }
}

#[test]
fn waits_carry_their_deadline_and_a_retry_its_ordinal_to_the_dispatch() {
    let running = route_in(Running);
    let waiting = transition(
        &running,
        &failed(Decision::Retry {
            ordinal: 3,
            at_ms: NOW + 2_000,
        }),
        &LAST,
    )
    .unwrap()
    .route;
    assert_eq!(
        (waiting.deadline_ms, waiting.retry_ordinal),
        (Some(NOW + 2_000), Some(3))
    );
    // Retry now fires the same retry early: it keeps its ordinal, and its episode.
    let early = transition(&waiting, &RouteEvent::Action(ManualAction::RetryNow), &LAST)
        .unwrap()
        .route;
    assert_eq!(
        (
            early.state,
            early.retry_ordinal,
            early.deadline_ms,
            early.new_episode
        ),
        (Retrying, Some(3), None, false)
    );
    // From held, retry now starts a new episode.
    let held = transition(
        &route_in(Held),
        &RouteEvent::Action(ManualAction::RetryNow),
        &LAST,
    )
    .unwrap()
    .route;
    assert_eq!(
        (held.retry_ordinal, held.new_episode, held.cause),
        (None, true, None)
    );
    // A skip moves to the next candidate, in a new episode.
    let skipped = transition(
        &running,
        &failed(Decision::Skip),
        &RouteContext {
            next_candidate: Some(2),
        },
    )
    .unwrap()
    .route;
    assert_eq!((skipped.candidate, skipped.new_episode), (2, true));
    // An open circuit's wait is marked as such, and cleared once it is over.
    // Retry now from a circuit's wait goes through the circuit as its probe; once the
    // attempt starts, that is over.
    let probe = transition(
        &circuit_wait(),
        &RouteEvent::Action(ManualAction::RetryNow),
        &LAST,
    )
    .unwrap()
    .route;
    assert!(probe.through_circuit);
    let sent = transition(&probe, &RouteEvent::AttemptStarted, &LAST)
        .unwrap()
        .route;
    assert!(!sent.through_circuit);
    let circuit = transition(&route_in(Queued), &circuit_open(NOW + 9_000), &LAST)
        .unwrap()
        .route;
    assert!(circuit.circuit_wait);
    let fired = transition(&circuit, &RouteEvent::DeadlineReached, &LAST)
        .unwrap()
        .route;
    assert!(!fired.circuit_wait);
    // That it waited stays with the route until its next attempt starts (which
    // records it), through a skip to another candidate.
    assert!(fired.circuit_waited);
    let moved_on = transition(&fired, &not_sent(Decision::Skip), &NEXT)
        .unwrap()
        .route;
    assert!(moved_on.circuit_waited);
    let next_attempt = transition(&moved_on, &RouteEvent::AttemptStarted, &LAST)
        .unwrap()
        .route;
    assert!(!next_attempt.circuit_waited);
    // A retry held back by an open circuit is still that retry when it goes.
    let retrying = Route {
        state: Retrying,
        retry_ordinal: Some(2),
        ..route_in(Retrying)
    };
    let held_back = transition(&retrying, &circuit_open(NOW + 9_000), &LAST)
        .unwrap()
        .route;
    assert_eq!(held_back.retry_ordinal, Some(2));
    let goes = transition(&held_back, &RouteEvent::DeadlineReached, &LAST)
        .unwrap()
        .route;
    assert_eq!((goes.state, goes.retry_ordinal), (Retrying, Some(2)));
}

/// A class the failure helper gives is the code's own.
#[test]
fn a_failure_carries_its_codes_class() {
    assert_eq!(failure(SemanticCode::UsageLimited).class, Class::Hard);
}
