//! The route machine (SPEC 5): every transition of a route as `(route, event) ->
//! (route, effects)`, pure, the same on the server (which runs it) and in the browser
//! (which shows only the actions valid now).
//!
//! A transition decides the whole route: its state and what the state carries
//! (deadline, cause, retry ordinal, candidate), and what recovery keeps beside it
//! (the last failure and its exhausted outcome, the episode's counts, the turn, the
//! token budget). The engine adds nothing of its own: it commits the new route in
//! one transaction guarded by the old generation (which publishes its event), and
//! only once that has committed carries out the effects, which are data: arming a
//! deadline, handing the route to the dispatcher, cancelling a call in flight. The
//! dispatcher that commits `attempt_started` sends the request itself, after the
//! commit. A transition the state does not allow is refused and changes nothing.
//! Leaving a wait (a stop, a cancelled wait, `retry_now`) disarms nothing
//! explicitly: the timer that fires later names an older generation, and a wake on
//! another generation changes nothing. A skip, like a fired deadline, enters
//! `retrying`: the dispatch, to the next candidate, is decided and not yet started.
//!
//! Every (state, event) pair, and what each event does to the rest of the route,
//! is a table in `policy/tests/route.rs`.
//!
//! ```
//! use policy::route::*;
//! let route = Route::new(0);
//! let started = transition(&route, &RouteEvent::AttemptStarted, &RouteContext::default()).unwrap();
//! assert_eq!(started.route.state, RouteState::Running);
//! assert_eq!(started.route.generation, 1);
//! assert!(started.effects.is_empty(), "the dispatcher sends once the start is committed");
//!
//! let refused = transition(&started.route, &RouteEvent::Action(ManualAction::CancelWait), &RouteContext::default());
//! assert_eq!(refused.unwrap_err(), Refused { state: RouteState::Running, event: "cancel_wait" });
//! ```

use serde::{Deserialize, Serialize};

use crate::codes::{Class, SemanticCode};
use crate::document::OnExhausted;
use crate::evaluate::{Decision, Episode, HoldCause, StopCause};

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
    /// The client waiting for the answer (a gateway call's) went away.
    CancelledByClient,
}

impl RouteCause {
    /// Every cause, in SPEC 5's order.
    pub const ALL: [RouteCause; 9] = [
        Self::UnsafeEffect,
        Self::Unrecognized,
        Self::Unrecoverable,
        Self::Exhausted,
        Self::Interrupted,
        Self::CancelledWait,
        Self::StoppedByUser,
        Self::NoCandidate,
        Self::CancelledByClient,
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
            Self::CancelledByClient => "cancelled_by_client",
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
            Self::CancelledByClient => {
                "The client waiting for the answer went away, so its call was cancelled."
            }
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

/// The last failure a route met, as classified: what its page shows as the cause
/// of a wait, a skip or a hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Its class.
    pub class: Class,
    /// Its semantic code.
    pub code: SemanticCode,
    /// The catalogue version that classified it.
    pub catalogue: String,
    /// The provider's message with secrets removed.
    pub safe_cause: String,
}

/// What happens to a route, with what the route keeps of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteEvent {
    /// The dispatcher recorded an attempt as started on the current candidate.
    AttemptStarted,
    /// The attempt's answer is stored: the turn is complete.
    Succeeded,
    /// The attempt failed, and `evaluate` decided what follows.
    Failed {
        /// What `evaluate` decided.
        decision: Decision,
        /// The failure, as classified.
        failure: Failure,
        /// What the candidate's section for the failure's class does when exhausted
        /// (none for an `outside` failure, which has no section).
        on_exhausted: Option<OnExhausted>,
    },
    /// The pending deadline passed.
    DeadlineReached,
    /// A route due to send found its candidate's circuit open, reset within its wait:
    /// it waits for the circuit (not its episode's one reset wait).
    CircuitOpen {
        /// When the circuit's reset is, unix milliseconds.
        until_ms: i64,
        /// The failure that opened the circuit, as the route shows it while it waits.
        failure: Failure,
        /// What the candidate's section for that class does when exhausted.
        on_exhausted: OnExhausted,
    },
    /// A route due to send did not: its candidate's circuit is open beyond its wait.
    /// It takes its exhausted outcome instead (skip, stop, or hold).
    NotSent {
        /// The exhausted outcome taken.
        decision: Decision,
        /// The failure that opened the circuit.
        failure: Failure,
        /// What the candidate's section for that class does when exhausted.
        on_exhausted: OnExhausted,
    },
    /// A person acted.
    Action(ManualAction),
    /// The answer stopped at its token budget and the candidate's escalation allows a
    /// larger one: the same turn is sent again with that budget (SPEC 5), in the same
    /// episode.
    Escalated {
        /// The next send's token budget.
        max_tokens: u32,
    },
    /// A follow-up turn on a completed task.
    NewTurn,
    /// On restart: the attempt was started and never finished.
    Interrupted,
    /// The client waiting for the answer (a gateway call's) went away: the route
    /// stops, and a call in flight is cancelled. Not a person's action, so never
    /// offered on a page.
    ClientCancelled,
}

impl RouteEvent {
    /// A name for refusals and logs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::AttemptStarted => "attempt_started",
            Self::Succeeded => "succeeded",
            Self::Failed { .. } => "failed",
            Self::DeadlineReached => "deadline_reached",
            Self::CircuitOpen { .. } => "circuit_open",
            Self::NotSent { .. } => "not_sent",
            Self::Action(action) => action.as_str(),
            Self::Escalated { .. } => "escalated",
            Self::NewTurn => "new_turn",
            Self::Interrupted => "interrupted",
            Self::ClientCancelled => "client_cancelled",
        }
    }

    /// The decision the event carries (a failure's, or a route's not sent).
    pub fn decision(&self) -> Option<Decision> {
        match self {
            Self::Failed { decision, .. } | Self::NotSent { decision, .. } => Some(*decision),
            _ => None,
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

/// A route: where it is (the machine's state and what the state carries) and what
/// recovery keeps beside it (the last failure, the episode, the turn, the token
/// budget). Every field changes only through [`transition`].
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Whether the next attempt starts a new episode (another candidate, or a person's
    /// `retry_now` from `held`): its start clears the episode's retry counts and reset
    /// wait.
    pub new_episode: bool,
    /// The last failure, until the turn is answered (or a person skips past it).
    pub failure: Option<Failure>,
    /// What the policy does when exhausted, for the last failure.
    pub pending_outcome: Option<OnExhausted>,
    /// The current episode: retries per class and the one reset wait.
    pub episode: Episode,
    /// The turn in progress (or the last completed), from 1.
    pub turn: u32,
    /// Token escalations made in this turn on this candidate.
    pub escalations: u32,
    /// The escalated token budget of the next send, if escalated.
    pub max_tokens: Option<u32>,
}

impl Route {
    /// A new route, `queued` on the first enabled candidate, in its first turn.
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
            failure: None,
            pending_outcome: None,
            episode: Episode::default(),
            turn: 1,
            escalations: 0,
            max_tokens: None,
        }
    }
}

/// Something the engine does once a transition is committed (every accepted
/// transition is first written in one transaction guarded by the old generation,
/// and its event published with it: those are the commit's, not effects).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteEffect {
    /// Arm the timer for the route's new deadline.
    ArmDeadline,
    /// Hand the route to the dispatcher (`queued`, `retrying`).
    Enqueue,
    /// Cancel the request in flight.
    CancelInFlight,
}

/// A transition the state does not allow (422): nothing changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refused {
    /// The route's state.
    pub state: RouteState,
    /// The event refused.
    pub event: &'static str,
}

/// An accepted transition: the new route and what to do once it is committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transition {
    /// The route after the transition (generation bumped).
    pub route: Route,
    /// The effects, in order.
    pub effects: Vec<RouteEffect>,
}

/// The one place a route changes (SPEC 5): its state and everything recovery keeps
/// beside it. Pure.
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
        ..route.clone()
    };
    let effects: Vec<RouteEffect> = match (route.state, event) {
        (Queued | Retrying, RouteEvent::AttemptStarted) => {
            settle(&mut next, Running);
            if route.new_episode {
                next.episode = Episode::default();
            }
            next.new_episode = false;
            next.circuit_waited = false;
            vec![]
        }
        (Running, RouteEvent::Succeeded) => {
            settle(&mut next, Completed);
            // The turn is answered: what it met is over.
            next.new_episode = true;
            next.episode = Episode::default();
            next.failure = None;
            next.pending_outcome = None;
            next.escalations = 0;
            next.max_tokens = None;
            vec![]
        }
        (Running, RouteEvent::Escalated { max_tokens }) => {
            settle(&mut next, Retrying);
            next.retry_ordinal = None;
            next.escalations = route.escalations.saturating_add(1);
            next.max_tokens = Some(*max_tokens);
            vec![Enqueue]
        }
        (
            Queued | Retrying,
            RouteEvent::NotSent {
                decision,
                failure,
                on_exhausted,
            },
        ) if matches!(
            decision,
            Decision::Skip | Decision::Stop { .. } | Decision::Hold { .. }
        ) =>
        {
            next.decision = Some(*decision);
            next.failure = Some(failure.clone());
            next.pending_outcome = Some(*on_exhausted);
            decided(&mut next, *decision, context)
        }
        (
            Running,
            RouteEvent::Failed {
                decision,
                failure,
                on_exhausted,
            },
        ) => {
            next.decision = Some(*decision);
            next.episode.record(decision, failure.class);
            next.failure = Some(failure.clone());
            next.pending_outcome = *on_exhausted;
            decided(&mut next, *decision, context)
        }
        (RetryWait | WaitingForReset, RouteEvent::DeadlineReached) => {
            settle(&mut next, Retrying);
            vec![Enqueue]
        }
        (RetryWait | WaitingForReset, RouteEvent::Action(ManualAction::RetryNow)) => {
            // The same dispatch, now (a retry keeps its ordinal), through an open
            // circuit as its probe.
            settle(&mut next, Retrying);
            next.through_circuit = true;
            vec![Enqueue]
        }
        (Held, RouteEvent::Action(ManualAction::RetryNow)) => {
            settle(&mut next, Retrying);
            next.retry_ordinal = None;
            next.through_circuit = true;
            next.new_episode = true;
            vec![Enqueue]
        }
        (RetryWait | WaitingForReset | Held, RouteEvent::Action(ManualAction::SkipNow)) => {
            next.decision = Some(Decision::Skip);
            // The person moved past the failure: it is no longer the route's cause.
            next.failure = None;
            next.pending_outcome = None;
            skip(&mut next, context)
        }
        (RetryWait | WaitingForReset, RouteEvent::Action(ManualAction::CancelWait)) => {
            settle(&mut next, Held);
            next.cause = Some(RouteCause::CancelledWait);
            next.retry_ordinal = None;
            vec![]
        }
        (Running, RouteEvent::Action(ManualAction::Stop)) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::StoppedByUser);
            vec![CancelInFlight]
        }
        (
            Queued | RetryWait | WaitingForReset | Retrying | Held,
            RouteEvent::Action(ManualAction::Stop),
        ) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::StoppedByUser);
            vec![]
        }
        (
            Queued | Retrying,
            RouteEvent::CircuitOpen {
                until_ms,
                failure,
                on_exhausted,
            },
        ) => {
            settle(&mut next, WaitingForReset);
            next.deadline_ms = Some(*until_ms);
            next.circuit_wait = true;
            next.circuit_waited = true;
            // The dispatch it delays is still the same retry: it keeps its ordinal.
            next.retry_ordinal = route.retry_ordinal;
            next.failure = Some(failure.clone());
            next.pending_outcome = Some(*on_exhausted);
            vec![ArmDeadline]
        }
        (Completed, RouteEvent::NewTurn) => {
            settle(&mut next, Queued);
            next.decision = None;
            next.retry_ordinal = None;
            next.new_episode = true;
            next.turn = route.turn.saturating_add(1);
            next.episode = Episode::default();
            next.failure = None;
            next.pending_outcome = None;
            next.escalations = 0;
            next.max_tokens = None;
            vec![Enqueue]
        }
        (Running, RouteEvent::Interrupted) => {
            settle(&mut next, Held);
            next.cause = Some(RouteCause::Interrupted);
            vec![]
        }
        (Running, RouteEvent::ClientCancelled) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::CancelledByClient);
            vec![CancelInFlight]
        }
        (Queued | RetryWait | WaitingForReset | Retrying, RouteEvent::ClientCancelled) => {
            settle(&mut next, Stopped);
            next.cause = Some(RouteCause::CancelledByClient);
            vec![]
        }
        _ => return Err(refused),
    };
    Ok(Transition {
        route: next,
        effects,
    })
}

/// Enter `state`, clearing what it does not carry: a deadline, a cause, a retry, a
/// way through a circuit.
fn settle(next: &mut Route, state: RouteState) {
    use RouteState::*;
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
}

/// What the engine does, on start, with a route it finds (SPEC 5, restart).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnRestart {
    /// Hand it to the dispatcher: `queued` and `retrying` routes have no started
    /// attempt (starting one moves the route to `running` in the same commit).
    Enqueue,
    /// Arm its timer again: its deadline is still ahead.
    Rearm,
    /// Its deadline passed: fire it ([`RouteEvent::DeadlineReached`]).
    Fire,
    /// A `running` route's attempt was started and never finished, so it is
    /// ambiguous: hold the route ([`RouteEvent::Interrupted`]).
    Interrupt,
    /// Nothing to do: held, completed or stopped.
    Nothing,
}

impl OnRestart {
    /// The event the answer applies, if it applies one.
    pub fn event(self) -> Option<RouteEvent> {
        match self {
            Self::Fire => Some(RouteEvent::DeadlineReached),
            Self::Interrupt => Some(RouteEvent::Interrupted),
            Self::Enqueue | Self::Rearm | Self::Nothing => None,
        }
    }
}

/// What a route found on start needs, at `now_ms`. Each route gets exactly one answer,
/// so nothing is dispatched twice.
///
/// ```
/// use policy::route::*;
/// let running = Route { state: RouteState::Running, ..Route::new(0) };
/// assert_eq!(on_restart(&running, 0), OnRestart::Interrupt);
/// assert_eq!(on_restart(&Route::new(0), 0), OnRestart::Enqueue);
/// ```
pub fn on_restart(route: &Route, now_ms: i64) -> OnRestart {
    match route.state {
        RouteState::Queued | RouteState::Retrying => OnRestart::Enqueue,
        RouteState::Running => OnRestart::Interrupt,
        RouteState::RetryWait | RouteState::WaitingForReset => match route.deadline_ms {
            Some(deadline_ms) if deadline_ms > now_ms => OnRestart::Rearm,
            _ => OnRestart::Fire,
        },
        RouteState::Held | RouteState::Completed | RouteState::Stopped => OnRestart::Nothing,
    }
}

/// What a decision does to a route: a wait with its deadline, a skip, a stop, a hold.
fn decided(next: &mut Route, decision: Decision, context: &RouteContext) -> Vec<RouteEffect> {
    use RouteEffect::*;
    match decision {
        Decision::WaitForReset { until_ms } => {
            settle(next, RouteState::WaitingForReset);
            next.deadline_ms = Some(until_ms);
            vec![ArmDeadline]
        }
        Decision::Retry { ordinal, at_ms } => {
            settle(next, RouteState::RetryWait);
            next.deadline_ms = Some(at_ms);
            next.retry_ordinal = Some(ordinal);
            vec![ArmDeadline]
        }
        Decision::Skip => skip(next, context),
        Decision::Stop { cause } => {
            settle(next, RouteState::Stopped);
            next.cause = Some(cause.into());
            vec![]
        }
        Decision::Hold { cause } => {
            settle(next, RouteState::Held);
            next.cause = Some(cause.into());
            vec![]
        }
    }
}

/// To the next enabled candidate (a new episode with its own token budget,
/// dispatched at once), or `stopped` with cause `no_candidate` when none is left.
fn skip(next: &mut Route, context: &RouteContext) -> Vec<RouteEffect> {
    next.retry_ordinal = None;
    match context.next_candidate {
        Some(candidate) => {
            settle(next, RouteState::Retrying);
            next.candidate = candidate;
            next.new_episode = true;
            next.escalations = 0;
            next.max_tokens = None;
            vec![RouteEffect::Enqueue]
        }
        None => {
            settle(next, RouteState::Stopped);
            next.cause = Some(RouteCause::NoCandidate);
            vec![]
        }
    }
}
