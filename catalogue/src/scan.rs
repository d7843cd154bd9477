//! One pass over an error's texts for everything the catalogue searches them for: the
//! [`Rule::says`] wordings of every table, the generic layer's fragments
//! (`rules/words.rs`), every table's message fragments ([`Rule::text`],
//! [`Rule::text_any`]) and the phrases a wait is stated after
//! ([`crate::hints::WAIT_PHRASE_WORDS`]). Each occurrence is kept with its place, so
//! whether a rule's wordings are found, whether its fragments are said together, and
//! whether they are denied are all read from the one pass, however many rules ask; and
//! the fragments a leftmost-longest search of a family's fragments would report, and
//! the waits a text states, are read from the same occurrences rather than from passes
//! of their own.

use std::collections::HashMap;
use std::sync::LazyLock;

use aho_corasick::automaton::{Automaton, StateID};
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind};
use smallvec::SmallVec;

use crate::facts::{SEPARATOR, SearchTexts};
use crate::family::Family;
use crate::hints::WAIT_PHRASE_WORDS;
use crate::rules::{Rule, WORDS, tables_for};

/// The most wordings the pass holds (the size of [`Scan`]'s set of those found).
const MAX_WORDINGS: usize = 64 * 32;

/// The wordings, fragments and wait phrases, and their searcher, built once.
pub(crate) struct Wordings {
    searcher: Table,
    ids: HashMap<&'static str, u16>,
    /// The wait phrases, by id.
    phrases: WordingSet,
}

/// Every wording, fragment and wait phrase, each once.
pub(crate) static WORDINGS: LazyLock<Wordings> = LazyLock::new(Wordings::build);

impl Wordings {
    fn build() -> Self {
        let rules = Family::ALL
            .into_iter()
            .flat_map(tables_for)
            .chain([WORDS])
            .flatten();
        let mut patterns: Vec<&'static str> = Vec::new();
        let mut ids: HashMap<&'static str, u16> = HashMap::new();
        let mut add = |pattern: &'static str| {
            ids.entry(pattern).or_insert_with(|| {
                patterns.push(pattern);
                (patterns.len() - 1) as u16
            });
        };
        for rule in rules {
            rule.says.iter().copied().for_each(&mut add);
        }
        // The generic layer's fragments, and its alternative wordings where it has no
        // exact ones (beside exact ones, `text_any` holds only the short words they
        // share, which the pass need not find: short words are the most frequent, and
        // every occurrence costs).
        for rule in WORDS {
            let any = if rule.says.is_empty() {
                rule.text_any
            } else {
                &[]
            };
            rule.text.iter().chain(any).copied().for_each(&mut add);
        }
        // Every table's message fragments: a family reads, within each of its groups,
        // those a leftmost-longest search would report (`Catalogue`'s `candidates`).
        for rule in Family::ALL.into_iter().flat_map(tables_for).flatten() {
            rule.text
                .iter()
                .chain(rule.text_any)
                .copied()
                .for_each(&mut add);
        }
        for phrase in WAIT_PHRASE_WORDS {
            add(phrase);
        }
        let phrases = WordingSet::of(&WAIT_PHRASE_WORDS.map(|phrase| ids[phrase]));
        assert!(patterns.len() <= MAX_WORDINGS, "too many wordings");
        assert!(
            !patterns.iter().any(|pattern| pattern.contains(SEPARATOR)),
            "no wording holds the texts' separator"
        );
        // A wording is recorded only where it is longer than the bytes a check reads
        // again (none, for the walks themselves), which an empty one never is.
        assert!(
            !patterns.iter().any(|pattern| pattern.is_empty()),
            "no wording is empty"
        );
        // Every occurrence of every wording, in one pass: a DFA, searched overlapping
        // (a wording inside a longer one is found too).
        // Without a prefilter (most bytes start some wording, so it would stop at
        // nearly every one), the only special states are those where wordings end.
        let dfa = DFA::builder()
            .match_kind(MatchKind::Standard)
            .prefilter(false)
            .build(&patterns)
            .expect("wordings are valid patterns");
        Self {
            searcher: Table::of(&dfa, &patterns),
            ids,
            phrases,
        }
    }

    /// The id of a wording the pass looks for.
    pub fn id(&self, wording: &str) -> u16 {
        *self
            .ids
            .get(wording)
            .expect("every says wording and message fragment is in the pass")
    }

    /// The wait phrases.
    pub fn phrases(&self) -> &WordingSet {
        &self.phrases
    }

    /// How many wordings the pass looks for (ids run from 0 to this, less one).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// The ids of these wordings.
    pub fn ids(&self, wordings: &[&'static str]) -> Vec<u16> {
        wordings.iter().map(|wording| self.id(wording)).collect()
    }

    /// Every wording found in `texts`, with its place; the places sorted by wording,
    /// then text, then start. One pass over the texts joined: no wording holds the
    /// separator, so none runs across two texts.
    pub fn scan(&self, texts: &SearchTexts) -> Scan {
        let mut scan = Scan::default();
        let table = &self.searcher;
        let haystack = texts.joined().as_bytes();
        // The table is walked here, a byte at a time: an error holds a couple of
        // wordings in a few hundred bytes, so the walk is nearly all the cost. A state
        // is a multiple of the table's stride (a power of two above every class), so
        // the state and the byte's class are added by an or, which cannot overflow.
        //
        // The table's size is fixed, so masking the index (one instruction) stands in
        // for the compare and branch of a bounds check; every state is inside the
        // table already, so the mask changes nothing. The byte classes are read from
        // the same table, so that the walk's values all stay in registers.
        let next: &[u32; TABLE_SIZE] = &table.next;
        let step = |state: u32, byte: u8| {
            let class = next[CLASSES_FROM + usize::from(byte)];
            next[(state | class) as usize & (TABLE_SIZE - 1)]
        };
        // Each byte's step waits for the step before (a load from the table), so
        // one walk leaves the core idle most of the time. The texts are cut into
        // `WALKS` shares, walked at once, each from the start state: the later
        // shares' walks guess that no wording began before their share. Each guess is
        // then checked in order, from where the walk before truly ended (below).
        let shares: [std::ops::Range<usize>; WALKS] = std::array::from_fn(|share| {
            haystack.len() * share / WALKS..haystack.len() * (share + 1) / WALKS
        });
        let shortest = haystack.len() / WALKS;
        let heads = shares
            .clone()
            .map(|share| &haystack[share.start..share.start + shortest]);
        let mut ends = [table.start; WALKS];
        // One offset into every walk's bytes at once: an iterator per walk, zipped,
        // kept the iterators' state in memory rather than in registers.
        #[allow(clippy::needless_range_loop)]
        for offset in 0..shortest {
            for walk in 0..WALKS {
                ends[walk] = step(ends[walk], heads[walk][offset]);
            }
            for walk in 0..WALKS {
                if ends[walk] < table.matching_below {
                    self.record(&mut scan, ends[walk], shares[walk].start + offset, 0, texts);
                }
            }
        }
        for walk in 0..WALKS {
            let from = shares[walk].start + shortest;
            for (offset, byte) in haystack[from..shares[walk].end].iter().enumerate() {
                let last = from + offset;
                ends[walk] = step(ends[walk], *byte);
                if ends[walk] < table.matching_below {
                    self.record(&mut scan, ends[walk], last, 0, texts);
                }
            }
        }
        // A share's walk is in the true state (that of one walk from the beginning)
        // once the true state's wording prefix lies inside the share: a walk that
        // read `read` bytes of its share holds the longest wording prefix those
        // bytes end with, and the true one, if no longer, is among them. Until then
        // the true walk is taken again from where the share before truly ended, and
        // records only the wordings begun before the share, which the guess could
        // not see.
        let mut truly = ends[0];
        for walk in 1..WALKS {
            let share = &shares[walk];
            let mut state = truly;
            let mut read = 0;
            while usize::from(table.depth(state)) > read && share.start + read < share.end {
                let last = share.start + read;
                state = step(state, haystack[last]);
                read += 1;
                if state < table.matching_below {
                    self.record(&mut scan, state, last, read, texts);
                }
            }
            truly = if usize::from(table.depth(state)) <= read {
                ends[walk]
            } else {
                state
            };
        }
        scan.hits
            .sort_unstable_by_key(|hit| (hit.pattern, hit.text, hit.start));
        scan
    }

    /// Records the wordings longer than `longer_than` bytes that end with byte `last`
    /// of the joined texts, where the walk reached `state`. Apart from the walk, which
    /// it would otherwise crowd out of registers.
    #[inline(never)]
    fn record(
        &self,
        scan: &mut Scan,
        state: u32,
        last: usize,
        longer_than: usize,
        texts: &SearchTexts,
    ) {
        let table = &self.searcher;
        let end = last + 1;
        let text = texts.text_at(end);
        let text_start = texts.range(text).start;
        let matching = (state >> table.stride_log2) as usize;
        let ends_here = table.ends_from[matching] as usize..table.ends_from[matching + 1] as usize;
        for id in &table.ends[ends_here] {
            let id = usize::from(*id);
            if usize::from(table.lengths[id]) <= longer_than {
                continue;
            }
            scan.found[id / 64] |= 1 << (id % 64);
            scan.hits.push(Hit {
                pattern: id as u16,
                text,
                start: end - usize::from(table.lengths[id]) - text_start,
                end: end - text_start,
            });
        }
    }
}

/// How many entries the pass's table of transitions has room for: a power of two,
/// above the 12,710 states of 128 classes (1,626,880 entries) that the wordings of
/// catalogue 2026.12.4 make.
const TABLE_SIZE: usize = 1 << 21;

/// Where in the table of transitions each byte's class is kept (256 entries, past
/// every state's).
const CLASSES_FROM: usize = TABLE_SIZE - 256;

/// The pass's automaton as a plain table of transitions, walked without the checks a
/// general automaton makes at every byte. Made from the DFA aho-corasick builds, state
/// by state: the same states, the same transitions, the same wordings ending in each.
struct Table {
    /// The state a state and a class lead to, at `state | class`. States are numbered
    /// by multiples of the stride, `1 << stride_log2`; those where wordings end first.
    /// From [`CLASSES_FROM`], each byte's class: the bytes no wording holds share
    /// class 0 (from any state they lead where any other of them does), every other
    /// byte has its own.
    next: Box<[u32; TABLE_SIZE]>,
    stride_log2: u32,
    /// The state the walk starts in.
    start: u32,
    /// The states below this are those where wordings end.
    matching_below: u32,
    /// The ids of the wordings that end in matching state `n` (numbered `n` times the
    /// stride): `ends[ends_from[n]..ends_from[n + 1]]`.
    ends: Vec<u16>,
    ends_from: Vec<u32>,
    /// Each wording's length in bytes, by id.
    lengths: Vec<u16>,
    /// Each state's depth, by state number (over the stride): the length of the
    /// longest wording prefix that the bytes leading to it end with.
    depths: Vec<u8>,
}

impl Table {
    /// The depth of `state` (see [`Table::depths`]).
    fn depth(&self, state: u32) -> u8 {
        self.depths[(state >> self.stride_log2) as usize]
    }

    fn of(dfa: &DFA, patterns: &[&str]) -> Self {
        // One byte of each class: the first byte no wording holds, for class 0.
        let mut classes = [0_u8; 256];
        let mut members = vec![0_u8];
        for byte in patterns.iter().flat_map(|pattern| pattern.bytes()) {
            if classes[usize::from(byte)] == 0 {
                classes[usize::from(byte)] = u8::try_from(members.len()).expect("256 classes");
                members.push(byte);
            }
        }
        members[0] = (0..=u8::MAX)
            .find(|byte| classes[usize::from(*byte)] == 0)
            .expect("a byte no wording holds");
        let stride_log2 = members.len().next_power_of_two().trailing_zeros();
        // Every state the walk can reach, from the start, by each class's byte.
        let start = dfa
            .start_state(Anchored::No)
            .expect("the DFA is unanchored");
        let mut reached = vec![start];
        // The fewest bytes from the start to each state, which is its depth: no
        // walk of fewer bytes holds a longer prefix, and the prefix itself leads there.
        let mut distance = HashMap::from([(start, 0_u8)]);
        let mut seen = vec![false; start.as_usize() + 1];
        seen[start.as_usize()] = true;
        let mut index = 0;
        while let Some(state) = reached.get(index).copied() {
            index += 1;
            for byte in &members {
                let next = dfa.next_state(Anchored::No, state, *byte);
                if seen.len() <= next.as_usize() {
                    seen.resize(next.as_usize() + 1, false);
                }
                if !seen[next.as_usize()] {
                    seen[next.as_usize()] = true;
                    reached.push(next);
                    let depth = distance[&state].checked_add(1).expect("a short wording");
                    distance.insert(next, depth);
                }
            }
        }
        // Matching states first, so one compare tells them.
        let (mut order, others): (Vec<StateID>, Vec<StateID>) =
            reached.into_iter().partition(|state| dfa.is_match(*state));
        let matching = order.len();
        order.extend(others);
        let mut number = vec![u32::MAX; seen.len()];
        for (index, state) in order.iter().enumerate() {
            number[state.as_usize()] = u32::try_from(index << stride_log2).expect("a small table");
        }
        assert!(
            order.len() << stride_log2 <= CLASSES_FROM,
            "the pass's states fit its table"
        );
        let mut next: Box<[u32; TABLE_SIZE]> = vec![0; TABLE_SIZE]
            .into_boxed_slice()
            .try_into()
            .expect("a table of its fixed size");
        for (index, state) in order.iter().enumerate() {
            for (class, byte) in members.iter().enumerate() {
                let to = dfa.next_state(Anchored::No, *state, *byte);
                next[(index << stride_log2) | class] = number[to.as_usize()];
            }
        }
        let mut ends = Vec::new();
        let mut ends_from = vec![0];
        for state in &order[..matching] {
            for index in 0..dfa.match_len(*state) {
                ends.push(dfa.match_pattern(*state, index).as_usize() as u16);
            }
            ends_from.push(u32::try_from(ends.len()).expect("a small table"));
        }
        for (byte, class) in classes.iter().enumerate() {
            next[CLASSES_FROM + byte] = u32::from(*class);
        }
        Self {
            next,
            stride_log2,
            start: number[start.as_usize()],
            matching_below: u32::try_from(matching << stride_log2).expect("a small table"),
            ends,
            ends_from,
            lengths: patterns
                .iter()
                .map(|pattern| u16::try_from(pattern.len()).expect("a short wording"))
                .collect(),
            depths: order.iter().map(|state| distance[state]).collect(),
        }
    }
}

/// How many walks [`Wordings::scan`] takes at once.
const WALKS: usize = 4;

/// Where one wording occurs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Hit {
    pub pattern: u16,
    /// The index of the text, in [`crate::facts::Facts::texts`] order.
    pub text: usize,
    pub start: usize,
    pub end: usize,
}

/// The wordings one error's texts hold.
#[derive(Debug, Default)]
pub(crate) struct Scan {
    found: [u64; MAX_WORDINGS / 64],
    /// Every occurrence found; an error's texts hold a few, kept inline.
    hits: SmallVec<[Hit; 8]>,
}

impl Scan {
    /// Whether the wording with this id occurs.
    pub fn found(&self, id: u16) -> bool {
        let id = usize::from(id);
        self.found[id / 64] & (1 << (id % 64)) != 0
    }

    /// Whether one of these wordings occurs.
    pub fn any(&self, ids: &[u16]) -> bool {
        ids.iter().any(|id| self.found(*id))
    }

    /// The id of every wording found, each once, in increasing order.
    pub fn patterns(&self) -> impl Iterator<Item = u16> + '_ {
        self.hits
            .chunk_by(|one, next| one.pattern == next.pattern)
            .map(|run| run[0].pattern)
    }

    /// Every occurrence of the wording with this id, by text and start.
    pub fn hits(&self, id: u16) -> &[Hit] {
        let from = self.hits.partition_point(|hit| hit.pattern < id);
        let to = self.hits.partition_point(|hit| hit.pattern <= id);
        &self.hits[from..to]
    }

    /// The first occurrence of the wording with this id in text `text` that starts at
    /// or after `start` (a binary search: no rule's check grows with the square of
    /// the occurrences).
    pub fn first_from(&self, id: u16, text: usize, start: usize) -> Option<&Hit> {
        let hits = self.hits(id);
        let at = hits.partition_point(|hit| (hit.text, hit.start) < (text, start));
        hits.get(at).filter(|hit| hit.text == text)
    }

    /// Every occurrence found, sorted by wording, then text, then start.
    pub fn all_hits(&self) -> &[Hit] {
        &self.hits
    }

    /// Every occurrence of these wordings.
    pub fn hits_of<'s>(&'s self, ids: &'s WordingSet) -> impl Iterator<Item = &'s Hit> {
        self.hits.iter().filter(|hit| ids.contains(hit.pattern))
    }
}

/// A set of wordings, by id.
#[derive(Debug, Clone, Default)]
pub(crate) struct WordingSet([u64; MAX_WORDINGS / 64]);

impl WordingSet {
    /// The set of these ids.
    pub fn of(ids: &[u16]) -> Self {
        let mut set = Self::default();
        for id in ids {
            let id = usize::from(*id);
            set.0[id / 64] |= 1 << (id % 64);
        }
        set
    }

    /// Whether the wording with this id is in the set.
    pub fn contains(&self, id: u16) -> bool {
        let id = usize::from(id);
        self.0[id / 64] & (1 << (id % 64)) != 0
    }
}

/// Whether this rule's conditions can all be read from the pass: the generic layer's
/// rules name only words (their class's status check aside).
pub(crate) fn words_only(rule: &Rule) -> bool {
    rule.status.is_none()
        && rule.error_type.is_none()
        && rule.error_code.is_none()
        && rule.transport.is_none()
        && rule.quota.is_none()
        && rule.predicate.is_none()
}

#[cfg(test)]
mod tests {
    use super::WORDINGS;
    use crate::facts::SearchTexts;

    /// The one pass finds every occurrence: a wording inside a longer one, and two that
    /// overlap, are both found, each with its place.
    #[test]
    fn the_one_pass_finds_wordings_inside_and_across_others() {
        let texts = SearchTexts::new(
            ["ok", "your balance is insufficient balance is insufficient"].into_iter(),
        );
        let scan = WORDINGS.scan(&texts);
        for wording in ["balance is insufficient", "insufficient balance"] {
            assert!(scan.found(WORDINGS.id(wording)), "{wording}");
        }
        let places: Vec<(usize, usize)> = scan
            .hits(WORDINGS.id("balance is insufficient"))
            .iter()
            .map(|hit| (hit.text, hit.start))
            .collect();
        assert_eq!(places, [(1, 5), (1, 29)]);
    }

    /// The walks that start inside the texts, and their checks, find what one walk from
    /// the beginning finds: every occurrence, the same places, over texts of wordings,
    /// their beginnings and ends, and other bytes, cut at every length, so
    /// that wordings run across every share's first byte. The reference is
    /// aho-corasick's own overlapping search.
    #[test]
    fn the_walks_at_once_find_what_one_walk_finds() {
        let mut patterns = vec![""; WORDINGS.len()];
        for (pattern, id) in &WORDINGS.ids {
            patterns[usize::from(*id)] = pattern;
        }
        let reference = aho_corasick::AhoCorasick::builder()
            .match_kind(aho_corasick::MatchKind::Standard)
            .build(&patterns)
            .expect("the wordings build");
        let mut seed = 0x5eed_u64;
        let mut random = |below: usize| {
            // splitmix64
            seed = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut mixed = seed;
            mixed = (mixed ^ (mixed >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            mixed = (mixed ^ (mixed >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((mixed ^ (mixed >> 31)) % below as u64) as usize
        };
        let fillers = [" ", "x", "{", "1", ": ", "\"", "额度", "é"];
        let mut checked_hits = 0;
        for _ in 0..4000 {
            let mut texts = Vec::new();
            for _ in 0..1 + random(3) {
                let mut text = String::new();
                for _ in 0..random(12) {
                    let pattern = patterns[random(patterns.len())];
                    let mut cuts = (0..=pattern.len()).filter(|at| pattern.is_char_boundary(*at));
                    let skip = random(3);
                    match random(4) {
                        0 => text.push_str(&pattern[..cuts.rev().nth(skip).unwrap_or(0)]),
                        1 => text.push_str(&pattern[cuts.nth(skip).unwrap_or(0)..]),
                        2 => text.push_str(fillers[random(fillers.len())]),
                        _ => text.push_str(pattern),
                    }
                }
                texts.push(text);
            }
            let texts = SearchTexts::new(texts.iter().map(String::as_str));
            let joined = texts.joined();
            let mut expected: Vec<(usize, usize, usize)> = reference
                .find_overlapping_iter(joined)
                .map(|found| {
                    let text = texts.text_at(found.end());
                    let from = texts.range(text).start;
                    (found.pattern().as_usize(), text, found.start() - from)
                })
                .collect();
            expected.sort_unstable();
            let found: Vec<(usize, usize, usize)> = WORDINGS
                .scan(&texts)
                .hits
                .iter()
                .map(|hit| (usize::from(hit.pattern), hit.text, hit.start))
                .collect();
            assert_eq!(found, expected, "{joined:?}");
            checked_hits += expected.len();
        }
        assert!(
            checked_hits > 10_000,
            "the texts hold wordings: {checked_hits}"
        );
    }
}
