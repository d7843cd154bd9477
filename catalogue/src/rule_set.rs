//! Small, allocation-free sets and indexes of rules for one family, used per
//! classification: a fixed-size bitset of rule (or message fragment) indexes, and sorted
//! key-to-rules tables read by binary search (cheaper than hashing the handful of short
//! keys per call).

use std::cmp::Ordering;

/// The most rules (and message fragments) one family's tables may hold: the size of an
/// [`IndexSet`].
pub(crate) const MAX_RULES: usize = 256;

/// A set of rule or fragment indexes (below [`MAX_RULES`]), iterated in increasing
/// order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct IndexSet([u64; MAX_RULES / 64]);

impl IndexSet {
    /// Adds one index.
    pub fn insert(&mut self, index: u16) {
        let index = usize::from(index);
        self.0[index / 64] |= 1 << (index % 64);
    }

    /// Whether `index` is in the set.
    pub fn contains(&self, index: usize) -> bool {
        self.0[index / 64] & (1 << (index % 64)) != 0
    }

    /// Adds every index of `indexes`.
    pub fn extend(&mut self, indexes: &[u16]) {
        for index in indexes {
            self.insert(*index);
        }
    }

    /// The indexes, in increasing order (for rules: the order of the family's tables).
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            words: &self.0,
            word: 0,
            bits: self.0[0],
        }
    }
}

/// The indexes of an [`IndexSet`], in increasing order.
pub(crate) struct Iter<'s> {
    words: &'s [u64; MAX_RULES / 64],
    /// The word being read, and its bits not yet returned.
    word: usize,
    bits: u64,
}

impl Iterator for Iter<'_> {
    type Item = u16;

    fn next(&mut self) -> Option<u16> {
        while self.bits == 0 {
            self.word += 1;
            self.bits = *self.words.get(self.word)?;
        }
        let bit = self.bits.trailing_zeros() as usize;
        self.bits &= self.bits - 1;
        // Below MAX_RULES: fits.
        Some((self.word * 64 + bit) as u16)
    }
}

/// Rules by a key (an error type, a code, a status), sorted by key once at compile time.
#[derive(Debug)]
pub(crate) struct RuleIndex<K> {
    entries: Vec<(K, Vec<u16>)>,
}

impl<K> Default for RuleIndex<K> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K: AsRef<[u8]>> RuleIndex<K> {
    /// Files rule `index` under `key`.
    pub fn push(&mut self, key: K, index: u16) {
        match self
            .entries
            .binary_search_by(|(known, _)| key_order(known.as_ref(), key.as_ref()))
        {
            Ok(position) => self.entries[position].1.push(index),
            Err(position) => self.entries.insert(position, (key, vec![index])),
        }
    }

    /// The rules filed under `key`.
    pub fn get(&self, key: &[u8]) -> Option<&[u16]> {
        self.entries
            .binary_search_by(|(known, _)| key_order(known.as_ref(), key))
            .ok()
            .map(|position| self.entries[position].1.as_slice())
    }
}

/// Keys sort by length first: most comparisons of a lookup end there, without comparing
/// bytes.
fn key_order(known: &[u8], key: &[u8]) -> Ordering {
    known.len().cmp(&key.len()).then_with(|| known.cmp(key))
}

#[cfg(test)]
mod tests {
    use super::{IndexSet, RuleIndex};

    #[test]
    fn sets_iterate_in_order_without_duplicates() {
        let mut set = IndexSet::default();
        set.extend(&[200, 3, 64, 3, 0, 63, 255]);
        assert_eq!(set.iter().collect::<Vec<_>>(), [0, 3, 63, 64, 200, 255]);
        assert!(set.contains(64) && !set.contains(65));
        assert_eq!(IndexSet::default().iter().count(), 0);
    }

    #[test]
    fn indexes_find_what_was_filed() {
        let mut index: RuleIndex<&str> = RuleIndex::default();
        index.push("bb", 1);
        index.push("a", 2);
        index.push("bb", 3);
        index.push("ab", 4);
        assert_eq!(index.get(b"bb"), Some(&[1, 3][..]));
        assert_eq!(index.get(b"a"), Some(&[2][..]));
        assert_eq!(index.get(b"ab"), Some(&[4][..]));
        assert_eq!(index.get(b"c"), None);
    }
}
