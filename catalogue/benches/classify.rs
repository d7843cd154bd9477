//! Classification speed over the whole fixture set (target: at least 500,000
//! classifications per second on one core). Run with
//! `CARGO_TARGET_DIR=/tmp/catalogue-target cargo bench -p catalogue --features bench --bench classify`;
//! criterion reports the throughput in elements (classifications) per second.
//!
//! The first case classifies every fixture once in turn, over a thousand different
//! errors, whose work no cache of this machine holds together; the third classifies each fixture 32 times
//! in a row before the next, as a storm of one provider's identical errors would come
//! (`CATALOGUE.md`, Speed, tells the two apart).

use criterion::{Criterion, Throughput, black_box, criterion_main};

#[path = "support/fixture_set.rs"]
mod fixture_set;

use fixture_set::{NOW_MS, fixture_evidence};

/// How many times in a row the storm case classifies each fixture.
const STORM: usize = 32;

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
    group.throughput(Throughput::Elements((fixtures.len() * STORM) as u64));
    group.bench_function("classify_each_fixture_32_times_in_a_row", |bencher| {
        bencher.iter(|| {
            for (evidence, _) in &fixtures {
                for _ in 0..STORM {
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
