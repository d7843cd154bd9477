use api::{ProfileId, ProviderId, Revision};

use super::{at, candidate, field_codes, provider_write};
use crate::domain::{IdOrigin, ProfileWrite};
use crate::store::{Store, StoreError};

/// Providers are created at revision 1, read back as stored, and listed by
/// name regardless of case.
pub async fn providers_are_created_read_and_listed_by_name(store: &dyn Store) {
    let created = store
        .create_provider(provider_write("p1", "Anthropic"))
        .await
        .unwrap();
    assert_eq!(created.revision, Revision::FIRST);
    assert_eq!(
        (created.created_at, created.updated_at),
        (at(1_000), at(1_000))
    );
    store
        .create_provider(provider_write("p0", "beta"))
        .await
        .unwrap();
    let p1 = ProviderId::new("p1");
    assert_eq!(store.get_provider(&p1).await.unwrap(), created);
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
}

/// Names are unique regardless of case; a refused provider writes nothing.
pub async fn provider_names_are_unique_regardless_of_case(store: &dyn Store) {
    store
        .create_provider(provider_write("p1", "Anthropic"))
        .await
        .unwrap();
    let taken = store
        .create_provider(provider_write("p2", "ANTHROPIC"))
        .await
        .unwrap_err();
    assert_eq!(field_codes(taken), [("name".to_owned(), "unique")]);
    assert!(matches!(
        store.get_provider(&ProviderId::new("p2")).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// Updates are fenced by revision: a stale one, one to a taken name and one of
/// a missing provider change nothing.
pub async fn provider_updates_are_fenced_by_revision(store: &dyn Store) {
    store
        .create_provider(provider_write("p1", "Anthropic"))
        .await
        .unwrap();
    store
        .create_provider(provider_write("p0", "beta"))
        .await
        .unwrap();
    let p1 = ProviderId::new("p1");
    let mut write = provider_write("p1", "Anthropic EU");
    write.base_url = "https://eu.example".to_owned();
    write.now = at(5_000);
    let updated = store
        .update_provider(write.clone(), Revision::FIRST)
        .await
        .unwrap();
    assert_eq!(
        (updated.revision, updated.updated_at, updated.created_at),
        (Revision::new(2), at(5_000), at(1_000))
    );
    assert_eq!(updated.base_url, "https://eu.example");
    match store
        .update_provider(write.clone(), Revision::FIRST)
        .await
        .unwrap_err()
    {
        StoreError::Stale { sent, current } => {
            assert_eq!((sent, current), (Revision::FIRST, Revision::new(2)));
        }
        other => panic!("expected stale, got {other:?}"),
    }
    let mut renamed = write.clone();
    renamed.name = "Beta".to_owned();
    assert_eq!(
        field_codes(
            store
                .update_provider(renamed, Revision::new(2))
                .await
                .unwrap_err()
        ),
        [("name".to_owned(), "unique")]
    );
    assert_eq!(
        store.get_provider(&p1).await.unwrap(),
        updated,
        "a refused update changes nothing"
    );
    let mut missing = write;
    missing.id = ProviderId::new("nope");
    assert!(matches!(
        store.update_provider(missing, Revision::FIRST).await,
        Err(StoreError::NotFound { .. })
    ));
}

/// A provider a profile uses cannot go, and says who uses it; an unused one can,
/// once.
pub async fn a_provider_in_use_cannot_go_and_an_unused_one_can(store: &dyn Store) {
    let p1 = store
        .create_provider(provider_write("p1", "Anthropic EU"))
        .await
        .unwrap()
        .id;
    let other = store
        .create_provider(provider_write("p0", "beta"))
        .await
        .unwrap();
    let uses = ProfileId::new("uses-p1");
    store
        .create_profile(ProfileWrite {
            id: uses.clone(),
            name: "Uses p1".to_owned(),
            candidates: vec![(candidate("u1", "p1", "m"), IdOrigin::New)],
            gateway_deadline_s: None,
            now: at(1),
        })
        .await
        .unwrap();
    match store.delete_provider(&p1).await.unwrap_err() {
        StoreError::InUse { users, name, .. } => {
            assert!(users.contains("Uses p1"), "{users}");
            assert_eq!(name, "Anthropic EU");
        }
        other => panic!("expected in use, got {other:?}"),
    }
    store.delete_provider(&other.id).await.unwrap();
    assert!(matches!(
        store.delete_provider(&other.id).await,
        Err(StoreError::NotFound { .. })
    ));
    store.delete_profile(&uses).await.unwrap();
    store.delete_provider(&p1).await.unwrap();
}
