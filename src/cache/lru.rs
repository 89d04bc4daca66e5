//! LRU's hit ratio at every cache size at once: the stack (reuse) distance of every reference,
//! the number of distinct blocks referenced since the previous reference to the same block
//! (Mattson et al.). A reference hits in an LRU cache of `c` blocks exactly when its distance is
//! under `c`. Distances are counted with a Fenwick tree over reference positions holding a 1
//! at each block's latest reference: O(n log n) for n references.

use super::{KeyHash, KeyMap};

/// Distance of a first reference (a miss at every size).
pub(crate) const COLD: u64 = u64::MAX;

/// The stack distance of every reference of `keys`, in order ([`COLD`] for first references).
pub(crate) fn stack_distances(keys: &[u64]) -> Vec<u64> {
    let mut tree = Fenwick::new(keys.len());
    let mut last: KeyMap<usize> = KeyMap::with_capacity_and_hasher(keys.len() / 4, KeyHash);
    keys.iter()
        .enumerate()
        .map(|(i, &k)| {
            let d = match last.insert(k, i) {
                Some(p) => {
                    // Distinct blocks whose latest reference lies between p and i.
                    let d = tree.prefix(i) - tree.prefix(p + 1);
                    tree.add(p, -1);
                    d as u64
                }
                None => COLD,
            };
            tree.add(i, 1);
            d
        })
        .collect()
}

/// Prefix sums over positions `0..n`.
struct Fenwick {
    tree: Vec<i64>,
}

impl Fenwick {
    fn new(n: usize) -> Self {
        Fenwick {
            tree: vec![0; n + 1],
        }
    }

    fn add(&mut self, i: usize, v: i64) {
        let mut i = i + 1;
        while i < self.tree.len() {
            self.tree[i] += v;
            i += i & i.wrapping_neg();
        }
    }

    /// Sum over positions `0..i`.
    fn prefix(&self, i: usize) -> i64 {
        let mut i = i;
        let mut s = 0;
        while i > 0 {
            s += self.tree[i];
            i &= i - 1;
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Distances the slow way: a list, most recent first.
    fn by_list(keys: &[u64]) -> Vec<u64> {
        let mut stack: Vec<u64> = Vec::new();
        keys.iter()
            .map(|&k| match stack.iter().position(|&s| s == k) {
                Some(d) => {
                    stack.remove(d);
                    stack.insert(0, k);
                    d as u64
                }
                None => {
                    stack.insert(0, k);
                    COLD
                }
            })
            .collect()
    }

    #[test]
    fn a_small_stream_by_hand() {
        assert_eq!(
            stack_distances(&[1, 2, 1, 3, 2, 2, 1]),
            [COLD, COLD, 1, COLD, 2, 0, 2]
        );
    }

    proptest! {
        #[test]
        fn matches_the_list(keys in proptest::collection::vec(0u64..40, 0..400)) {
            prop_assert_eq!(stack_distances(&keys), by_list(&keys));
        }
    }
}
