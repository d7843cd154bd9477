//! How the engine calls a provider: one trait, so the engine does not assume HTTP
//! (a provider could as well be a command it runs), implemented over the
//! `providers` crate's adapters.

use async_trait::async_trait;
use providers::{Adapter, CallOutcome, CallRequest, Observer, ProviderConfig, Unsupported};

use crate::domain::Provider;

/// Calls a provider and answers its outcome: an answer, or evidence of a failure.
#[async_trait]
pub trait Caller: Send + Sync + 'static {
    /// One call, its answer's text passed to `observer` as it streams. Dropping
    /// the future cancels it.
    async fn call(
        &self,
        provider: &Provider,
        request: &CallRequest,
        observer: &dyn Observer,
    ) -> CallOutcome;

    /// Whether `provider` can carry `request` as it is (a gateway client's
    /// request in its protocol); the refusal names the field.
    fn carries(&self, provider: &Provider, request: &CallRequest) -> Result<(), Unsupported>;
}

/// The real calls: streaming HTTP for `anthropic`, `openai` and
/// `openai_compatible`, the script for `simulated`. The key is read from its
/// variable by the adapter at call time, never here.
#[derive(Debug, Clone)]
pub struct ProviderCaller {
    client: providers::reqwest::Client,
}

impl ProviderCaller {
    /// A caller sharing one HTTP client (its connection pool) across providers.
    pub fn new() -> Self {
        Self {
            client: providers::http_client(),
        }
    }
}

impl Default for ProviderCaller {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl Caller for ProviderCaller {
    async fn call(
        &self,
        provider: &Provider,
        request: &CallRequest,
        observer: &dyn Observer,
    ) -> CallOutcome {
        self.adapter(provider)
            .call_observed(request, observer)
            .await
    }

    fn carries(&self, provider: &Provider, request: &CallRequest) -> Result<(), Unsupported> {
        self.adapter(provider).carries(request)
    }
}

impl ProviderCaller {
    fn adapter(&self, provider: &Provider) -> Adapter {
        let config = ProviderConfig {
            kind: provider.kind,
            family: provider.family,
            base_url: provider.base_url.clone(),
            api_key_env: provider.api_key_env.clone(),
            timeouts: provider.timeouts,
            script: provider.script.clone(),
            cli: provider.cli.clone(),
        };
        Adapter::new(config, self.client.clone())
    }
}
