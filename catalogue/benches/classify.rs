//! Classification speed over the whole fixture set (target: at least 1,000,000
//! classifications per second on one core). Run with
//! `CARGO_TARGET_DIR=/tmp/catalogue-target cargo bench -p catalogue --bench classify`;
//! criterion reports the throughput in elements (classifications) per second.

use std::path::Path;

use criterion::{Criterion, Throughput, black_box, criterion_main};

/// The evidence of every fixture, already parsed.
fn fixture_evidence() -> Vec<(catalogue::Evidence, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/providers");
    let mut all = Vec::new();
    for family in std::fs::read_dir(root).unwrap() {
        for file in std::fs::read_dir(family.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let fixture: serde_json::Value = serde_json::from_str(&text).unwrap();
            let line = fixture["evidence"].to_string();
            let evidence = catalogue::Evidence::from_json_value(&fixture["evidence"]).unwrap();
            all.push((evidence, line));
        }
    }
    all
}

fn classify(criterion: &mut Criterion) {
    let fixtures = fixture_evidence();
    let catalogue = catalogue::Catalogue::shared();
    let mut group = criterion.benchmark_group("catalogue");
    group.throughput(Throughput::Elements(fixtures.len() as u64));
    group.bench_function("classify_fixture_set", |bencher| {
        bencher.iter(|| {
            for (evidence, _) in &fixtures {
                black_box(catalogue.classify(black_box(evidence), 1_796_004_000_000));
            }
        })
    });
    group.bench_function("parse_and_classify_fixture_set", |bencher| {
        bencher.iter(|| {
            for (_, line) in &fixtures {
                let evidence = catalogue::Evidence::from_json_line(black_box(line)).unwrap();
                black_box(catalogue.classify(&evidence, 1_796_004_000_000));
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
