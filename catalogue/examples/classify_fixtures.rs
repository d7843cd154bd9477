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
//!
//! `working-set` instead times the classifications by the clock (so run it on an
//! otherwise idle machine), with the fixtures taken in blocks and each block
//! classified in turn 32 times before the next: blocks of one fixture are one error
//! repeated, as in a storm of one provider's identical errors (every call answered
//! 529); the block of every fixture is the whole set in turn, as the criterion bench's
//! first case takes it. It prints the time of one classification for each size of
//! block, from 1 to the whole set, after one untimed pass over the set; a size that
//! does not divide the set leaves a shorter last block. `working-set 8` times blocks
//! of eight only (for cachegrind).
//!
//! ```text
//! cargo run -p catalogue --release --example classify_fixtures -- working-set
//! ```

use std::hint::black_box;

#[path = "../benches/support/fixture_set.rs"]
mod fixture_set;

use fixture_set::{NOW_MS, fixture_evidence};

fn main() {
    let mut arguments = std::env::args().skip(1);
    let mode = arguments.next().unwrap_or_else(|| "classify".to_owned());
    let count: Option<usize> = arguments.next().map(|count| {
        count
            .parse()
            .expect("a number of rounds, or a size of block")
    });
    let rounds = count.unwrap_or(1);
    let fixtures = fixture_evidence();
    let catalogue = catalogue::Catalogue::shared();
    if mode == "working-set" {
        working_set(catalogue, &fixtures, count);
        return;
    }
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

/// How many times in turn `working-set` classifies each block of fixtures.
const TURNS: usize = 32;

/// The time of one classification with the fixtures classified in blocks of each size,
/// or of `only` this size.
fn working_set(
    catalogue: &catalogue::Catalogue,
    fixtures: &[(catalogue::Evidence, String)],
    only: Option<usize>,
) {
    let count = fixtures.len();
    assert!(count > 0, "no fixtures to classify");
    assert!(only != Some(0), "a block holds at least one fixture");
    // `fixture_evidence` gives the fixtures family by family: taken by a stride of
    // about 0.618 times their number (one that shares no factor with it, so that
    // every fixture is taken once), a block holds errors of many families, as the
    // whole set does.
    let coprime = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a == 1
    };
    // One fixture: stride 0 takes it. More: `count - 1` is in the range and shares
    // no factor with `count`, so the search always ends.
    let stride = (count * 618 / 1000..count)
        .find(|stride| coprime(*stride, count))
        .expect("count - 1 shares no factor with count");
    let order: Vec<usize> = (0..count).map(|at| at * stride % count).collect();
    let sizes = match only {
        Some(size) => vec![size],
        None => vec![1, 2, 4, 8, 16, 32, 64, 128, 256, 512, count],
    };
    for (evidence, _) in fixtures {
        black_box(catalogue.classify(black_box(evidence), NOW_MS));
    }
    for size in sizes {
        let started = std::time::Instant::now();
        for block in order.chunks(size) {
            for _ in 0..TURNS {
                for index in block {
                    black_box(catalogue.classify(black_box(&fixtures[*index].0), NOW_MS));
                }
            }
        }
        let each = started.elapsed().as_secs_f64() / (TURNS * count) as f64;
        println!(
            "blocks of {size:>4}: {:>5.0} ns a classification, {:>7.0} a second",
            each * 1e9,
            1.0 / each
        );
    }
}
