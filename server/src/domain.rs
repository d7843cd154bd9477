//! The stored things, as the rest of the server sees them: providers and
//! dynamic profiles (the engine will add tasks, routes and attempts). Row
//! types stay in the store; wire types in the `api` crate.

use api::{CandidateId, ProfileId, ProviderId, Revision, Timestamp};
use policy::{EscalationSettings, PolicyDocument, ProviderFamily, ProviderKind};

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
