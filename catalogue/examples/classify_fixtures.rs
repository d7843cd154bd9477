//! Classifies the provider fixture set a given number of times, for instruction counts
//! under callgrind, which stay the same however loaded the machine is.
//!
//! `cargo run -p catalogue --release --example classify_fixtures -- classify 100`
//! classifies the already parsed evidence of every fixture 100 times; `parse` instead of
//! `classify` parses each evidence line first, as the second criterion bench does. The
//! setup (reading the fixtures, compiling the catalogue) costs the same whatever the
//! count, so the difference between two counts, divided by the extra classifications,
//! is the cost of one: (instructions at 101 rounds - at 1 round) / (100 x fixtures),
//! with the instructions from the `Collected` line callgrind prints.
//!
//! ```text
//! cargo build -p catalogue --release --example classify_fixtures
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/classify_fixtures classify 1
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/classify_fixtures classify 101
//! ```

use std::hint::black_box;

#[path = "../benches/support/fixture_set.rs"]
mod fixture_set;

use fixture_set::{NOW_MS, fixture_evidence};

fn main() {
    let mut arguments = std::env::args().skip(1);
    let mode = arguments.next().unwrap_or_else(|| "classify".to_owned());
    let rounds: usize = arguments
        .next()
        .map_or(1, |count| count.parse().expect("a number of rounds"));
    let fixtures = fixture_evidence();
    let catalogue = catalogue::Catalogue::shared();
    for _ in 0..rounds {
        for (evidence, line) in &fixtures {
            let verdict = match mode.as_str() {
                "classify" => catalogue.classify(black_box(evidence), NOW_MS),
                "parse" => {
                    let evidence = catalogue::Evidence::from_json_line(black_box(line)).unwrap();
                    catalogue.classify(&evidence, NOW_MS)
                }
                other => panic!("unknown mode {other}: classify or parse"),
            };
            black_box(verdict);
        }
    }
    println!(
        "{} classifications ({} fixtures, {rounds} rounds, {mode})",
        fixtures.len() * rounds,
        fixtures.len()
    );
}
