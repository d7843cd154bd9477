//! Every shared circuit on one page (`GET /api/circuits`), and a person's "Close
//! now" (`POST /api/circuits/close`).

use policy::SemanticCode;
use serde::{Deserialize, Serialize};

use crate::checks::{ID_MAX, MODEL_MAX};
use crate::ids::{ProviderId, TaskId};
use crate::overview::CircuitView;
use crate::time::Timestamp;

/// How far back the circuits page's history goes: a day.
pub const CIRCUIT_HISTORY_MS: i64 = 24 * 60 * 60 * 1000;

/// The most routes listed as waiting on one circuit (the count is whole).
pub const CIRCUIT_WAITING_LISTED: usize = 20;

/// The circuits page: every open or half-open circuit, and the last day's history
/// by provider.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitsView {
    /// The server's time when it was read.
    pub now: Timestamp,
    /// Every open or half-open circuit, the soonest to half-open first.
    pub circuits: Vec<OpenCircuitView>,
    /// The last day's openings and closings, by provider, the provider with the
    /// latest first.
    pub history: Vec<ProviderHistoryView>,
}

/// One open or half-open circuit, with the routes held back by it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OpenCircuitView {
    /// The circuit.
    pub circuit: CircuitView,
    /// When it opened (a later failure that extended it keeps this).
    pub opened_at: Timestamp,
    /// The routes waiting on it, soonest first (at most 20).
    pub waiting: Vec<TaskId>,
    /// How many routes wait on it.
    pub waiting_total: u32,
}

/// A provider's last day of circuits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ProviderHistoryView {
    /// The provider.
    pub provider_id: ProviderId,
    /// Its name (its id when it was deleted since).
    pub provider: String,
    /// How many failures opened (or extended) one of its circuits.
    pub openings: u32,
    /// What happened, newest first.
    pub entries: Vec<CircuitHistoryView>,
}

/// One thing that happened to a circuit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitHistoryView {
    /// The model, for a model's circuit.
    pub model: Option<String>,
    /// `opened` (a failure opened or extended it) or `closed_by_person`.
    pub kind: String,
    /// The code of the failure that opened it.
    #[cfg_attr(feature = "openapi", schema(value_type = crate::openapi::SemanticCodeSchema))]
    pub code: SemanticCode,
    /// When.
    pub at: Timestamp,
    /// Its reset then.
    pub until: Timestamp,
    /// The route whose failure opened it.
    pub task_id: Option<TaskId>,
}

/// "Close now": the circuit as the person saw it. Its reset is the fence: a
/// circuit that closed, reopened or moved its reset since is left alone (409).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, validator::Validate)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct CloseCircuitRequest {
    /// The provider.
    #[validate(length(min = 1, max = ID_MAX, message = "names the circuit's provider"))]
    pub provider_id: ProviderId,
    /// The model, for a model's circuit; absent or null for the provider's.
    #[serde(default)]
    #[validate(length(
        min = 1,
        max = MODEL_MAX,
        message = "names the model of a model's circuit; leave it out for the provider's"
    ))]
    #[cfg_attr(feature = "openapi", schema(min_length = 1, max_length = 200))]
    pub model: Option<String>,
    /// When the circuit half-opens, as shown.
    pub until: Timestamp,
}

/// A circuit closed by a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct CircuitClosedView {
    /// The routes that were waiting on it, now sent.
    pub released: Vec<TaskId>,
}

impl crate::read::Request for CloseCircuitRequest {}

impl CloseCircuitRequest {
    /// Every error at once, or the request as sent. Only what the document
    /// states is refused: a provider or model that names no open circuit
    /// (white space, say) is the 409 of a circuit that is not open.
    pub fn check(&self) -> Result<Self, Vec<policy::FieldError>> {
        crate::checks::checked(self.clone())
    }
}
