//! The stored things, as the rest of the server sees them: providers and
//! dynamic profiles, tasks with their routes, attempts and turns, and shared
//! circuits. Row
//! types stay in the store; wire types in the `api` crate.

use api::{AttemptId, CandidateId, ProfileId, ProviderId, Revision, TaskId, Timestamp};
pub use policy::route::Failure;
use policy::route::Route;
use policy::{
    Class, Confidence, Decision, EscalationSettings, PolicyDocument, ProviderFamily, ProviderKind,
    SemanticCode,
};
use providers::{SimulatedStep, Timeouts};

/// A configured connection to a model provider. The key is never here: only
/// the name of the environment variable that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Provider {
    /// Stable id.
    pub id: ProviderId,
    /// A name people recognise, unique regardless of case.
    pub name: String,
    /// The wire protocol.
    pub kind: ProviderKind,
    /// Whose errors to expect.
    pub family: ProviderFamily,
    /// The base URL; empty for a simulated provider.
    pub base_url: String,
    /// The environment variable that holds the key, if any.
    pub api_key_env: Option<String>,
    /// Call timeouts.
    pub timeouts: Timeouts,
    /// A simulated provider's script of outcomes (empty for the others).
    pub script: Vec<SimulatedStep>,
    /// What a `cli` provider runs (`None` for the others).
    pub cli: Option<policy::CliConfig>,
    /// Bumped by every update; an update must name the revision it read.
    pub revision: Revision,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// A named, ordered list of candidates. Order and enabled flags are the
/// user's: the system never rewrites them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Stable id.
    pub id: ProfileId,
    /// A name people recognise, unique regardless of case.
    pub name: String,
    /// Bumped by every update; an update must name the revision it read.
    pub revision: Revision,
    /// The candidates, in the user's order.
    pub candidates: Vec<Candidate>,
    /// How long a gateway call through it waits when its client does not say,
    /// in seconds; `None`: the server's default.
    pub gateway_deadline_s: Option<u32>,
    /// When it was created.
    pub created_at: Timestamp,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// One candidate of a profile, with its own recovery policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Stable id: kept across every update that sends it back.
    pub id: CandidateId,
    /// The provider it dispatches to.
    pub provider_id: ProviderId,
    /// The model name, as the provider knows it.
    pub model: String,
    /// Whether routes may use it.
    pub enabled: bool,
    /// The token budget of one answer.
    pub max_tokens: u32,
    /// Token escalation after a `max_tokens` stop.
    pub escalation: EscalationSettings,
    /// The recovery policy (always version 2).
    pub policy: PolicyDocument,
}

/// A provider to create or the new state of one to update.
#[derive(Debug, Clone)]
pub struct ProviderWrite {
    /// The id: new for a create, the target for an update.
    pub id: ProviderId,
    /// See [`Provider::name`].
    pub name: String,
    /// See [`Provider::kind`].
    pub kind: ProviderKind,
    /// See [`Provider::family`].
    pub family: ProviderFamily,
    /// See [`Provider::base_url`].
    pub base_url: String,
    /// See [`Provider::api_key_env`].
    pub api_key_env: Option<String>,
    /// See [`Provider::timeouts`]; `None` keeps the stored ones (the defaults when new).
    pub timeouts: Option<Timeouts>,
    /// See [`Provider::script`]; `None` keeps the stored one (none when new). A kind
    /// other than `simulated` has none.
    pub script: Option<Vec<SimulatedStep>>,
    /// See [`Provider::cli`]; `None` keeps the stored one (none when new). A kind
    /// other than `cli` has none.
    pub cli: Option<policy::CliConfig>,
    /// The time of the write.
    pub now: Timestamp,
}

/// A profile to create or the new state of one to update. Candidates carry
/// their ids already: existing ones as sent, new ones freshly made.
#[derive(Debug, Clone)]
pub struct ProfileWrite {
    /// The id: new for a create, the target for an update.
    pub id: ProfileId,
    /// See [`Profile::name`].
    pub name: String,
    /// The candidates in order, and whether each one's id was sent by the
    /// client (it must then already belong to this profile).
    pub candidates: Vec<(Candidate, IdOrigin)>,
    /// See [`Profile::gateway_deadline_s`].
    pub gateway_deadline_s: Option<u32>,
    /// The time of the write.
    pub now: Timestamp,
}

/// Where a candidate's id came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IdOrigin {
    /// The client sent it: it must name an existing candidate of the profile.
    Client,
    /// The server made it for a new candidate.
    New,
}

/// A task: a conversation routed through a snapshot of a profile's candidates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Task {
    /// Stable id.
    pub id: TaskId,
    /// The profile it was started from.
    pub profile_id: ProfileId,
    /// That profile's name at the time.
    pub profile_name: String,
    /// The snapshot of the profile's candidates, in order: the route uses only these.
    pub candidates: Vec<Candidate>,
    /// When it was created.
    pub created_at: Timestamp,
    /// A gateway call's request and deadline; `None` for a task started on the
    /// task API.
    pub gateway: Option<std::sync::Arc<GatewayCall>>,
}

/// A client key as stored: never the key, only its digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKey {
    /// Stable id.
    pub id: api::ClientKeyId,
    /// Who or what uses it.
    pub name: String,
    /// The key's first characters.
    pub prefix: String,
    /// The profiles it may use.
    pub profile_ids: Vec<ProfileId>,
    /// When it was made.
    pub created_at: Timestamp,
    /// When it was revoked.
    pub revoked_at: Option<Timestamp>,
}

/// A client key to store: its SHA-256 digest, in hex, in place of the key.
#[derive(Debug, Clone)]
pub struct ClientKeyWrite {
    /// The key as it is kept.
    pub key: ClientKey,
    /// The digest.
    pub digest: String,
}

/// What a gateway call's task keeps of its client's request (docs/SPEC.md §8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayCall {
    /// The client's request, in its protocol, as it sent it.
    pub request: providers::ClientRequest,
    /// Whether the client streams the answer.
    pub stream: bool,
    /// When the client stops waiting: a wait that would end later is not taken.
    pub respond_by: Timestamp,
}

impl Task {
    /// The kind the API shows: `gateway` for a gateway call, else `task`.
    pub fn kind(&self) -> &'static str {
        if self.gateway.is_some() {
            "gateway"
        } else {
            "task"
        }
    }

    /// When the task's client stops waiting for its answer, unix milliseconds (a
    /// gateway call's deadline).
    pub fn respond_by_ms(&self) -> Option<i64> {
        self.gateway
            .as_ref()
            .map(|call| call.respond_by.as_millis())
    }

    /// The first enabled candidate after `position`, if any.
    pub fn next_enabled_after(&self, position: usize) -> Option<usize> {
        self.candidates
            .iter()
            .enumerate()
            .skip(position + 1)
            .find(|(_, candidate)| candidate.enabled)
            .map(|(index, _)| index)
    }

    /// The first enabled candidate, if any.
    pub fn first_enabled(&self) -> Option<usize> {
        self.candidates
            .iter()
            .position(|candidate| candidate.enabled)
    }
}

/// A route as stored: the machine's [`Route`] (its state and everything recovery
/// keeps beside it), its task, and when it last changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RouteRecord {
    /// The task.
    pub task_id: TaskId,
    /// The route: state, generation, candidate, deadline, last failure, episode,
    /// turn, token budget.
    pub route: Route,
    /// When it last changed.
    pub updated_at: Timestamp,
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    /// The answer is stored.
    Answered,
    /// The answer stopped at its budget and completed the turn, marked truncated.
    Truncated,
    /// The answer stopped at its budget and was sent again with a larger one.
    Escalated,
    /// The call failed; the attempt carries its classification and decision.
    Failed,
    /// A person stopped the route while it was in flight.
    Cancelled,
    /// The server stopped while it was in flight.
    Interrupted,
    /// It finished after its route had moved on; its evidence was not evaluated.
    Superseded,
}

impl AttemptOutcome {
    /// Every outcome.
    pub const ALL: [AttemptOutcome; 7] = [
        Self::Answered,
        Self::Truncated,
        Self::Escalated,
        Self::Failed,
        Self::Cancelled,
        Self::Interrupted,
        Self::Superseded,
    ];

    /// The stored and wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Answered => "answered",
            Self::Truncated => "truncated",
            Self::Escalated => "escalated",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
            Self::Interrupted => "interrupted",
            Self::Superseded => "superseded",
        }
    }

    /// The outcome named `name`.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|outcome| outcome.as_str() == name)
    }
}

/// The catalogue's verdict on a failed attempt, as stored on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// The class.
    pub class: Class,
    /// The semantic code.
    pub code: SemanticCode,
    /// `high`, `medium` or `low`.
    pub confidence: Confidence,
    /// The catalogue version.
    pub catalogue: String,
    /// The rule that decided.
    pub rule: String,
    /// The provider's message with secrets removed.
    pub safe_cause: String,
    /// When the provider said its limit resets, unix milliseconds.
    pub reset_at_ms: Option<i64>,
}

/// How an attempt finished: written once, never changed after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttemptEnd {
    /// When.
    pub finished_at: Timestamp,
    /// How.
    pub outcome: AttemptOutcome,
    /// The classification of a failure.
    pub verdict: Option<Verdict>,
    /// The decision taken on it.
    pub decision: Option<Decision>,
    /// The evidence as the adapter saw it (never a key), as SPEC 2.1 JSON.
    pub evidence: Option<serde_json::Value>,
}

impl AttemptEnd {
    /// An end with nothing to evaluate: cancelled, interrupted, superseded.
    pub fn bare(outcome: AttemptOutcome, finished_at: Timestamp) -> Self {
        Self {
            finished_at,
            outcome,
            verdict: None,
            decision: None,
            evidence: None,
        }
    }
}

/// A candidate a route passed over without calling it: its circuit was open past
/// the candidate's own wait, or it could not carry a gateway client's request.
/// Written with the transition that decided it; never changed after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassedOver {
    /// The turn the route was on.
    pub turn: u32,
    /// The candidate's position in the snapshot.
    pub candidate_index: usize,
    /// The candidate's id.
    pub candidate_id: CandidateId,
    /// The candidate's provider.
    pub provider_id: ProviderId,
    /// Its model.
    pub model: String,
    /// When.
    pub at: Timestamp,
    /// The code of the failure that stands in the way (the open circuit's).
    pub code: SemanticCode,
    /// Why, in a sentence.
    pub safe_cause: String,
    /// What the route did instead: skip, stop or hold.
    pub decision: Decision,
}

/// One call to one candidate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attempt {
    /// Stable id.
    pub id: AttemptId,
    /// The task.
    pub task_id: TaskId,
    /// Its place among the task's attempts, from 1.
    pub seq: u32,
    /// The turn it served.
    pub turn: u32,
    /// The route generation it started at.
    pub generation: i64,
    /// The candidate's position in the snapshot.
    pub candidate_index: usize,
    /// The candidate's id.
    pub candidate_id: CandidateId,
    /// The candidate's provider.
    pub provider_id: ProviderId,
    /// The model called.
    pub model: String,
    /// The retry it dispatched, if it was one.
    pub ordinal: Option<u32>,
    /// The token budget asked for.
    pub max_tokens: u32,
    /// Whether it probed a half-open circuit.
    pub probe: bool,
    /// Whether its route waited on an open circuit since the attempt before it.
    pub after_circuit_wait: bool,
    /// When it was recorded as started.
    pub started_at: Timestamp,
    /// How it finished; `None` while in flight.
    pub end: Option<AttemptEnd>,
}

/// The candidate that produced an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Producer {
    /// Its position in the snapshot.
    pub candidate_index: usize,
    /// Its id.
    pub candidate_id: CandidateId,
    /// Its model.
    pub model: String,
}

/// One turn of a task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    /// From 1.
    pub number: u32,
    /// What was asked.
    pub prompt: String,
    /// The answer, once stored.
    pub answer: Option<String>,
    /// Whether the answer stopped at its token budget.
    pub truncated: bool,
    /// The tool calls the answer made (a gateway client's request that
    /// offered tools), in order.
    pub tool_calls: Vec<providers::ToolCall>,
    /// Who answered.
    pub producer: Option<Producer>,
    /// When it was asked.
    pub created_at: Timestamp,
    /// When it was answered.
    pub completed_at: Option<Timestamp>,
}

impl Turn {
    /// Turn `number`, asking `prompt` at `now`, not answered yet.
    pub fn asked(number: u32, prompt: String, now: Timestamp) -> Self {
        Self {
            number,
            prompt,
            answer: None,
            truncated: false,
            tool_calls: Vec::new(),
            producer: None,
            created_at: now,
            completed_at: None,
        }
    }
}

/// A task with everything it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskDetail {
    /// The task and its snapshot.
    pub task: Task,
    /// Its route.
    pub route: RouteRecord,
    /// Every attempt, oldest first.
    pub attempts: Vec<Attempt>,
    /// Every candidate passed over without a call, oldest first.
    pub passed_over: Vec<PassedOver>,
    /// Every turn, first first.
    pub turns: Vec<Turn>,
}

impl TaskDetail {
    /// The attempt still in flight (at most one), ended as `outcome` at `now`.
    pub fn end_unfinished(
        &self,
        outcome: AttemptOutcome,
        now: Timestamp,
    ) -> Option<(AttemptId, AttemptEnd)> {
        self.attempts
            .iter()
            .rev()
            .find(|attempt| attempt.end.is_none())
            .map(|attempt| (attempt.id.clone(), AttemptEnd::bare(outcome, now)))
    }
}

/// A task for a list: its route, and its first prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskListing {
    /// The task (its snapshot included, so the route's candidate can be named).
    pub task: Task,
    /// Its route.
    pub route: RouteRecord,
    /// The first turn's prompt.
    pub prompt: String,
}

/// Routes counted by state: what needs a person now, and how the recent tasks stand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RouteCounts {
    /// Routes held for a person now.
    pub held: u32,
    /// Routes waiting for a deadline now (a retry's or a reset's).
    pub waiting: u32,
    /// The routes of the tasks created in the window asked for, by state.
    pub created_since: Vec<(policy::route::RouteState, u32)>,
}

/// What a shared circuit closes: a provider (`model` `None`) or one of its models.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CircuitKey {
    /// The provider.
    pub provider_id: ProviderId,
    /// The model, for a model's circuit.
    pub model: Option<String>,
}

/// An open (or half-open) shared circuit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Circuit {
    /// What it closes.
    pub key: CircuitKey,
    /// The code that opened it.
    pub code: SemanticCode,
    /// When it half-opens, unix milliseconds.
    pub until_ms: i64,
    /// The route probing it, at half-open.
    pub probe_task_id: Option<TaskId>,
    /// When it opened (a later failure that extends it keeps this), unix
    /// milliseconds.
    pub opened_at_ms: i64,
}

/// Automatic recovery paused by a person: everywhere, or on one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pause {
    /// The provider paused; `None`: everything.
    pub provider_id: Option<ProviderId>,
    /// That provider's name (`None` for everything, or a provider deleted since).
    pub provider_name: Option<String>,
    /// Since when, unix milliseconds.
    pub paused_at_ms: i64,
}

/// A route waiting for a limit's reset (`waiting_for_reset`, on its own
/// failure's hint or on a circuit another route's failure opened), with its
/// current candidate's provider and model and the code of the limit: it waits
/// on that provider's circuit (a usage window, a quota, credits) or that model's
/// (a rate limit, capacity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitWait {
    /// The route's task.
    pub task_id: TaskId,
    /// The code of the limit it waits on.
    pub code: SemanticCode,
    /// Its candidate's provider.
    pub provider_id: ProviderId,
    /// Its candidate's model.
    pub model: String,
    /// When it sends, unix milliseconds.
    pub deadline_ms: i64,
}

/// What happened to a circuit, for the circuits page's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CircuitHistoryKind {
    /// A failure opened it (or extended it).
    Opened,
    /// A person closed it ("Close now").
    ClosedByPerson,
}

impl CircuitHistoryKind {
    /// As stored and as the API says it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Opened => "opened",
            Self::ClosedByPerson => "closed_by_person",
        }
    }

    /// Read back from [`Self::as_str`].
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Opened, Self::ClosedByPerson]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// One entry of the circuits' history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CircuitHistoryEntry {
    /// Which circuit.
    pub key: CircuitKey,
    /// What happened.
    pub kind: CircuitHistoryKind,
    /// The code of the failure that opened it (for a closing, the circuit's).
    pub code: SemanticCode,
    /// Its reset then, unix milliseconds.
    pub until_ms: i64,
    /// When, unix milliseconds.
    pub at_ms: i64,
    /// The route whose failure opened it.
    pub task_id: Option<TaskId>,
}

/// A change to the circuits, written in the same transaction as a route's transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CircuitChange {
    /// Open (or extend) a circuit until `until_ms`; a probe in progress is released.
    Open {
        /// What it closes.
        key: CircuitKey,
        /// The code that opened it.
        code: SemanticCode,
        /// When it half-opens.
        until_ms: i64,
    },
    /// A success: the circuits over this provider and this model close.
    Close {
        /// The provider.
        provider_id: ProviderId,
        /// The model.
        model: String,
    },
    /// The probe failed without reopening its circuit: the half-open circuits over
    /// this provider and model go, so the routes waiting on them send on their own.
    Release {
        /// The provider.
        provider_id: ProviderId,
        /// The model.
        model: String,
    },
}

/// What dispatching a route reads besides its task's snapshot: the route, the
/// turns (the conversation to send) and how many calls each candidate made (the
/// index of the next one, which a simulated script replays by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// The route.
    pub route: RouteRecord,
    /// Every turn, first first.
    pub turns: Vec<Turn>,
    /// Attempts made so far, by candidate index.
    pub calls: Vec<(usize, u32)>,
}

impl Progress {
    /// How many attempts the candidate at `index` made.
    pub fn calls_on(&self, index: usize) -> u32 {
        self.calls
            .iter()
            .find(|(candidate, _)| *candidate == index)
            .map_or(0, |(_, count)| *count)
    }
}

/// What to do once a write is durable, with its event's id: run by the store after
/// the commit, before the writer hears of it (the engine carries out the
/// transition's effects here). Publication is the store's own (see [`Feed`]).
#[derive(Clone, Default)]
pub struct AfterCommit(Option<std::sync::Arc<dyn Fn(i64) + Send + Sync>>);

impl AfterCommit {
    /// Run `then` after the commit.
    pub fn new(then: impl Fn(i64) + Send + Sync + 'static) -> Self {
        Self(Some(std::sync::Arc::new(then)))
    }

    /// The write committed as event `event_id`.
    pub fn run(&self, event_id: i64) {
        if let Some(then) = &self.0 {
            then(event_id);
        }
    }
}

impl std::fmt::Debug for AfterCommit {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(if self.0.is_some() {
            "AfterCommit(..)"
        } else {
            "AfterCommit(nothing)"
        })
    }
}

/// A turn's answer, as a commit writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletedTurn {
    /// The turn's number.
    pub number: u32,
    /// The answer's text.
    pub answer: String,
    /// Whether it stopped at its token budget.
    pub truncated: bool,
    /// The tool calls it made.
    pub tool_calls: Vec<providers::ToolCall>,
    /// Who answered.
    pub producer: Producer,
}

impl CompletedTurn {
    /// The tool calls as stored: a JSON list, or nothing when there are none.
    pub fn tool_calls_json(&self) -> Option<String> {
        (!self.tool_calls.is_empty())
            .then(|| serde_json::to_string(&self.tool_calls).expect("tool calls serialize"))
    }
}

/// A committed transition: the new route, and what else changes with it, in one
/// transaction guarded by the route's old generation.
#[derive(Debug, Clone)]
pub struct RouteCommit {
    /// The route after the transition; its generation is the old one + 1.
    pub route: RouteRecord,
    /// An attempt recorded as started (before its request is sent).
    pub start_attempt: Option<Attempt>,
    /// An attempt finished (only if it was not finished already).
    pub finish_attempt: Option<(AttemptId, AttemptEnd)>,
    /// The turn's answer.
    pub complete_turn: Option<CompletedTurn>,
    /// A new turn, asked now.
    pub new_turn: Option<Turn>,
    /// A change to the shared circuits.
    pub circuit: Option<CircuitChange>,
    /// The candidate this transition passes over without a call.
    pub passed_over: Option<PassedOver>,
    /// Whether this transition fires the route's deadline. Such a commit is also
    /// a claim: it writes only a route still waiting with its deadline passed by
    /// the commit's time, and on a shared database one this replica may fire (its
    /// own, or one whose owner's heartbeat lapsed), locked with `FOR UPDATE SKIP
    /// LOCKED` in the same statement, so a replica never waits on another's
    /// firing of the same route. Refused like a stale generation.
    pub fires_deadline: bool,
    /// The live event's data (the route view), stored with its id and published
    /// once durable.
    pub event_json: std::sync::Arc<str>,
    /// Run once it is durable (the engine's effects).
    pub after: AfterCommit,
    /// Nobody waits on it (a gateway call's outcome, its answer already sent):
    /// a store may hold it back a moment to write it with the next commit (the
    /// SQLite task writer, up to 2 ms), saving a flush of its own.
    pub unhurried: bool,
}

/// A new task, its route `queued` on its first enabled candidate and its first turn.
#[derive(Debug, Clone)]
pub struct TaskWrite {
    /// The task and its snapshot.
    pub task: Task,
    /// Its route, generation 0.
    pub route: RouteRecord,
    /// Its first turn.
    pub turn: Turn,
    /// The client's Idempotency-Key.
    pub idempotency_key: Option<String>,
    /// The live event's data, published once durable.
    pub event_json: std::sync::Arc<str>,
    /// The route's first transition, written in the same transaction: a
    /// gateway call's first attempt recorded as started (from generation 0),
    /// so the call is sent after one commit, not two.
    pub start: Option<RouteCommit>,
}

impl TaskWrite {
    /// The task as this write leaves it once committed.
    pub fn created(self) -> TaskDetail {
        match self.start {
            Some(start) => TaskDetail {
                task: self.task,
                route: start.route,
                attempts: start.start_attempt.into_iter().collect(),
                passed_over: Vec::new(),
                turns: vec![self.turn],
            },
            None => TaskDetail {
                task: self.task,
                route: self.route,
                attempts: Vec::new(),
                passed_over: Vec::new(),
                turns: vec![self.turn],
            },
        }
    }
}

/// A committed transition's live event.
#[derive(Debug, Clone)]
pub struct Published {
    /// The event's id (increasing in commit order; a reconnecting client sends the
    /// last it saw).
    pub id: i64,
    /// The route view with `task_id`, as JSON.
    pub data: std::sync::Arc<str>,
}

/// What the live feed carries, in commit order: the store publishes every
/// committed transition's event here once it is durable, whichever replica
/// committed it.
#[derive(Debug, Clone)]
pub enum Feed {
    /// A committed transition.
    Event(Published),
    /// Events may have been missed (the log was pruned past them before this
    /// replica read them): whoever shows routes reads them again.
    Resync,
    /// A replica committed a stop of this route at `generation`: whichever
    /// replica has the route's call in flight cuts it (the engine acts on it; a
    /// page has nothing to show).
    Cancel {
        /// The route's task.
        task_id: api::TaskId,
        /// The generation the stop was committed from.
        generation: i64,
    },
}

/// Where the store publishes the live feed.
pub type FeedSender = tokio::sync::broadcast::Sender<Feed>;

/// A route event as stored, for a client that reconnects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its id, increasing.
    pub id: i64,
    /// The route view, as JSON.
    pub data_json: String,
}
