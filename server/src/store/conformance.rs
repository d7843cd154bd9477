//! The store conformance suite: every driver runs these against a real
//! database. Each function sets up what it needs with fresh names.

use policy::{EscalationSettings, OnExhausted, PolicyDocument, ProviderFamily, ProviderKind};

use super::{Store, StoreError};
use crate::domain::{Candidate, IdOrigin, Profile, ProfileWrite, ProviderWrite};

fn provider_write(id: &str, name: &str) -> ProviderWrite {
    ProviderWrite {
        id: id.to_owned(),
        name: name.to_owned(),
        kind: ProviderKind::Anthropic,
        family: ProviderFamily::Anthropic,
        base_url: "https://api.anthropic.com".to_owned(),
        api_key_env: Some("ANTHROPIC_API_KEY".to_owned()),
        now_ms: 1_000,
    }
}

fn candidate(id: &str, provider_id: &str, model: &str) -> Candidate {
    Candidate {
        id: id.to_owned(),
        provider_id: provider_id.to_owned(),
        model: model.to_owned(),
        enabled: true,
        max_tokens: 4_096,
        escalation: EscalationSettings::default(),
        policy: PolicyDocument::default(),
    }
}

fn field_codes(error: StoreError) -> Vec<(String, &'static str)> {
    match error {
        StoreError::Invalid(errors) => errors
            .into_iter()
            .map(|error| (error.field, error.code.as_str()))
            .collect(),
        other => panic!("expected field errors, got {other:?}"),
    }
}

/// A provider and a two-candidate profile on it.
pub async fn seed_profile(store: &dyn Store) -> Profile {
    let provider = store
        .create_provider(provider_write("seed-p", "Seed provider"))
        .await
        .unwrap();
    let mut second = candidate("seed-c2", &provider.id, "model-beta");
    second.enabled = false;
    second.policy.hard.on_exhausted = OnExhausted::Stop;
    store
        .create_profile(ProfileWrite {
            id: "seed-profile".to_owned(),
            name: "Seed".to_owned(),
            candidates: vec![
                (
                    candidate("seed-c1", &provider.id, "model-alpha"),
                    IdOrigin::New,
                ),
                (second, IdOrigin::New),
            ],
            now_ms: 2_000,
        })
        .await
        .unwrap()
}

/// Every conformance check but the concurrent one.
pub async fn run_all(store: &dyn Store) {
    providers(store).await;
    profiles(store).await;
}

async fn providers(store: &dyn Store) {
    let created = store
        .create_provider(provider_write("p1", "Anthropic"))
        .await
        .unwrap();
    assert_eq!(created.revision, 1);
    assert_eq!(
        (created.created_at_ms, created.updated_at_ms),
        (1_000, 1_000)
    );
    let other = store
        .create_provider(provider_write("p0", "beta"))
        .await
        .unwrap();
    assert_eq!(store.get_provider("p1").await.unwrap(), created);
    let names: Vec<String> = store
        .list_providers()
        .await
        .unwrap()
        .into_iter()
        .map(|p| p.name)
        .collect();
    assert_eq!(
        names,
        ["Anthropic", "beta"],
        "listed by name regardless of case"
    );

    // Names are unique regardless of case; nothing is written.
    let taken = store
        .create_provider(provider_write("p2", "ANTHROPIC"))
        .await
        .unwrap_err();
    assert_eq!(field_codes(taken), [("name".to_owned(), "unique")]);
    assert!(matches!(
        store.get_provider("p2").await,
        Err(StoreError::NotFound { .. })
    ));

    // Updates are fenced by revision.
    let mut write = provider_write("p1", "Anthropic EU");
    write.base_url = "https://eu.example".to_owned();
    write.now_ms = 5_000;
    let updated = store.update_provider(write.clone(), 1).await.unwrap();
    assert_eq!(
        (
            updated.revision,
            updated.updated_at_ms,
            updated.created_at_ms
        ),
        (2, 5_000, 1_000)
    );
    assert_eq!(updated.base_url, "https://eu.example");
    match store.update_provider(write.clone(), 1).await.unwrap_err() {
        StoreError::Stale {
            sent: 1,
            current: 2,
        } => {}
        other => panic!("expected stale, got {other:?}"),
    }
    let mut renamed = write.clone();
    renamed.name = "Beta".to_owned();
    assert_eq!(
        field_codes(store.update_provider(renamed, 2).await.unwrap_err()),
        [("name".to_owned(), "unique")]
    );
    assert_eq!(
        store.get_provider("p1").await.unwrap(),
        updated,
        "a refused update changes nothing"
    );
    let mut missing = write;
    missing.id = "nope".to_owned();
    assert!(matches!(
        store.update_provider(missing, 1).await,
        Err(StoreError::NotFound { .. })
    ));

    // A provider in use cannot go; an unused one can.
    store
        .create_profile(ProfileWrite {
            id: "uses-p1".to_owned(),
            name: "Uses p1".to_owned(),
            candidates: vec![(candidate("u1", "p1", "m"), IdOrigin::New)],
            now_ms: 1,
        })
        .await
        .unwrap();
    match store.delete_provider("p1").await.unwrap_err() {
        StoreError::InUse { users, .. } => assert!(users.contains("Uses p1"), "{users}"),
        other => panic!("expected in use, got {other:?}"),
    }
    store.delete_provider(&other.id).await.unwrap();
    assert!(matches!(
        store.delete_provider(&other.id).await,
        Err(StoreError::NotFound { .. })
    ));
    store.delete_profile("uses-p1").await.unwrap();
    store.delete_provider("p1").await.unwrap();
}

async fn profiles(store: &dyn Store) {
    let profile = seed_profile(store).await;
    assert_eq!(profile.revision, 1);
    let ids: Vec<&str> = profile.candidates.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["seed-c1", "seed-c2"]);
    assert!(!profile.candidates[1].enabled);
    assert_eq!(
        profile.candidates[1].policy.hard.on_exhausted,
        OnExhausted::Stop
    );
    assert_eq!(store.get_profile(&profile.id).await.unwrap(), profile);
    assert_eq!(store.list_profiles().await.unwrap(), vec![profile.clone()]);

    // References are checked in the transaction; nothing is written.
    let bad = ProfileWrite {
        id: "bad".to_owned(),
        name: "Bad".to_owned(),
        candidates: vec![
            (candidate("b1", "seed-p", "m"), IdOrigin::New),
            (candidate("b2", "no-such-provider", "m"), IdOrigin::New),
            (candidate("someone-elses", "seed-p", "m"), IdOrigin::Client),
        ],
        now_ms: 3_000,
    };
    assert_eq!(
        field_codes(store.create_profile(bad).await.unwrap_err()),
        [
            ("candidates[1].provider_id".to_owned(), "not_found"),
            ("candidates[2].id".to_owned(), "not_found"),
        ]
    );
    assert!(matches!(
        store.get_profile("bad").await,
        Err(StoreError::NotFound { .. })
    ));
    let same_name = ProfileWrite {
        id: "dup".to_owned(),
        name: "seed".to_owned(),
        candidates: vec![(candidate("d1", "seed-p", "m"), IdOrigin::New)],
        now_ms: 3_000,
    };
    assert_eq!(
        field_codes(store.create_profile(same_name).await.unwrap_err()),
        [("name".to_owned(), "unique")]
    );

    // An update reorders, keeps ids, adds a candidate and drops none by accident.
    let mut first = profile.candidates[1].clone();
    first.enabled = true;
    let update = ProfileWrite {
        id: profile.id.clone(),
        name: "Seed renamed".to_owned(),
        candidates: vec![
            (first, IdOrigin::Client),
            (profile.candidates[0].clone(), IdOrigin::Client),
            (candidate("seed-c3", "seed-p", "model-gamma"), IdOrigin::New),
        ],
        now_ms: 4_000,
    };
    let updated = store.update_profile(update.clone(), 1).await.unwrap();
    assert_eq!(updated.revision, 2);
    assert_eq!(updated.name, "Seed renamed");
    let ids: Vec<&str> = updated.candidates.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["seed-c2", "seed-c1", "seed-c3"]);
    assert!(updated.candidates[0].enabled);
    assert_eq!(
        (updated.created_at_ms, updated.updated_at_ms),
        (2_000, 4_000)
    );

    // Stale, unknown and missing updates change nothing.
    match store.update_profile(update.clone(), 1).await.unwrap_err() {
        StoreError::Stale {
            sent: 1,
            current: 2,
        } => {}
        other => panic!("expected stale, got {other:?}"),
    }
    let mut unknown = update.clone();
    unknown.candidates[0].0.id = "not-mine".to_owned();
    assert_eq!(
        field_codes(store.update_profile(unknown, 2).await.unwrap_err()),
        [("candidates[0].id".to_owned(), "not_found")]
    );
    assert_eq!(
        store.get_profile(&profile.id).await.unwrap(),
        updated,
        "a refused update changes nothing"
    );
    let mut missing = update;
    missing.id = "no-such-profile".to_owned();
    assert!(matches!(
        store.update_profile(missing, 1).await,
        Err(StoreError::NotFound { .. })
    ));

    store.delete_profile(&profile.id).await.unwrap();
    assert!(matches!(
        store.get_profile(&profile.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete_profile(&profile.id).await,
        Err(StoreError::NotFound { .. })
    ));
    store.delete_provider("seed-p").await.unwrap();
}

/// Eight writers send the same revision at once: exactly one wins, the
/// rest are told the revision is stale.
pub async fn concurrent_updates_exactly_one_wins(store: &(impl Store + Clone)) {
    let profile = seed_profile(store).await;
    let mut writers = Vec::new();
    for writer in 0..8 {
        let store = store.clone();
        let write = ProfileWrite {
            id: profile.id.clone(),
            name: format!("Writer {writer}"),
            candidates: profile
                .candidates
                .iter()
                .cloned()
                .map(|c| (c, IdOrigin::Client))
                .collect(),
            now_ms: 10_000 + writer,
        };
        writers.push(tokio::spawn(
            async move { store.update_profile(write, 1).await },
        ));
    }
    let mut won = Vec::new();
    let mut stale = 0;
    for writer in writers {
        match writer.await.unwrap() {
            Ok(profile) => won.push(profile),
            Err(StoreError::Stale { current: 2, .. }) => stale += 1,
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((won.len(), stale), (1, 7));
    assert_eq!(store.get_profile(&profile.id).await.unwrap(), won[0]);
}
