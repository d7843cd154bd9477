//! Every shared circuit on one page, its history, and a person's "Close now".

use std::collections::HashMap;

use api::{
    ApiError, CIRCUIT_HISTORY_MS, CIRCUIT_WAITING_LISTED, CircuitClosedView, CircuitHistoryView,
    CircuitView, CircuitsView, CloseCircuitRequest, OpenCircuitView, ProviderHistoryView,
    Timestamp, read::Read,
};

use policy::circuit::CircuitScope;

use super::Services;
use crate::domain::{Circuit, CircuitKey, Provider};
use crate::error::AppError;

/// The most routes waiting on circuits the page reads (it counts them all up
/// to this, and lists the first of each circuit's).
const WAITS_READ: u32 = 10_000;

/// The most history entries the page reads (a day of a busy provider's
/// failures can be many; the count says how many were read).
const HISTORY_READ: u32 = 2_000;

/// A provider's name, or its id when it was deleted since.
fn provider_name(providers: &[Provider], id: &api::ProviderId) -> String {
    providers
        .iter()
        .find(|provider| &provider.id == id)
        .map_or_else(|| id.to_string(), |provider| provider.name.clone())
}

/// A circuit as the pages show it; `None` for one whose time has come with no
/// probe on its way (nothing holds a route back: it stays in the store only
/// until a call over it ends).
pub(super) fn circuit_view(
    circuit: &Circuit,
    providers: &[Provider],
    now_ms: i64,
) -> Option<CircuitView> {
    if circuit.until_ms <= now_ms && circuit.probe_task_id.is_none() {
        return None;
    }
    Some(CircuitView {
        provider: provider_name(providers, &circuit.key.provider_id),
        provider_id: circuit.key.provider_id.clone(),
        model: circuit.key.model.clone(),
        code: circuit.code,
        class: circuit.code.class(),
        until: Timestamp::from_millis(circuit.until_ms),
        half_open: circuit.until_ms <= now_ms,
        probe_task_id: circuit.probe_task_id.clone(),
    })
}

impl Services {
    /// Every open or half-open circuit with the routes waiting on it, and the
    /// last day's history by provider.
    pub async fn circuits(&self) -> Result<CircuitsView, AppError> {
        let now = self.clock.now();
        let store = self.store.as_ref();
        let providers = store.list_providers().await?;
        let waits = store.list_circuit_waits(WAITS_READ).await?;
        let circuits = store
            .list_circuits()
            .await?
            .into_iter()
            .filter_map(|circuit| {
                let view = circuit_view(&circuit, &providers, now.as_millis())?;
                // A route waits on its provider's circuit (a usage window, a
                // quota, credits) or on its model's (a rate limit, capacity).
                let scope = CircuitScope::of(circuit.code);
                let waiting: Vec<_> = waits
                    .iter()
                    .filter(|wait| {
                        wait.provider_id == circuit.key.provider_id
                            && CircuitScope::of(wait.code) == scope
                            && circuit
                                .key
                                .model
                                .as_ref()
                                .is_none_or(|model| model == &wait.model)
                    })
                    .map(|wait| wait.task_id.clone())
                    .collect();
                Some(OpenCircuitView {
                    circuit: view,
                    opened_at: Timestamp::from_millis(circuit.opened_at_ms),
                    waiting_total: u32::try_from(waiting.len()).unwrap_or(u32::MAX),
                    waiting: waiting.into_iter().take(CIRCUIT_WAITING_LISTED).collect(),
                })
            })
            .collect();
        let since = now.plus_millis(-CIRCUIT_HISTORY_MS).as_millis();
        let mut history: Vec<ProviderHistoryView> = Vec::new();
        let mut by_provider: HashMap<api::ProviderId, usize> = HashMap::new();
        // Newest first, so each provider's place is where its latest entry is.
        for entry in store.circuit_history(since, HISTORY_READ).await? {
            let provider_id = entry.key.provider_id.clone();
            let index = *by_provider.entry(provider_id.clone()).or_insert_with(|| {
                history.push(ProviderHistoryView {
                    provider: provider_name(&providers, &provider_id),
                    provider_id,
                    openings: 0,
                    entries: Vec::new(),
                });
                history.len() - 1
            });
            let provider = &mut history[index];
            if entry.kind == crate::domain::CircuitHistoryKind::Opened {
                provider.openings += 1;
            }
            provider.entries.push(CircuitHistoryView {
                model: entry.key.model,
                kind: entry.kind.as_str().to_owned(),
                code: entry.code,
                at: Timestamp::from_millis(entry.at_ms),
                until: Timestamp::from_millis(entry.until_ms),
                task_id: entry.task_id,
            });
        }
        Ok(CircuitsView {
            now,
            circuits,
            history,
        })
    }

    /// A person's "Close now": the circuit as they saw it goes, and the routes
    /// waiting on it are sent now. A circuit that closed, or whose reset moved
    /// since, is left alone (409).
    pub async fn close_circuit(
        &self,
        request: Read<CloseCircuitRequest>,
    ) -> Result<CircuitClosedView, AppError> {
        let request = request.check(CloseCircuitRequest::check)?;
        let key = CircuitKey {
            provider_id: request.provider_id.clone(),
            model: request.model.clone(),
        };
        match self
            .engine
            .close_circuit(&key, request.until.as_millis())
            .await?
        {
            Some(released) => Ok(CircuitClosedView { released }),
            None => Err(ApiError::CircuitChanged {
                message: self.circuit_now(&key).await?,
            }
            .into()),
        }
    }

    /// What became of a circuit a person tried to close, for the 409's message.
    async fn circuit_now(&self, key: &CircuitKey) -> Result<String, AppError> {
        let now_ms = self.clock.now().as_millis();
        let current = self
            .store
            .list_circuits()
            .await?
            .into_iter()
            .find(|circuit| &circuit.key == key)
            .filter(|circuit| circuit.until_ms > now_ms || circuit.probe_task_id.is_some());
        Ok(match current {
            None => "This circuit is not open any more: nothing was changed.".to_owned(),
            Some(circuit) => format!(
                "This circuit changed since you saw it: it now half-opens at {} \
                 ({}). Nothing was changed: look again, then close it if you still mean to.",
                Timestamp::from_millis(circuit.until_ms),
                circuit.code.as_str()
            ),
        })
    }
}
