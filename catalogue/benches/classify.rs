//! Classification speed over the whole fixture set (target: at least 500,000
//! classifications per second on one core). Run with
//! `CARGO_TARGET_DIR=/tmp/catalogue-target cargo bench -p catalogue --features bench --bench classify`;
//! criterion reports the throughput in elements (classifications) per second.
//!
//! The first case classifies every fixture once in turn, over a thousand different
//! errors; the second parses each evidence line first; the third classifies each
//! fixture [`STORM_REPEATS`] times in a row before the next, as a storm of one
//! provider's identical errors would come. The first is the target's measure; the
//! third runs about twice as fast (`CATALOGUE.md`, Speed, gives both and why they
//! differ).

use criterion::{Criterion, Throughput, black_box, criterion_main};

#[path = "support/fixture_set.rs"]
mod fixture_set;

use fixture_set::{NOW_MS, fixture_evidence};

/// How many times in a row the third case classifies each fixture.
const STORM_REPEATS: usize = 32;

fn classify(criterion: &mut Criterion) {
    let fixtures = fixture_evidence();
    let catalogue = catalogue::Catalogue::shared();
    let mut group = criterion.benchmark_group("catalogue");
    group.throughput(Throughput::Elements(fixtures.len() as u64));
    group.bench_function("classify_fixture_set", |bencher| {
        bencher.iter(|| {
            for (evidence, _) in &fixtures {
                black_box(catalogue.classify(black_box(evidence), NOW_MS));
            }
        })
    });
    group.bench_function("parse_and_classify_fixture_set", |bencher| {
        bencher.iter(|| {
            for (_, line) in &fixtures {
                let evidence = catalogue::Evidence::from_json_line(black_box(line)).unwrap();
                black_box(catalogue.classify(&evidence, NOW_MS));
            }
        })
    });
    group.throughput(Throughput::Elements(
        (fixtures.len() * STORM_REPEATS) as u64,
    ));
    let storm = format!("classify_each_fixture_{STORM_REPEATS}_times_in_a_row");
    group.bench_function(storm, |bencher| {
        bencher.iter(|| {
            for (evidence, _) in &fixtures {
                for _ in 0..STORM_REPEATS {
                    black_box(catalogue.classify(black_box(evidence), NOW_MS));
                }
            }
        })
    });
    group.finish();
}

// criterion's macro makes an undocumented public function.
#[allow(missing_docs)]
mod group {
    criterion::criterion_group!(benches, super::classify);
}
use group::benches;
criterion_main!(benches);
