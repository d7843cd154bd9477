use api::{ProfileId, Revision};
use policy::OnExhausted;

use super::{at, candidate, field_codes, provider_write};
use crate::domain::{IdOrigin, Profile, ProfileWrite};
use crate::store::{Store, StoreError};

/// A provider and a two-candidate profile on it.
pub async fn seed_profile(store: &dyn Store) -> Profile {
    let provider = store
        .create_provider(provider_write("seed-p", "Seed provider"))
        .await
        .unwrap();
    let mut second = candidate("seed-c2", provider.id.as_str(), "model-beta");
    second.enabled = false;
    second.policy.hard.on_exhausted = OnExhausted::Stop;
    store
        .create_profile(ProfileWrite {
            id: ProfileId::new("seed-profile"),
            name: "Seed".to_owned(),
            candidates: vec![
                (
                    candidate("seed-c1", provider.id.as_str(), "model-alpha"),
                    IdOrigin::New,
                ),
                (second, IdOrigin::New),
            ],
            gateway_deadline_s: Some(300),
            now: at(2_000),
        })
        .await
        .unwrap()
}

/// A profile keeps its candidates' order, ids, enabled flags and policies, and
/// reads back and lists as stored.
pub async fn a_profile_keeps_its_candidates_as_written(store: &dyn Store) {
    let profile = seed_profile(store).await;
    assert_eq!(profile.revision, Revision::FIRST);
    assert_eq!(profile.gateway_deadline_s, Some(300));
    let ids: Vec<&str> = profile.candidates.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["seed-c1", "seed-c2"]);
    assert!(!profile.candidates[1].enabled);
    assert_eq!(
        profile.candidates[1].policy.hard.on_exhausted,
        OnExhausted::Stop
    );
    assert_eq!(store.get_profile(&profile.id).await.unwrap(), profile);
    assert_eq!(store.list_profiles().await.unwrap(), vec![profile.clone()]);
}

/// A profile is found by its name in any case, and a name no profile has is
/// `NotFound`.
pub async fn a_profile_is_found_by_its_name_in_any_case(store: &dyn Store) {
    let profile = seed_profile(store).await;
    for name in ["Seed", "seed", "SEED"] {
        assert_eq!(
            store.profile_by_name(name).await.unwrap(),
            profile,
            "{name}"
        );
    }
    for name in ["Seedling", "", "seed-profile"] {
        assert!(
            matches!(
                store.profile_by_name(name).await,
                Err(StoreError::NotFound {
                    entity: "profile",
                    ..
                })
            ),
            "{name}"
        );
    }
}

/// References are checked in the transaction, in one query for every
/// provider, each refusal at its field; nothing is written.
pub async fn profile_references_are_checked_and_a_refusal_writes_nothing(store: &dyn Store) {
    seed_profile(store).await;
    let bad = ProfileWrite {
        id: ProfileId::new("bad"),
        name: "Bad".to_owned(),
        candidates: vec![
            (candidate("b1", "seed-p", "m"), IdOrigin::New),
            (candidate("b2", "no-such-provider", "m"), IdOrigin::New),
            (candidate("someone-elses", "seed-p", "m"), IdOrigin::Client),
            (candidate("b4", "no-such-provider", "m"), IdOrigin::New),
        ],
        gateway_deadline_s: None,
        now: at(3_000),
    };
    assert_eq!(
        field_codes(store.create_profile(bad).await.unwrap_err()),
        [
            ("candidates[1].provider_id".to_owned(), "not_found"),
            ("candidates[2].id".to_owned(), "not_found"),
            ("candidates[3].provider_id".to_owned(), "not_found"),
        ]
    );
    assert!(matches!(
        store.get_profile(&ProfileId::new("bad")).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// Names are unique regardless of case, and a taken name does not hide what
/// else is wrong.
pub async fn a_taken_profile_name_does_not_hide_other_errors(store: &dyn Store) {
    seed_profile(store).await;
    let same_name = ProfileWrite {
        id: ProfileId::new("dup"),
        name: "seed".to_owned(),
        candidates: vec![(candidate("d1", "seed-p", "m"), IdOrigin::New)],
        gateway_deadline_s: None,
        now: at(3_000),
    };
    assert_eq!(
        field_codes(store.create_profile(same_name).await.unwrap_err()),
        [("name".to_owned(), "unique")]
    );
    let same_name_and_more = ProfileWrite {
        id: ProfileId::new("dup2"),
        name: "SEED".to_owned(),
        candidates: vec![(candidate("d2", "no-such-provider", "m"), IdOrigin::New)],
        gateway_deadline_s: None,
        now: at(3_000),
    };
    assert_eq!(
        field_codes(store.create_profile(same_name_and_more).await.unwrap_err()),
        [
            ("name".to_owned(), "unique"),
            ("candidates[0].provider_id".to_owned(), "not_found"),
        ]
    );
}

/// The seed profile updated: its candidates reordered (the second enabled
/// and first), a third added, renamed; the write and the profile it made.
async fn reordered(store: &dyn Store) -> (ProfileWrite, Profile) {
    let profile = seed_profile(store).await;
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
        gateway_deadline_s: None,
        now: at(4_000),
    };
    let updated = store
        .update_profile(update.clone(), Revision::FIRST)
        .await
        .unwrap();
    (update, updated)
}

/// An update reorders, keeps ids, adds a candidate and drops none by accident.
pub async fn a_profile_update_reorders_keeps_ids_and_adds(store: &dyn Store) {
    let (_, updated) = reordered(store).await;
    assert_eq!(updated.revision, Revision::new(2));
    assert_eq!(updated.name, "Seed renamed");
    assert_eq!(updated.gateway_deadline_s, None, "an update may clear it");
    let ids: Vec<&str> = updated.candidates.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["seed-c2", "seed-c1", "seed-c3"]);
    assert!(updated.candidates[0].enabled);
    assert_eq!(
        (updated.created_at, updated.updated_at),
        (at(2_000), at(4_000))
    );
}

/// Stale, unknown and missing updates change nothing.
pub async fn stale_unknown_and_missing_profile_updates_change_nothing(store: &dyn Store) {
    let (update, updated) = reordered(store).await;
    match store
        .update_profile(update.clone(), Revision::FIRST)
        .await
        .unwrap_err()
    {
        StoreError::Stale { sent, current } => {
            assert_eq!((sent, current), (Revision::FIRST, Revision::new(2)));
        }
        other => panic!("expected stale, got {other:?}"),
    }
    let mut unknown = update.clone();
    unknown.candidates[0].0.id = "not-mine".into();
    assert_eq!(
        field_codes(
            store
                .update_profile(unknown, Revision::new(2))
                .await
                .unwrap_err()
        ),
        [("candidates[0].id".to_owned(), "not_found")]
    );
    assert_eq!(
        store.get_profile(&updated.id).await.unwrap(),
        updated,
        "a refused update changes nothing"
    );
    let mut missing = update;
    missing.id = ProfileId::new("no-such-profile");
    assert!(matches!(
        store.update_profile(missing, Revision::FIRST).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// A deleted profile is gone, once; its provider can go then.
pub async fn a_deleted_profile_is_gone(store: &dyn Store) {
    let profile = seed_profile(store).await;
    store.delete_profile(&profile.id).await.unwrap();
    assert!(matches!(
        store.get_profile(&profile.id).await,
        Err(StoreError::NotFound { .. })
    ));
    assert!(matches!(
        store.delete_profile(&profile.id).await,
        Err(StoreError::NotFound { .. })
    ));
    store.delete_provider(&"seed-p".into()).await.unwrap();
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
            gateway_deadline_s: None,
            now: at(10_000 + writer),
        };
        writers.push(tokio::spawn(async move {
            store.update_profile(write, Revision::FIRST).await
        }));
    }
    let mut won = Vec::new();
    let mut stale = 0;
    for writer in writers {
        match writer.await.unwrap() {
            Ok(profile) => won.push(profile),
            Err(StoreError::Stale { current, .. }) if current == Revision::new(2) => stale += 1,
            Err(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!((won.len(), stale), (1, 7));
    assert_eq!(store.get_profile(&profile.id).await.unwrap(), won[0]);
}
