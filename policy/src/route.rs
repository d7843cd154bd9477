//! The route machine (SPEC 5): every transition of a route as `(state, event) ->
//! (state, effects)`, pure, the same on the server (which runs it) and in the browser
//! (which shows only the actions valid now).
//!
//! Effects are data, in the order the engine performs them: [`RouteEffect::Persist`]
//! first (one transaction that writes the new route with `generation + 1`, guarded by
//! the old generation in the SQL), and only once that has committed, arming a
//! deadline, handing the route to the dispatcher, sending a request, cancelling one in
//! flight, and publishing the change. A transition the state does not allow is refused
//! and changes nothing. Leaving a wait (a stop, a cancelled wait, `retry_now`) disarms
//! nothing explicitly: the timer that fires later names an older generation, and a
//! wake on another generation changes nothing. A skip, like a fired deadline, enters
//! `retrying`: the dispatch, to the next candidate, is decided and not yet started.
//!
//! ```
//! use policy::route::*;
//! let route = Route::new(0);
//! let started = transition(&route, &RouteEvent::AttemptStarted, &RouteContext::default()).unwrap();
//! assert_eq!(started.route.state, RouteState::Running);
//! assert_eq!(started.route.generation, 1);
//! assert_eq!(started.effects, [RouteEffect::Persist, RouteEffect::Send, RouteEffect::Publish]);
//!
//! let refused = transition(&started.route, &RouteEvent::Action(ManualAction::CancelWait), &RouteContext::default());
//! assert_eq!(refused.unwrap_err(), Refused { state: RouteState::Running, event: "cancel_wait" });
//! ```

use serde::{Deserialize, Serialize};

use crate::evaluate::{Decision, HoldCause, StopCause};

/// Where a route is (SPEC 5).
///
/// ```
/// use policy::route::RouteState;
/// assert_eq!(serde_json::to_value(RouteState::WaitingForReset).unwrap(), "waiting_for_reset");
/// assert_eq!(RouteState::ALL.len(), 8);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteState {
    /// Accepted, not yet dispatched. Entered by task creation and a new turn; left when
    /// the dispatcher starts an attempt. No timer.
    Queued,
    /// An attempt was recorded as started and its request may be in flight. Entered by
    /// a dispatch; left by the attempt's outcome or `stop`. No timer.
    Running,
    /// A `retry` decision is pending. Entered by evaluation; left by its deadline,
    /// `retry_now`, `skip_now`, `cancel_wait` or `stop`. Timer: the retry's time.
    RetryWait,
    /// A reset wait, on the provider's own hint or an open circuit. Entered by
    /// evaluation or an open circuit; left as a retry wait is. Timer: the reset.
    WaitingForReset,
    /// A deadline fired (or `retry_now`, a skip, an escalation): the dispatch is decided but no
    /// attempt started yet. Left when the dispatcher starts one. No timer.
    Retrying,
    /// Needs a person. Entered by `hold` decisions, `cancel_wait`, and a restart that
    /// finds an attempt started and never finished; left by `retry_now`, `skip_now`,
    /// `stop`. No timer.
    Held,
    /// The turn's answer is stored. Left by a new turn. No timer.
    Completed,
    /// Ended: nothing more happens. Entered by `stop` decisions, `stop`, and a skip with
    /// no candidate left.
    Stopped,
}

impl RouteState {
    /// Every state, in SPEC 5's order.
    pub const ALL: [RouteState; 8] = [
        Self::Queued,
        Self::Running,
        Self::RetryWait,
        Self::WaitingForReset,
        Self::Retrying,
        Self::Held,
        Self::Completed,
        Self::Stopped,
    ];

    /// The name as SPEC 5 writes it.
    ///
    /// ```
    /// assert_eq!(policy::route::RouteState::RetryWait.as_str(), "retry_wait");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Running => "running",
            Self::RetryWait => "retry_wait",
            Self::WaitingForReset => "waiting_for_reset",
            Self::Retrying => "retrying",
            Self::Held => "held",
            Self::Completed => "completed",
            Self::Stopped => "stopped",
        }
    }

    /// Whether a deadline is pending in this state.
    pub fn has_deadline(self) -> bool {
        matches!(self, Self::RetryWait | Self::WaitingForReset)
    }

    /// The manual actions valid in this state (SPEC 5), in the order pages show them.
    ///
    /// ```
    /// use policy::route::{ManualAction, RouteState};
    /// assert_eq!(RouteState::Held.actions(), [ManualAction::RetryNow, ManualAction::SkipNow, ManualAction::Stop]);
    /// assert!(RouteState::Completed.actions().is_empty());
    /// ```
    pub fn actions(self) -> &'static [ManualAction] {
        use ManualAction::*;
        match self {
            Self::RetryWait | Self::WaitingForReset => &[RetryNow, SkipNow, CancelWait, Stop],
            Self::Held => &[RetryNow, SkipNow, Stop],
            Self::Queued | Self::Running | Self::Retrying => &[Stop],
            Self::Completed | Self::Stopped => &[],
        }
    }
}

/// Why a route is `held` or `stopped` (SPEC 5).
///
/// ```
/// assert_eq!(serde_json::to_value(policy::route::RouteCause::CancelledWait).unwrap(), "cancelled_wait");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RouteCause {
    /// The attempt produced partial output or may have had a side effect.
    UnsafeEffect,
    /// The catalogue did not recognise the error, or was not sure.
    Unrecognized,
    /// The error is the request's own: no recovery can help.
    Unrecoverable,
    /// The policy had nothing more to try.
    Exhausted,
    /// An attempt was started and never finished (the server stopped).
    Interrupted,
    /// A person cancelled a pending wait.
    CancelledWait,
    /// A person stopped the route.
    StoppedByUser,
    /// A skip found no enabled candidate left.
    NoCandidate,
}

impl RouteCause {
    /// Every cause, in SPEC 5's order.
    pub const ALL: [RouteCause; 8] = [
        Self::UnsafeEffect,
        Self::Unrecognized,
        Self::Unrecoverable,
        Self::Exhausted,
        Self::Interrupted,
        Self::CancelledWait,
        Self::StoppedByUser,
        Self::NoCandidate,
    ];

    /// The name as SPEC 5 writes it.
    ///
    /// ```
    /// assert_eq!(policy::route::RouteCause::NoCandidate.as_str(), "no_candidate");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Self::UnsafeEffect => "unsafe_effect",
            Self::Unrecognized => "unrecognized",
            Self::Unrecoverable => "unrecoverable",
            Self::Exhausted => "exhausted",
            Self::Interrupted => "interrupted",
            Self::CancelledWait => "cancelled_wait",
            Self::StoppedByUser => "stopped_by_user",
            Self::NoCandidate => "no_candidate",
        }
    }

    /// The cause in words a person understands.
    pub fn describe(self) -> &'static str {
        match self {
            Self::UnsafeEffect => {
                "Part of an answer had already streamed when the call failed, so repeating it could duplicate or contradict it."
            }
            Self::Unrecognized => {
                "The error was not recognised with confidence, so no automatic recovery was tried."
            }
            Self::Unrecoverable => {
                "The provider refused the request itself; sending it again cannot help."
            }
            Self::Exhausted => "The recovery policy had nothing more to try.",
            Self::Interrupted => {
                "The server stopped while a call was in flight; whether it reached the provider is unknown."
            }
            Self::CancelledWait => "A person cancelled the pending wait.",
            Self::StoppedByUser => "A person stopped the route.",
            Self::NoCandidate => "No enabled candidate was left to skip to.",
        }
    }
}

impl From<HoldCause> for RouteCause {
    fn from(cause: HoldCause) -> Self {
        match cause {
            HoldCause::UnsafeEffect => Self::UnsafeEffect,
            HoldCause::Unrecognized => Self::Unrecognized,
        }
    }
}

impl From<StopCause> for RouteCause {
    fn from(cause: StopCause) -> Self {
        match cause {
            StopCause::Unrecoverable => Self::Unrecoverable,
            StopCause::Exhausted => Self::Exhausted,
        }
    }
}

/// What a person can do to a route (SPEC 5).
///
/// ```
/// use policy::route::ManualAction;
/// assert_eq!(serde_json::from_value::<ManualAction>(serde_json::json!("skip_now")).unwrap(), ManualAction::SkipNow);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ManualAction {
    /// Dispatch the current candidate now (a pending retry keeps its ordinal; from
    /// `held`, a new episode).
    RetryNow,
    /// Move to the next enabled candidate now.
    SkipNow,
    /// Cancel a pending wait: the route is held for a person.
    CancelWait,
    /// End the route; a request in flight is cancelled.
    Stop,
}

impl ManualAction {
    /// Every action.
    pub const ALL: [ManualAction; 4] =
        [Self::RetryNow, Self::SkipNow, Self::CancelWait, Self::Stop];

    /// The name as SPEC 5 writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::RetryNow => "retry_now",
            Self::SkipNow => "skip_now",
            Self::CancelWait => "cancel_wait",
            Self::Stop => "stop",
        }
    }
}

/// What happens to a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteEvent {
    /// The dispatcher recorded an attempt as started on the current candidate.
    AttemptStarted,
    /// The attempt's answer is stored: the turn is complete.
    Succeeded,
    /// The attempt failed, and `evaluate` decided what follows.
    Failed(Decision),
    /// The pending deadline passed.
    DeadlineReached,
    /// A route due to send found its candidate's circuit open, reset within its wait:
    /// it waits for the circuit (not its episode's one reset wait).
    CircuitOpen {
        /// When the circuit's reset is, unix milliseconds.
        until_ms: i64,
    },
    /// A route due to send did not: its candidate's circuit is open beyond its wait.
    /// It takes its exhausted outcome instead (skip, stop, or hold).
    NotSent(Decision),
    /// A person acted.
    Action(ManualAction),
    /// The answer stopped at its token budget and the candidate's escalation allows a
    /// larger one: the same turn is sent again with twice the budget (SPEC 5), in the
    /// same episode.
    Escalated,
    /// A follow-up turn on a completed task.
    NewTurn,
    /// On restart: the attempt was started and never finished.
    Interrupted,
}

impl RouteEvent {
    /// A name for refusals and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::AttemptStarted => "attempt_started",
            Self::Succeeded => "succeeded",
            Self::Failed(_) => "failed",
            Self::DeadlineReached => "deadline_reached",
            Self::CircuitOpen { .. } => "circuit_open",
            Self::NotSent(_) => "not_sent",
            Self::Action(action) => action.as_str(),
            Self::Escalated => "escalated",
            Self::NewTurn => "new_turn",
            Self::Interrupted => "interrupted",
        }
    }
}

/// What the machine needs to know beyond the route.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RouteContext {
    /// The next enabled candidate after the current one, by its position in the task's
    /// snapshot, if there is one.
    pub next_candidate: Option<usize>,
}

/// A route as the machine sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    /// Where it is.
    pub state: RouteState,
    /// Bumped by every transition; a wake or an action naming another generation
    /// changes nothing.
    pub generation: i64,
    /// The current candidate's position in the task's snapshot.
    pub candidate: usize,
    /// Why it is `held` or `stopped`.
    pub cause: Option<RouteCause>,
    /// The pending deadline (`retry_wait`, `waiting_for_reset`), unix milliseconds.
    pub deadline_ms: Option<i64>,
    /// The pending retry's ordinal, or the retry being dispatched.
    pub retry_ordinal: Option<u32>,
    /// The last decision taken for this route.
    pub decision: Option<Decision>,
    /// Whether the pending reset wait is an open circuit's (shown as such).
    pub circuit_wait: bool,
    /// Whether the next dispatch goes through an open circuit as its probe (a person's
    /// `retry_now`).
    pub through_circuit: bool,
    /// Whether the route has waited on an open circuit since its last attempt started:
    /// the next attempt records it, so its history shows that wait for what it was.
    pub circuit_waited: bool,
    /// Whether the next dispatch starts a new episode (another candidate, or a person's
    /// `retry_now` from `held`): the engine clears the episode's retry counts and reset
    /// wait.
    pub new_episode: bool,
}

impl Route {
    /// A new route, `queued` on the first enabled candidate.
    pub fn new(candidate: usize) -> Self {
        Self {
            state: RouteState::Queued,
            generation: 0,
            candidate,
            cause: None,
            deadline_ms: None,
            retry_ordinal: None,
            decision: None,
            circuit_wait: false,
            through_circuit: false,
            circuit_waited: false,
            new_episode: true,
        }
    }
}

/// Something the engine does for a transition, in order. Everything after
/// [`RouteEffect::Persist`] happens only once the new route is committed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteEffect {
    /// Write the new route in one transaction guarded by the old generation.
    Persist,
    /// Arm the timer for the route's new deadline.
    ArmDeadline,
    /// Hand the route to the dispatcher (`queued`, `retrying`).
    Enqueue,
    /// Send the request of the attempt just recorded as started.
    Send,
    /// Cancel the request in flight.
    CancelInFlight,
    /// Tell the pages watching the route.
    Publish,
}

/// A transition the state does not allow (422): nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// The route's state.
    pub state: RouteState,
    /// The event refused.
    pub event: &'static str,
}

/// An accepted transition: the new route and what to do, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The route after the transition (generation bumped).
    pub route: Route,
    /// The effects, [`RouteEffect::Persist`] first.
    pub effects: Vec<RouteEffect>,
}

/// The one place a route changes (SPEC 5). Pure.
pub fn transition(
    route: &Route,
    event: &RouteEvent,
    context: &RouteContext,
) -> Result<Transition, Refused> {
    use RouteEffect::*;
    use RouteState::*;
    let refused = Refused {
        state: route.state,
        event: event.name(),
    };
    let mut next = Route {
        generation: route.generation + 1,
        ..*route
    };
    // Entering a state clears what it does not carry: a deadline, a cause, a retry.
    let settle = |next: &mut Route, state: RouteState| {
        next.state = state;
        if !state.has_deadline() {
            next.deadline_ms = None;
            next.circuit_wait = false;
        }
        if !matches!(state, Held | Stopped) {
            next.cause = None;
        }
        if !matches!(state, RetryWait | Retrying | Running) {
            next.retry_ordinal = None;
        }
        if state != Retrying {
            next.through_circuit = false;
        }
    };
    let effects: Vec<RouteEffect> = match (route.state, event) {
        (Queued | Retrying, RouteEvent::AttemptStarted) => {
            settle(&mut next, Running);
            next.new_episode = false;
            next.circuit_waited = false;
            vec![Persist, Send, Publish]
        }
        (Running, RouteEvent::Succeeded) => {
            settle(&mut next, Completed);
            next.retry_ordinal = None;
            next.new_episode = true;
            vec![Persist, Publish]
        }
        (Running, RouteEvent::Escalated) => {
            settle(&mut next, Retrying);
            next.retry_ordinal = None;
            vec![Persist, Enqueue, Publish]
        }
        (Queued | Retrying, RouteEvent::NotSent(decision))
            if matches!(
                decision,
                Decision::Skip | Decision::Stop { .. } | Decision::Hold { .. }
            ) =>
        {
            next.decision = Some(*decision);
            decided(&mut next, *decision, context, settle)
        }
        (Running, RouteEvent::Failed(decision)) => {
            next.decision = Some(*decision);
            decided(&mut next, *decision, context, settle)
        }
        (RetryWait | WaitingForReset, RouteEvent::DeadlineReached) => {
            settle(&mut next, Retrying);
            vec![Persist, Enqueue, Publish]
        }
        (RetryWait | WaitingForReset, RouteEvent::Action(ManualAction::RetryNow)) => {
            // The same dispatch, now (a retry keeps its ordinal), through an open
            // circuit as its probe.
            settle(&mut next, Retrying);
            next.through_circuit = true;
            vec![Persist, Enqueue, Publish]
        }
        (Held, RouteEvent::Action(ManualAction::RetryNow)) => {
            settle(&mut next, Retrying);
            next.retry_ordinal = None;
            next.through_circuit = true;
            next.new_episode = true;
            vec![Persist, Enqueue, Publish]
        }
        (RetryWait | WaitingForReset | Held, RouteEvent::Action(ManualAction::SkipNow)) => {
            next.decision = Some(Decision::Skip);
            skip(&mut next, context, settle)
        }
        (RetryWait | WaitingForReset, RouteEvent::Action(ManualAction::CancelWait)) => {
            settle(&mut next, Held);
            next.cause = Some(RouteCause::CancelledWait);
            next.retry_ordinal = None;
            vec![Persist, Publish]
        }
        (Running, RouteEvent::Action(ManualAction::Stop)) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::StoppedByUser);
            vec![Persist, CancelInFlight, Publish]
        }
        (
            Queued | RetryWait | WaitingForReset | Retrying | Held,
            RouteEvent::Action(ManualAction::Stop),
        ) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::StoppedByUser);
            vec![Persist, Publish]
        }
        (Queued | Retrying, RouteEvent::CircuitOpen { until_ms }) => {
            settle(&mut next, WaitingForReset);
            next.deadline_ms = Some(*until_ms);
            next.circuit_wait = true;
            next.circuit_waited = true;
            // The dispatch it delays is still the same retry: it keeps its ordinal.
            next.retry_ordinal = route.retry_ordinal;
            vec![Persist, ArmDeadline, Publish]
        }
        (Completed, RouteEvent::NewTurn) => {
            settle(&mut next, Queued);
            next.decision = None;
            next.retry_ordinal = None;
            next.new_episode = true;
            vec![Persist, Enqueue, Publish]
        }
        (Running, RouteEvent::Interrupted) => {
            settle(&mut next, Held);
            next.cause = Some(RouteCause::Interrupted);
            vec![Persist, Publish]
        }
        _ => return Err(refused),
    };
    Ok(Transition {
        route: next,
        effects,
    })
}

/// What the engine does, on start, with a route it finds (SPEC 5, restart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRestart {
    /// Hand it to the dispatcher: `queued` and `retrying` routes have no started
    /// attempt (starting one moves the route to `running` in the same commit).
    Enqueue,
    /// Arm its timer again: its deadline is still ahead.
    Rearm,
    /// Apply this event: a passed deadline fires, and a `running` route's attempt was
    /// started and never finished, so it is ambiguous and the route is held.
    Apply(RouteEvent),
    /// Nothing to do: held, completed or stopped.
    Nothing,
}

/// What a route found on start needs, at `now_ms`. Each route gets exactly one answer,
/// so nothing is dispatched twice.
///
/// ```
/// use policy::route::*;
/// let running = Route { state: RouteState::Running, ..Route::new(0) };
/// assert_eq!(on_restart(&running, 0), OnRestart::Apply(RouteEvent::Interrupted));
/// assert_eq!(on_restart(&Route::new(0), 0), OnRestart::Enqueue);
/// ```
pub fn on_restart(route: &Route, now_ms: i64) -> OnRestart {
    match route.state {
        RouteState::Queued | RouteState::Retrying => OnRestart::Enqueue,
        RouteState::Running => OnRestart::Apply(RouteEvent::Interrupted),
        RouteState::RetryWait | RouteState::WaitingForReset => match route.deadline_ms {
            Some(deadline_ms) if deadline_ms > now_ms => OnRestart::Rearm,
            _ => OnRestart::Apply(RouteEvent::DeadlineReached),
        },
        RouteState::Held | RouteState::Completed | RouteState::Stopped => OnRestart::Nothing,
    }
}

/// What a decision does to a route: a wait with its deadline, a skip, a stop, a hold.
fn decided(
    next: &mut Route,
    decision: Decision,
    context: &RouteContext,
    settle: impl Fn(&mut Route, RouteState),
) -> Vec<RouteEffect> {
    use RouteEffect::*;
    match decision {
        Decision::WaitForReset { until_ms } => {
            settle(next, RouteState::WaitingForReset);
            next.deadline_ms = Some(until_ms);
            vec![Persist, ArmDeadline, Publish]
        }
        Decision::Retry { ordinal, at_ms } => {
            settle(next, RouteState::RetryWait);
            next.deadline_ms = Some(at_ms);
            next.retry_ordinal = Some(ordinal);
            vec![Persist, ArmDeadline, Publish]
        }
        Decision::Skip => skip(next, context, settle),
        Decision::Stop { cause } => {
            settle(next, RouteState::Stopped);
            next.cause = Some(cause.into());
            vec![Persist, Publish]
        }
        Decision::Hold { cause } => {
            settle(next, RouteState::Held);
            next.cause = Some(cause.into());
            vec![Persist, Publish]
        }
    }
}

/// To the next enabled candidate (a new episode, dispatched at once), or `stopped`
/// with cause `no_candidate` when none is left.
fn skip(
    next: &mut Route,
    context: &RouteContext,
    settle: impl Fn(&mut Route, RouteState),
) -> Vec<RouteEffect> {
    use RouteEffect::*;
    next.retry_ordinal = None;
    match context.next_candidate {
        Some(candidate) => {
            settle(next, RouteState::Retrying);
            next.candidate = candidate;
            next.new_episode = true;
            vec![Persist, Enqueue, Publish]
        }
        None => {
            settle(next, RouteState::Stopped);
            next.cause = Some(RouteCause::NoCandidate);
            vec![Persist, Publish]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use RouteEffect::*;
    use RouteState::*;

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

    /// What an accepted transition must give: the new state, its cause, the effects.
    type Expected = (RouteState, Option<RouteCause>, &'static [RouteEffect]);

    /// An event, its context, and the states that accept it with what they give.
    type Row = (RouteEvent, RouteContext, Vec<(RouteState, Expected)>);

    const STARTED: &[RouteEffect] = &[Persist, Send, Publish];
    const WRITTEN: &[RouteEffect] = &[Persist, Publish];
    const TIMED: &[RouteEffect] = &[Persist, ArmDeadline, Publish];
    const QUEUED: &[RouteEffect] = &[Persist, Enqueue, Publish];
    const CANCELLED: &[RouteEffect] = &[Persist, CancelInFlight, Publish];

    /// Every (state, event) pair: the states listed accept the event as given, every
    /// other state refuses it and nothing changes.
    #[test]
    fn every_state_and_event() {
        use RouteCause as C;
        let next = RouteContext {
            next_candidate: Some(1),
        };
        let last = RouteContext::default();
        let user = Some(C::StoppedByUser);
        let rows: Vec<Row> = vec![
            (
                RouteEvent::AttemptStarted,
                next,
                vec![
                    (Queued, (Running, None, STARTED)),
                    (Retrying, (Running, None, STARTED)),
                ],
            ),
            (
                RouteEvent::Succeeded,
                next,
                vec![(Running, (Completed, None, WRITTEN))],
            ),
            (
                RouteEvent::Failed(Decision::WaitForReset {
                    until_ms: NOW + 60_000,
                }),
                next,
                vec![(Running, (WaitingForReset, None, TIMED))],
            ),
            (
                RouteEvent::Failed(Decision::Retry {
                    ordinal: 1,
                    at_ms: NOW + 500,
                }),
                next,
                vec![(Running, (RetryWait, None, TIMED))],
            ),
            (
                RouteEvent::Failed(Decision::Skip),
                next,
                vec![(Running, (Retrying, None, QUEUED))],
            ),
            (
                RouteEvent::Failed(Decision::Skip),
                last,
                vec![(Running, (Stopped, Some(C::NoCandidate), WRITTEN))],
            ),
            (
                RouteEvent::Failed(Decision::Stop {
                    cause: StopCause::Unrecoverable,
                }),
                next,
                vec![(Running, (Stopped, Some(C::Unrecoverable), WRITTEN))],
            ),
            (
                RouteEvent::Failed(Decision::Hold {
                    cause: HoldCause::UnsafeEffect,
                }),
                next,
                vec![(Running, (Held, Some(C::UnsafeEffect), WRITTEN))],
            ),
            (
                RouteEvent::DeadlineReached,
                next,
                vec![
                    (RetryWait, (Retrying, None, QUEUED)),
                    (WaitingForReset, (Retrying, None, QUEUED)),
                ],
            ),
            (
                RouteEvent::CircuitOpen {
                    until_ms: NOW + 90_000,
                },
                next,
                vec![
                    (Queued, (WaitingForReset, None, TIMED)),
                    (Retrying, (WaitingForReset, None, TIMED)),
                ],
            ),
            (
                RouteEvent::Action(ManualAction::RetryNow),
                next,
                vec![
                    (RetryWait, (Retrying, None, QUEUED)),
                    (WaitingForReset, (Retrying, None, QUEUED)),
                    (Held, (Retrying, None, QUEUED)),
                ],
            ),
            (
                RouteEvent::Action(ManualAction::SkipNow),
                next,
                vec![
                    (RetryWait, (Retrying, None, QUEUED)),
                    (WaitingForReset, (Retrying, None, QUEUED)),
                    (Held, (Retrying, None, QUEUED)),
                ],
            ),
            (
                RouteEvent::Action(ManualAction::SkipNow),
                last,
                vec![
                    (RetryWait, (Stopped, Some(C::NoCandidate), WRITTEN)),
                    (WaitingForReset, (Stopped, Some(C::NoCandidate), WRITTEN)),
                    (Held, (Stopped, Some(C::NoCandidate), WRITTEN)),
                ],
            ),
            (
                RouteEvent::Action(ManualAction::CancelWait),
                next,
                vec![
                    (RetryWait, (Held, Some(C::CancelledWait), WRITTEN)),
                    (WaitingForReset, (Held, Some(C::CancelledWait), WRITTEN)),
                ],
            ),
            (
                RouteEvent::Action(ManualAction::Stop),
                next,
                vec![
                    (Queued, (Stopped, user, WRITTEN)),
                    (Running, (Stopped, user, CANCELLED)),
                    (RetryWait, (Stopped, user, WRITTEN)),
                    (WaitingForReset, (Stopped, user, WRITTEN)),
                    (Retrying, (Stopped, user, WRITTEN)),
                    (Held, (Stopped, user, WRITTEN)),
                ],
            ),
            (
                RouteEvent::NotSent(Decision::Skip),
                next,
                vec![
                    (Queued, (Retrying, None, QUEUED)),
                    (Retrying, (Retrying, None, QUEUED)),
                ],
            ),
            (
                RouteEvent::NotSent(Decision::Skip),
                last,
                vec![
                    (Queued, (Stopped, Some(C::NoCandidate), WRITTEN)),
                    (Retrying, (Stopped, Some(C::NoCandidate), WRITTEN)),
                ],
            ),
            (
                RouteEvent::NotSent(Decision::Stop {
                    cause: StopCause::Exhausted,
                }),
                next,
                vec![
                    (Queued, (Stopped, Some(C::Exhausted), WRITTEN)),
                    (Retrying, (Stopped, Some(C::Exhausted), WRITTEN)),
                ],
            ),
            (
                RouteEvent::NotSent(Decision::Hold {
                    cause: HoldCause::Unrecognized,
                }),
                next,
                vec![
                    (Queued, (Held, Some(C::Unrecognized), WRITTEN)),
                    (Retrying, (Held, Some(C::Unrecognized), WRITTEN)),
                ],
            ),
            // A wait is a circuit's (circuit_open), never a decision of a route not sent.
            (
                RouteEvent::NotSent(Decision::Retry {
                    ordinal: 1,
                    at_ms: NOW + 500,
                }),
                next,
                vec![],
            ),
            (
                RouteEvent::NotSent(Decision::WaitForReset {
                    until_ms: NOW + 500,
                }),
                next,
                vec![],
            ),
            (
                RouteEvent::Escalated,
                next,
                vec![(Running, (Retrying, None, QUEUED))],
            ),
            (
                RouteEvent::NewTurn,
                next,
                vec![(Completed, (Queued, None, QUEUED))],
            ),
            (
                RouteEvent::Interrupted,
                next,
                vec![(Running, (Held, Some(C::Interrupted), WRITTEN))],
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
                        } = got
                            .unwrap_or_else(|refused| panic!("{state:?} {event:?}: {refused:?}"));
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
                        assert_eq!(got_effects.first(), Some(&Persist), "commit first");
                        assert!(
                            route.retry_ordinal.is_none()
                                || matches!(route.state, RetryWait | Retrying | Running)
                                || route.circuit_wait,
                            "{state:?} {event:?}: a retry ordinal only while a retry is on"
                        );
                        let skipped = matches!(
                            event,
                            RouteEvent::Failed(Decision::Skip)
                                | RouteEvent::NotSent(Decision::Skip)
                                | RouteEvent::Action(ManualAction::SkipNow)
                        ) && route.state == Retrying;
                        assert_eq!(
                            route.candidate,
                            if skipped { 1 } else { before.candidate },
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
            .map(|(event, _, _)| match event {
                RouteEvent::Failed(decision) | RouteEvent::NotSent(decision) => {
                    format!("{} {}", event.name(), decision.name())
                }
                _ => event.name().to_owned(),
            })
            .collect();
        assert_eq!(
            labels.len(),
            7 + 2 * 5 + ManualAction::ALL.len(),
            "{labels:?}"
        );
    }

    /// The actions a page shows are exactly those the machine accepts.
    #[test]
    fn the_actions_shown_are_the_actions_accepted() {
        let context = RouteContext {
            next_candidate: Some(1),
        };
        for state in RouteState::ALL {
            for action in ManualAction::ALL {
                let accepted =
                    transition(&route_in(state), &RouteEvent::Action(action), &context).is_ok();
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
        let context = RouteContext::default();
        for state in RouteState::ALL {
            let route = route_in(state);
            for now_ms in [NOW, NOW + 10_000] {
                let expected = match state {
                    Queued | Retrying => OnRestart::Enqueue,
                    Running => OnRestart::Apply(RouteEvent::Interrupted),
                    RetryWait | WaitingForReset if now_ms < NOW + 5_000 => OnRestart::Rearm,
                    RetryWait | WaitingForReset => OnRestart::Apply(RouteEvent::DeadlineReached),
                    Held | Completed | Stopped => OnRestart::Nothing,
                };
                let answer = on_restart(&route, now_ms);
                assert_eq!(answer, expected, "{state:?} at {now_ms}");
                if let OnRestart::Apply(event) = answer {
                    let held_or_due = transition(&route, &event, &context).unwrap().route.state;
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
        let context = RouteContext::default();
        let running = route_in(Running);
        let waiting = transition(
            &running,
            &RouteEvent::Failed(Decision::Retry {
                ordinal: 3,
                at_ms: NOW + 2_000,
            }),
            &context,
        )
        .unwrap()
        .route;
        assert_eq!(
            (waiting.deadline_ms, waiting.retry_ordinal),
            (Some(NOW + 2_000), Some(3))
        );
        // Retry now fires the same retry early: it keeps its ordinal, and its episode.
        let early = transition(
            &waiting,
            &RouteEvent::Action(ManualAction::RetryNow),
            &context,
        )
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
            &context,
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
            &RouteEvent::Failed(Decision::Skip),
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
            &context,
        )
        .unwrap()
        .route;
        assert!(probe.through_circuit);
        let sent = transition(&probe, &RouteEvent::AttemptStarted, &context)
            .unwrap()
            .route;
        assert!(!sent.through_circuit);
        let circuit = transition(
            &route_in(Queued),
            &RouteEvent::CircuitOpen {
                until_ms: NOW + 9_000,
            },
            &context,
        )
        .unwrap()
        .route;
        assert!(circuit.circuit_wait);
        let fired = transition(&circuit, &RouteEvent::DeadlineReached, &context)
            .unwrap()
            .route;
        assert!(!fired.circuit_wait);
        // That it waited stays with the route until its next attempt starts (which
        // records it), through a skip to another candidate.
        assert!(fired.circuit_waited);
        let moved_on = transition(
            &fired,
            &RouteEvent::NotSent(Decision::Skip),
            &RouteContext {
                next_candidate: Some(1),
            },
        )
        .unwrap()
        .route;
        assert!(moved_on.circuit_waited);
        let next_attempt = transition(&moved_on, &RouteEvent::AttemptStarted, &context)
            .unwrap()
            .route;
        assert!(!next_attempt.circuit_waited);
        // A retry held back by an open circuit is still that retry when it goes.
        let retrying = Route {
            state: Retrying,
            retry_ordinal: Some(2),
            ..route_in(Retrying)
        };
        let held_back = transition(
            &retrying,
            &RouteEvent::CircuitOpen {
                until_ms: NOW + 9_000,
            },
            &context,
        )
        .unwrap()
        .route;
        assert_eq!(held_back.retry_ordinal, Some(2));
        let goes = transition(&held_back, &RouteEvent::DeadlineReached, &context)
            .unwrap()
            .route;
        assert_eq!((goes.state, goes.retry_ordinal), (Retrying, Some(2)));
    }
}
