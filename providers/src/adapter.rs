//! One provider behind the one interface the engine calls.

use policy::ProviderKind;

use crate::call::{CallOutcome, CallRequest, Observer};
use crate::client::http_client_with_connect_timeout;
use crate::config::{ProviderConfig, Timeouts};
use crate::translate::Unsupported;
use crate::wire::Wire;
use crate::{cli, http, simulated};

/// A provider the engine can call: an HTTP adapter for `anthropic`, `openai` and
/// `openai_compatible`, a script player for `simulated`, or an agent CLI for `cli`.
///
/// Its `Debug` output shows the configuration, which names the key's environment
/// variable but never holds the key.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use providers::{Adapter, CallOutcome, CallRequest, Message, ProviderConfig, SimulatedStep, StopReason};
/// let config = ProviderConfig::simulated(vec![SimulatedStep::reply("Paris.")]);
/// let adapter = Adapter::new(config, providers::http_client());
/// let request = CallRequest {
///     model: "any".into(),
///     max_tokens: 100,
///     messages: vec![Message::user("Capital of France?")],
///     call_index: 0,
///     client: None,
/// };
/// assert_eq!(
///     adapter.call(&request).await,
///     CallOutcome::Answered { text: "Paris.".into(), stop: StopReason::End, tool_calls: vec![] },
/// );
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct Adapter {
    config: ProviderConfig,
    client: reqwest::Client,
}

impl Adapter {
    /// An adapter over `client` (normally a clone of [`crate::http_client`]).
    ///
    /// reqwest bounds the connect per client, not per request: when
    /// `config.timeouts.connect_ms` differs from the default that `http_client` is
    /// built with, the adapter builds its own client with the same settings and that
    /// connect timeout, and `client` is not used. (Connections are pooled per host, so
    /// a provider loses nothing by having its own pool.)
    pub fn new(config: ProviderConfig, client: reqwest::Client) -> Self {
        let uses_default_connect = config.timeouts.connect_ms == Timeouts::default().connect_ms;
        let client = if uses_default_connect || config.kind == ProviderKind::Simulated {
            client
        } else {
            http_client_with_connect_timeout(config.timeouts.connect())
        };
        Self { config, client }
    }

    /// The configuration it was built from.
    pub fn config(&self) -> &ProviderConfig {
        &self.config
    }

    /// Whether this provider can carry `request` as it is: always a task's; a
    /// gateway client's own request when its protocol is this provider's, or when
    /// it translates (text, system prompts, budget, sampling, stops), and for a
    /// simulated provider when it is text only. The refusal names the field.
    pub fn carries(&self, request: &CallRequest) -> Result<(), Unsupported> {
        let Some(client) = &request.client else {
            return Ok(());
        };
        if self.config.kind == ProviderKind::Cli {
            return client.prompt().map(drop);
        }
        match self.wire() {
            Some(wire) => client
                .body_for(wire, &request.model, request.max_tokens)
                .map(drop),
            None => client.text_only(),
        }
    }

    /// The protocol this provider speaks, `None` for a simulated one or a CLI.
    fn wire(&self) -> Option<Wire> {
        match self.config.kind {
            ProviderKind::Anthropic => Some(Wire::Anthropic),
            ProviderKind::Openai | ProviderKind::OpenaiCompatible => Some(Wire::OpenAi),
            ProviderKind::Simulated | ProviderKind::Cli => None,
        }
    }

    /// Makes one call. Never panics and never returns early with an error: every
    /// failure is a [`CallOutcome::Failed`] with its evidence.
    ///
    /// To cancel, drop the future (or abort its task): nothing is spawned that
    /// outlives it, and the connection closes with it.
    pub async fn call(&self, request: &CallRequest) -> CallOutcome {
        self.call_observed(request, &()).await
    }

    /// [`Adapter::call`], with the answer's text passed to `observer` as it
    /// streams (scrubbed of the key as it is): what a caller that streams the
    /// answer on needs.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Mutex;
    /// use providers::{Adapter, CallRequest, Message, Observer, ProviderConfig, SimulatedStep};
    /// struct Pieces(Mutex<Vec<String>>);
    /// impl Observer for Pieces {
    ///     fn text(&self, piece: &str) { self.0.lock().unwrap().push(piece.to_owned()); }
    /// }
    /// let adapter = Adapter::new(ProviderConfig::simulated(vec![SimulatedStep::reply("Paris.")]), providers::http_client());
    /// let request = CallRequest { model: "any".into(), max_tokens: 100, messages: vec![Message::user("Capital?")], call_index: 0, client: None };
    /// let pieces = Pieces(Mutex::new(Vec::new()));
    /// adapter.call_observed(&request, &pieces).await;
    /// assert_eq!(pieces.0.into_inner().unwrap(), ["Paris."]);
    /// # });
    /// ```
    pub async fn call_observed(
        &self,
        request: &CallRequest,
        observer: &dyn Observer,
    ) -> CallOutcome {
        if self.config.kind == ProviderKind::Cli {
            let Some(cli) = &self.config.cli else {
                return CallOutcome::failed(
                    catalogue::Evidence::new(self.config.family.as_str())
                        .with_output("not run: the provider has no command"),
                );
            };
            return cli::call(
                cli,
                self.config.family.as_str(),
                &self.config.timeouts,
                request,
                observer,
            )
            .await;
        }
        match self.wire() {
            Some(wire) => http::call(&self.client, &self.config, wire, request, observer).await,
            None => {
                simulated::play_script(
                    &self.config.script,
                    self.config.family.as_str(),
                    &self.config.timeouts,
                    request,
                    observer,
                )
                .await
            }
        }
    }
}
