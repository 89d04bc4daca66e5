//! Recency lists for the simulated policies: several doubly linked lists of keys over one slab,
//! with a map from key to node, so finding, moving and dropping a key are O(1).

use super::{KeyHash, KeyMap};
use std::collections::hash_map::Entry;

const NONE: u32 = u32::MAX;

#[derive(Debug, Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    list: u8,
}

/// `N` lists of distinct keys (a key is in at most one), each with a most-recent end (front)
/// and a least-recent end (back).
#[derive(Debug)]
pub(crate) struct Lists<const N: usize> {
    nodes: Vec<Node>,
    free: Vec<u32>,
    index: KeyMap<u32>,
    heads: [u32; N],
    tails: [u32; N],
    lens: [usize; N],
}

impl<const N: usize> Lists<N> {
    /// Empty lists with room for `capacity` keys (at most 64 Ki) before growing.
    pub(crate) fn with_capacity(capacity: usize) -> Self {
        let capacity = capacity.min(1 << 16);
        Lists {
            nodes: Vec::with_capacity(capacity),
            free: Vec::new(),
            index: KeyMap::with_capacity_and_hasher(capacity, KeyHash),
            heads: [NONE; N],
            tails: [NONE; N],
            lens: [0; N],
        }
    }

    /// The list `key` is in.
    pub(crate) fn list_of(&self, key: u64) -> Option<usize> {
        self.index
            .get(&key)
            .map(|&n| usize::from(self.nodes[n as usize].list))
    }

    /// Keys in list `l`.
    pub(crate) fn len(&self, l: usize) -> usize {
        self.lens[l]
    }

    /// Puts `key` at the front of list `l` (taking it out of its list first); the list it was
    /// in. One lookup of `key`.
    pub(crate) fn push_front(&mut self, l: usize, key: u64) -> Option<usize> {
        match self.index.entry(key) {
            Entry::Occupied(e) => {
                let n = *e.get();
                let was = self.unlink(n);
                self.link_front(l, n);
                Some(was)
            }
            Entry::Vacant(e) => {
                let node = Node {
                    key,
                    prev: NONE,
                    next: NONE,
                    list: 0,
                };
                let n = match self.free.pop() {
                    Some(n) => {
                        self.nodes[n as usize] = node;
                        n
                    }
                    None => {
                        self.nodes.push(node);
                        (self.nodes.len() - 1) as u32
                    }
                };
                e.insert(n);
                self.link_front(l, n);
                None
            }
        }
    }

    /// Moves `key` to the front of list `l` if it is in a list; whether it was. One lookup.
    pub(crate) fn touch(&mut self, l: usize, key: u64) -> bool {
        let Some(&n) = self.index.get(&key) else {
            return false;
        };
        self.unlink(n);
        self.link_front(l, n);
        true
    }

    /// Takes `key` out of its list; whether it was in one.
    pub(crate) fn remove(&mut self, key: u64) -> bool {
        let Some(n) = self.index.remove(&key) else {
            return false;
        };
        self.unlink(n);
        self.free.push(n);
        true
    }

    /// Takes node `n` out of its list (it stays indexed); the list it was in.
    fn unlink(&mut self, n: u32) -> usize {
        let Node {
            prev, next, list, ..
        } = self.nodes[n as usize];
        let l = usize::from(list);
        match prev {
            NONE => self.heads[l] = next,
            p => self.nodes[p as usize].next = next,
        }
        match next {
            NONE => self.tails[l] = prev,
            x => self.nodes[x as usize].prev = prev,
        }
        self.lens[l] -= 1;
        l
    }

    /// Puts node `n` (in no list) at the front of list `l`.
    fn link_front(&mut self, l: usize, n: u32) {
        let head = self.heads[l];
        let node = &mut self.nodes[n as usize];
        node.prev = NONE;
        node.next = head;
        node.list = l as u8;
        match head {
            NONE => self.tails[l] = n,
            h => self.nodes[h as usize].prev = n,
        }
        self.heads[l] = n;
        self.lens[l] += 1;
    }

    /// Takes the key at the back of list `l` out, and returns it.
    pub(crate) fn pop_back(&mut self, l: usize) -> Option<u64> {
        let t = self.tails[l];
        if t == NONE {
            return None;
        }
        let key = self.nodes[t as usize].key;
        self.remove(key);
        Some(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_move_between_lists_in_order() {
        let mut l: Lists<2> = Lists::with_capacity(4);
        for k in [1, 2, 3] {
            l.push_front(0, k);
        }
        assert_eq!((l.len(0), l.len(1)), (3, 0));
        l.push_front(1, 2);
        assert_eq!((l.len(0), l.len(1), l.list_of(2)), (2, 1, Some(1)));
        assert_eq!(l.pop_back(0), Some(1));
        assert_eq!(l.pop_back(0), Some(3));
        assert_eq!(l.pop_back(0), None);
        assert!(l.remove(2));
        assert!(!l.remove(2));
        assert_eq!(l.list_of(2), None);
        l.push_front(0, 9);
        l.push_front(0, 8);
        l.push_front(0, 9);
        assert_eq!(l.pop_back(0), Some(8));
    }
}
