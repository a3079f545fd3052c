//! Lists of different lengths stored end to end: what a group of queries finds, one
//! list per query, in one vector.

use std::ops::Range;

/// Lists stored end to end: the items of every list in one vector, and where each list
/// ends. A search appends a query's items to [`Ragged::items_mut`] and then
/// [`Ragged::close`]s its list.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Ragged<T> {
    items: Vec<T>,
    ends: Vec<usize>,
}

impl<T> Default for Ragged<T> {
    fn default() -> Self {
        Ragged {
            items: Vec::new(),
            ends: Vec::new(),
        }
    }
}

impl<T> Ragged<T> {
    /// No lists.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// `lists` lists, list j holding the items given with key j, in the order given
    /// (a counting sort: two passes over `keyed`).
    pub(crate) fn by_key<I>(lists: usize, keyed: I) -> Self
    where
        I: Iterator<Item = (usize, T)> + Clone,
        T: Clone + Default,
    {
        let mut ends = vec![0usize; lists];
        keyed.clone().for_each(|(j, _)| ends[j] += 1);
        let mut at = 0;
        let mut fill: Vec<usize> = ends
            .iter_mut()
            .map(|e| {
                let start = at;
                at += *e;
                *e = at;
                start
            })
            .collect();
        let mut items = vec![T::default(); at];
        for (j, v) in keyed {
            items[fill[j]] = v;
            fill[j] += 1;
        }
        Ragged { items, ends }
    }

    /// The items, every list's end to end, and where each list ends among them.
    pub(crate) fn into_parts(self) -> (Vec<T>, Vec<usize>) {
        (self.items, self.ends)
    }

    /// Removes every list (keeps the memory).
    pub(crate) fn clear(&mut self) {
        self.items.clear();
        self.ends.clear();
    }

    /// The items of every list, then those appended since the last [`Ragged::close`]:
    /// to append to the open list (or to change in place).
    pub(crate) fn items_mut(&mut self) -> &mut Vec<T> {
        &mut self.items
    }

    /// The items, every list's end to end.
    pub(crate) fn into_items(self) -> Vec<T> {
        self.items
    }

    /// Ends the open list: the items appended since the last close (none for an
    /// empty list).
    pub(crate) fn close(&mut self) {
        self.ends.push(self.items.len());
    }

    /// Appends `items` as one list.
    pub(crate) fn push_list(&mut self, items: impl IntoIterator<Item = T>) {
        self.items.extend(items);
        self.close();
    }

    /// Number of (closed) lists.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// Where list `i` lies among the items.
    pub(crate) fn range(&self, i: usize) -> Range<usize> {
        let start = if i == 0 { 0 } else { self.ends[i - 1] };
        start..self.ends[i]
    }

    /// Where the lists from the `first`-th on lie among the items.
    pub(crate) fn ranges_from(&self, first: usize) -> impl Iterator<Item = Range<usize>> + '_ {
        (first..self.len()).map(|i| self.range(i))
    }

    /// The lists in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &[T]> + '_ {
        self.ranges_from(0).map(|r| &self.items[r])
    }

    /// The lists in order, to change in place.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut [T]> + '_ {
        let mut rest = &mut self.items[..];
        let mut start = 0;
        self.ends.iter().map(move |&end| {
            let (list, after) = std::mem::take(&mut rest).split_at_mut(end - start);
            rest = after;
            start = end;
            list
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Ragged;

    #[test]
    fn lists_keep_their_items_and_empty_lists_count() {
        let mut r = Ragged::new();
        r.items_mut().extend([1, 2]);
        r.close();
        r.close();
        r.push_list([3, 4, 5]);
        assert_eq!(r.len(), 3);
        assert_eq!(r.iter().collect::<Vec<_>>(), [&[1, 2][..], &[], &[3, 4, 5]]);
        assert_eq!(r.ranges_from(1).collect::<Vec<_>>(), [2..2, 2..5]);
        for list in r.iter_mut() {
            list.reverse();
        }
        assert_eq!(*r.items_mut(), [2, 1, 5, 4, 3]);
        // Items appended after the last close belong to no list yet.
        r.items_mut().push(6);
        assert_eq!(r.len(), 3);
        assert_eq!(r.clone().into_items(), [2, 1, 5, 4, 3, 6]);
        r.clear();
        assert_eq!((r.len(), r.items_mut().len()), (0, 0));
    }

    #[test]
    fn by_key_keeps_the_order_given_within_each_list() {
        let keyed = [(2, 'a'), (0, 'b'), (2, 'c'), (0, 'd'), (3, 'e')];
        let r = Ragged::by_key(4, keyed.iter().copied());
        let lists: Vec<String> = r.iter().map(|l| l.iter().collect()).collect();
        assert_eq!(lists, ["bd", "", "ac", "e"]);
        assert_eq!(r.into_parts().1, [2, 2, 4, 5]);
    }
}
