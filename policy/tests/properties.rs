//! Property tests: backoff is exact, monotonic and capped; every normalized document
//! validates; evaluation never schedules into the past.

use policy::{
    Class, Classification, Confidence, Decision, Effects, Episode, FieldPath, LegacyAction,
    MAX_BACKOFF_MS, OnExhausted, PolicyDocument, PolicySection, ResetWaitSettings, RetryCounts,
    RetrySettings, SemanticCode, backoff_ms, evaluate, jitter_band_ms, jitter_seed,
    jittered_backoff_ms, normalize_legacy, normalize_policy, validate_document,
};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn action() -> impl Strategy<Value = LegacyAction> {
    prop::sample::select(LegacyAction::ALL.to_vec())
}

/// Keys a rule map may hold: the recoverable codes and `default`.
fn key() -> impl Strategy<Value = String> {
    let keys: Vec<String> = SemanticCode::ALL
        .iter()
        .filter(|code| code.class().is_recoverable())
        .map(|code| code.as_str().to_owned())
        .chain(["default".to_owned()])
        .collect();
    prop::sample::select(keys)
}

fn section() -> impl Strategy<Value = PolicySection> {
    (
        any::<bool>(),
        1u32..=10,
        100u64..=600_000,
        any::<bool>(),
        1u64..=604_800,
        any::<bool>(),
        prop_oneof![Just(0u32), 0u32..=50],
    )
        .prop_map(
            |(
                retry_enabled,
                max_retries,
                initial_interval_ms,
                wait_enabled,
                max_wait_s,
                skip,
                jitter_pct,
            )| {
                PolicySection {
                    retry: RetrySettings {
                        enabled: retry_enabled,
                        max_retries,
                        initial_interval_ms,
                        jitter_pct,
                    },
                    reset_wait: ResetWaitSettings {
                        enabled: wait_enabled,
                        max_wait_s,
                    },
                    on_exhausted: if skip {
                        OnExhausted::Skip
                    } else {
                        OnExhausted::Stop
                    },
                }
            },
        )
}

fn document() -> impl Strategy<Value = PolicyDocument> {
    (section(), section()).prop_map(|(transient, hard)| PolicyDocument { transient, hard })
}

/// Checks that a normalized document is a valid version-2 document that round-trips.
fn assert_stores_and_validates(document: &PolicyDocument) {
    let stored = serde_json::to_value(document).unwrap();
    assert_eq!(
        validate_document(&stored, &FieldPath::root()).as_ref(),
        Ok(document)
    );
    assert_eq!(
        normalize_policy(&stored, &FieldPath::root()).as_ref(),
        Ok(document)
    );
    assert!(document.check_bounds(&FieldPath::root()).is_empty());
}

proptest! {
    #[test]
    fn backoff_is_exact_monotonic_and_capped(initial in 0u64..=u64::MAX, n in any::<u32>(), step in any::<u32>()) {
        let later = n.saturating_add(step);
        prop_assert!(backoff_ms(initial, n) <= backoff_ms(initial, later));
        prop_assert!(backoff_ms(initial, later) <= MAX_BACKOFF_MS);
        // Exact: min(initial * 2^(n-1), cap), computed wide.
        let doublings = n.saturating_sub(1);
        let exact = if doublings >= 64 {
            if initial == 0 { 0 } else { u128::from(MAX_BACKOFF_MS) }
        } else {
            (u128::from(initial) << doublings).min(u128::from(MAX_BACKOFF_MS))
        };
        prop_assert_eq!(u128::from(backoff_ms(initial, n)), exact);
    }

    #[test]
    fn jitter_stays_in_its_band_and_under_the_cap(
        initial in 0u64..=u64::MAX,
        n in any::<u32>(),
        jitter_pct in 0u32..=150,
        seed in any::<u64>(),
    ) {
        let delay_ms = jittered_backoff_ms(initial, n, jitter_pct, seed);
        let (earliest_ms, latest_ms) = jitter_band_ms(initial, n, jitter_pct);
        prop_assert!(earliest_ms <= delay_ms && delay_ms <= latest_ms);
        prop_assert!(latest_ms <= MAX_BACKOFF_MS);
        // Within jitter_pct% of the backoff either way, computed wide.
        let base = u128::from(backoff_ms(initial, n));
        let spread = base * u128::from(jitter_pct.min(100)) / 100;
        prop_assert!(u128::from(delay_ms) + spread >= base);
        prop_assert!(u128::from(delay_ms) <= base + spread);
    }

    #[test]
    fn jitter_is_deterministic_and_zero_is_the_backoff(
        initial in 100u64..=600_000,
        n in 1u32..=10,
        jitter_pct in 0u32..=50,
        id in ".{0,40}",
    ) {
        let seed = jitter_seed(&id);
        prop_assert_eq!(seed, jitter_seed(&id.clone()));
        prop_assert_eq!(
            jittered_backoff_ms(initial, n, jitter_pct, seed),
            jittered_backoff_ms(initial, n, jitter_pct, seed)
        );
        prop_assert_eq!(jittered_backoff_ms(initial, n, 0, seed), backoff_ms(initial, n));
        prop_assert_eq!(jitter_band_ms(initial, n, 0), (backoff_ms(initial, n), backoff_ms(initial, n)));
    }

    #[test]
    fn backoff_in_bounds_is_monotonic(initial in 100u64..=600_000, n in 1u32..=64) {
        prop_assert!(backoff_ms(initial, n) <= backoff_ms(initial, n + 1));
        prop_assert!(backoff_ms(initial, n) >= initial.min(MAX_BACKOFF_MS));
    }

    #[test]
    fn arbitrary_legacy_maps_that_normalize_validate(map in prop::collection::btree_map(key(), action(), 0..14)) {
        let value = Value::Object(map.iter().map(|(key, action)| (key.clone(), json!(action.as_str()))).collect());
        if let Ok(document) = normalize_legacy(&value, &FieldPath::root()) {
            assert_stores_and_validates(&document);
        }
    }

    #[test]
    fn uniform_legacy_maps_normalize_to_their_rows(
        transient in prop::option::of(action()),
        hard in prop::option::of(action()),
        default in prop::option::of(action()),
    ) {
        // Each class either names every code with one action or leaves them to `default`.
        let mut map = Map::new();
        for (class, choice) in [(Class::Transient, transient), (Class::Hard, hard)] {
            for code in class.codes().iter().filter(|_| choice.is_some()) {
                map.insert(code.as_str().to_owned(), json!(choice.map(LegacyAction::as_str)));
            }
        }
        if let Some(default) = default {
            map.insert("default".to_owned(), json!(default.as_str()));
        }
        let document = normalize_policy(&Value::Object(map), &FieldPath::root()).unwrap();
        let expected = |choice: Option<LegacyAction>, defaults: PolicySection| {
            choice.or(default).map_or(defaults, |action| action.section(defaults))
        };
        prop_assert_eq!(document.transient, expected(transient, PolicySection::transient_default()));
        prop_assert_eq!(document.hard, expected(hard, PolicySection::hard_default()));
        assert_stores_and_validates(&document);
    }

    #[test]
    fn in_bound_documents_validate_and_round_trip(document in document()) {
        assert_stores_and_validates(&document);
        let text = serde_json::to_string(&document).unwrap();
        prop_assert_eq!(serde_json::from_str::<PolicyDocument>(&text).unwrap(), document);
    }

    #[test]
    fn evaluation_never_schedules_into_the_past(
        document in document(),
        code in prop::sample::select(SemanticCode::ALL.to_vec()),
        low in any::<bool>(),
        reset_offset_ms in prop::option::of(-10_000_000i64..10_000_000),
        transient_retries in 0u32..12,
        hard_retries in 0u32..12,
        waited_for_reset in any::<bool>(),
        has_next_candidate in any::<bool>(),
        now_ms in prop_oneof![Just(i64::MAX), Just(i64::MIN), -1_000_000_000_000i64..4_000_000_000_000],
    ) {
        let confidence = if low { Confidence::Low } else { Confidence::High };
        let mut verdict = Classification::new(code, confidence);
        verdict.reset_at_ms = reset_offset_ms.map(|offset| now_ms.saturating_add(offset));
        let episode = Episode { retries: RetryCounts { transient: transient_retries, hard: hard_retries }, waited_for_reset };
        let decision = evaluate(&document, &verdict, &episode, Effects::default(), has_next_candidate, now_ms);
        match decision {
            Decision::WaitForReset { until_ms } => prop_assert!(until_ms > now_ms && !waited_for_reset),
            Decision::Retry { ordinal, at_ms } => {
                prop_assert!(at_ms >= now_ms);
                prop_assert_eq!(ordinal, episode.retries[code.class()] + 1);
            }
            Decision::Skip => prop_assert!(has_next_candidate),
            Decision::Stop { .. } | Decision::Hold { .. } => {}
        }
    }
}
