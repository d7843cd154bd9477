//! A list that keeps its first few items inline. The facts of one piece of evidence hold
//! one or two error types, codes and messages: kept inline, they cost no allocation.

use std::fmt;

/// How many items are kept inline.
const INLINE: usize = 4;

/// A list of `T`, its first [`INLINE`] items stored in place, the rest in a `Vec`.
#[derive(Clone, Default)]
pub(crate) struct Few<T> {
    /// The first items: `inline[..len.min(INLINE)]` (the other slots hold defaults).
    inline: [T; INLINE],
    len: usize,
    /// The items after the first [`INLINE`].
    spill: Vec<T>,
}

impl<T: Default> Few<T> {
    /// Adds an item at the end.
    pub fn push(&mut self, item: T) {
        if self.len < INLINE {
            self.inline[self.len] = item;
        } else {
            self.spill.push(item);
        }
        self.len += 1;
    }

    /// Puts `front`'s items before this list's, in their order.
    pub fn prepend(&mut self, front: Few<T>) {
        let back = std::mem::take(self);
        for item in front.into_iter().chain(back) {
            self.push(item);
        }
    }

    /// The same list with every item mapped.
    pub fn map<U: Default>(self, mut map: impl FnMut(T) -> U) -> Few<U> {
        let mut mapped = Few::default();
        for item in self {
            mapped.push(map(item));
        }
        mapped
    }
}

impl<T> Few<T> {
    /// The items, in order.
    pub fn iter(&self) -> impl Iterator<Item = &T> + '_ {
        self.inline[..self.len.min(INLINE)]
            .iter()
            .chain(&self.spill)
    }

    /// The first item.
    pub fn first(&self) -> Option<&T> {
        self.iter().next()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> IntoIterator for Few<T> {
    type Item = T;
    type IntoIter =
        std::iter::Chain<std::iter::Take<std::array::IntoIter<T, INLINE>>, std::vec::IntoIter<T>>;

    fn into_iter(self) -> Self::IntoIter {
        let inline = self.len.min(INLINE);
        self.inline.into_iter().take(inline).chain(self.spill)
    }
}

impl<T: fmt::Debug> fmt::Debug for Few<T> {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::Few;

    #[test]
    fn keeps_order_inline_and_beyond() {
        let mut list: Few<u32> = Few::default();
        assert!(list.is_empty() && list.first().is_none());
        for item in 1..=6 {
            list.push(item);
        }
        assert_eq!(list.iter().copied().collect::<Vec<_>>(), [1, 2, 3, 4, 5, 6]);
        let mut front: Few<u32> = Few::default();
        front.push(10);
        front.push(11);
        list.prepend(front);
        assert_eq!(list.first(), Some(&10));
        assert_eq!(
            list.map(|item| item * 2).into_iter().collect::<Vec<_>>(),
            [20, 22, 2, 4, 6, 8, 10, 12]
        );
    }
}
