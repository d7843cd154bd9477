//! `switchback serve --demo`: a new database seeded with simulated providers, a
//! profile per scenario and one task each, through the same services the API
//! uses, so a newcomer opening the app watches recovery happen: a backoff, a
//! reset wait, a skip, a hold, and completions. A database that already has
//! providers is left alone.

use api::read::Read;
use api::{ProfileRequest, ProviderRequest, TaskRequest};
use serde_json::{Value, json};

use crate::error::AppError;
use crate::services::Services;

/// Anthropic's answer when it is overloaded (HTTP 529).
fn overloaded(delay_ms: u64) -> Value {
    json!({"error": {"provider": "anthropic", "status": 529,
        "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"},
        "delay_ms": delay_ms})
}

/// One scenario: a simulated provider (or two), a profile, and a task.
struct Scenario {
    profile: &'static str,
    prompt: &'static str,
    /// `(provider name, family, model, script, policy)` per candidate.
    candidates: Vec<(&'static str, &'static str, &'static str, Value, Value)>,
}

fn scenarios() -> Vec<Scenario> {
    let patient = json!({"version": 2,
        "transient": {"retry": {"enabled": true, "max_retries": 3, "initial_interval_ms": 3000},
                      "reset_wait": {"enabled": true, "max_wait_s": 60}, "on_exhausted": "skip"},
        "hard": {"retry": {"enabled": false, "max_retries": 2, "initial_interval_ms": 500},
                 "reset_wait": {"enabled": false, "max_wait_s": 3600}, "on_exhausted": "skip"}});
    vec![
        Scenario {
            profile: "Demo: backoff",
            prompt: "Summarise the release notes (the provider is overloaded twice, then answers).",
            candidates: vec![(
                "Demo overloaded",
                "anthropic",
                "claude-demo",
                json!([overloaded(1500), overloaded(1500),
                    {"reply": "Release 2.4 adds shared circuits and restart-safe waits.", "delay_ms": 2000}]),
                patient.clone(),
            )],
        },
        Scenario {
            profile: "Demo: reset wait",
            prompt: "Draft a reply to the customer (the provider says: try again in 20 s).",
            candidates: vec![(
                "Demo rate-limited",
                "openai",
                "gpt-demo",
                json!([{"error": {"provider": "openai", "status": 429,
                        "headers": {"retry-after": "20", "x-ratelimit-reset-requests": "20s"},
                        "body": "{\"error\":{\"message\":\"Rate limit reached for gpt-demo in organization org-demo on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in 20s.\",\"type\":\"requests\",\"param\":null,\"code\":\"rate_limit_exceeded\"}}"},
                       "delay_ms": 1000},
                      {"reply": "Thanks for your patience: the fix ships on Monday.", "delay_ms": 1500}]),
                patient.clone(),
            )],
        },
        Scenario {
            profile: "Demo: skip",
            prompt: "Translate the summary into French (the first key has expired).",
            candidates: vec![
                (
                    "Demo expired key",
                    "anthropic",
                    "claude-demo",
                    json!([{"error": {"provider": "anthropic", "status": 401,
                        "body": "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}"},
                        "delay_ms": 1500}]),
                    patient.clone(),
                ),
                (
                    "Demo steady",
                    "openai",
                    "gpt-demo-mini",
                    json!([{"reply": "La version 2.4 ajoute des circuits partagés.", "delay_ms": 2500}]),
                    patient.clone(),
                ),
            ],
        },
        Scenario {
            profile: "Demo: hold",
            prompt: "Write the changelog entry (the stream breaks after the first words).",
            candidates: vec![(
                "Demo cut-off stream",
                "anthropic",
                "claude-demo",
                json!([{"partial": "## 2.4\n- Shared circ", "delay_ms": 2000,
                        "error": {"provider": "anthropic", "status": 200,
                            "body": "{\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}"}}]),
                patient,
            )],
        },
    ]
}

/// Seed the demo into an empty database; answers whether it did.
pub async fn seed(services: &Services) -> Result<bool, AppError> {
    if !services.list_providers().await?.is_empty() {
        tracing::info!("demo not seeded: the database already has providers");
        return Ok(false);
    }
    for scenario in scenarios() {
        let mut candidates = Vec::new();
        for (name, family, model, script, policy) in scenario.candidates {
            let provider = services
                .create_provider(Read::<ProviderRequest>::from_json(&json!({
                    "name": name, "kind": "simulated", "family": family, "script": script,
                })))
                .await?;
            candidates.push(
                json!({"provider_id": provider.id, "model": model, "enabled": true,
                "max_tokens": 1024, "policy": policy}),
            );
        }
        let profile = services
            .create_profile(Read::<ProfileRequest>::from_json(
                &json!({"name": scenario.profile, "candidates": candidates}),
            ))
            .await?;
        services
            .create_task(
                Read::<TaskRequest>::from_json(
                    &json!({"profile_id": profile.id, "prompt": scenario.prompt}),
                ),
                None,
            )
            .await?;
    }
    tracing::info!("demo seeded: 4 profiles of simulated providers, one task each");
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use policy::{Class, SemanticCode};

    use super::*;
    use crate::clock::ManualClock;
    use crate::engine::{Engine, EngineSettings, ProviderCaller};
    use crate::secrets::FixedSecrets;
    use crate::store::{SqliteStore, Store};

    /// Each scenario fails first the way its name says: the script's evidence goes
    /// through the real catalogue.
    #[test]
    fn each_scenario_fails_as_it_says() {
        let expected = [
            ("Demo: backoff", Some(SemanticCode::Overloaded), false),
            ("Demo: reset wait", Some(SemanticCode::RateLimited), true),
            ("Demo: skip", Some(SemanticCode::AuthFailed), false),
            ("Demo: hold", None, false),
        ];
        let scenarios = scenarios();
        assert_eq!(scenarios.len(), expected.len());
        for (scenario, (profile, code, reset)) in scenarios.iter().zip(expected) {
            assert_eq!(scenario.profile, profile);
            let script = providers::parse_script(&scenario.candidates[0].3).unwrap();
            let first = &scenario.candidates[0].3[0];
            match code {
                Some(code) => {
                    let evidence = catalogue::Evidence::from_json_value(&first["error"]).unwrap();
                    let verdict = catalogue::classify(&evidence, 1_000_000);
                    assert_eq!(verdict.classification.code, code, "{profile}");
                    assert_ne!(verdict.classification.code.class(), Class::Outside);
                    assert_eq!(
                        verdict.classification.reset_at_ms.is_some(),
                        reset,
                        "{profile}"
                    );
                }
                // The hold: text streams before the error, whatever the error is.
                None => assert!(first["partial"].is_string(), "{profile}"),
            }
            assert!(!script.is_empty());
        }
    }

    #[tokio::test]
    async fn seeds_an_empty_database_once() {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("demo.db").display());
        let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&url).await.unwrap());
        let clock = Arc::new(ManualClock::at_millis(1_796_097_600_000));
        // The engine is not started: the tasks stay queued.
        let engine = Engine::new(
            store.clone(),
            clock.clone(),
            Arc::new(ProviderCaller::new()),
            EngineSettings::default(),
        );
        let services = Services {
            store,
            clock,
            secrets: Arc::new(FixedSecrets::new([])),
            key_envs: api::KeyEnvRules::default(),
            engine,
            open_tasks: crate::services::OpenTasks::unlimited(),
            inbox_count: Default::default(),
        };
        assert!(seed(&services).await.unwrap());
        assert!(!seed(&services).await.unwrap(), "not twice");
        let tasks = services
            .list_tasks(api::TaskQuery::default())
            .await
            .unwrap()
            .tasks;
        assert_eq!(tasks.len(), 4);
        assert_eq!(services.list_profiles().await.unwrap().len(), 4);
        assert_eq!(services.list_providers().await.unwrap().len(), 5);
    }
}
