//! Where a mailbox's data lives in its database file: computed from the mailbox's number and a
//! seed, never stored. A database file is a header, then one extent per mailbox. An extent
//! holds, per folder, a message table (one row per message header) and a view (an index over
//! the table, one entry per message), then a long-value area for message bodies. A message's
//! header and view entry sit at its number within its folder; its body's pages are placed in
//! the long-value area by a hash of (mailbox, folder, message), so old messages are scattered
//! as in a database that has lived a while, and its size is drawn from the message-size mix by
//! the same hash, so every run and every reader agrees on it.

use crate::workloads::users::profile::MESSAGE_SIZES;

/// Pages at the start of a database file (ESE keeps two copies of its header).
pub(crate) const HEADER_PAGES: u64 = 2;
/// Bytes of a message header row (storlab's choice: the properties of a message without its
/// body).
pub(crate) const ROW_BYTES: u64 = 2048;
/// Bytes of a view entry (storlab's choice: a sort key and a pointer to the row).
pub(crate) const VIEW_ENTRY_BYTES: u64 = 128;

/// A mailbox's folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Folder {
    /// Inbox.
    Inbox,
    /// Sent Items.
    Sent,
    /// Deleted Items.
    Deleted,
    /// Calendar.
    Calendar,
    /// Contacts.
    Contacts,
    /// Every other folder, as one.
    Other,
}

impl Folder {
    /// Every folder, in extent order.
    pub(crate) const ALL: [Folder; 6] = [
        Folder::Inbox,
        Folder::Sent,
        Folder::Deleted,
        Folder::Calendar,
        Folder::Contacts,
        Folder::Other,
    ];

    /// The folder's share of a mailbox's items at initialisation, percent (storlab's choice).
    pub(crate) fn share_pct(self) -> u64 {
        match self {
            Folder::Inbox => 40,
            Folder::Sent => 20,
            Folder::Deleted => 10,
            Folder::Calendar => 10,
            Folder::Contacts => 5,
            Folder::Other => 15,
        }
    }
}

/// One folder's table and view within a mailbox extent (pages from the extent's start).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FolderArea {
    table: u64,
    table_pages: u64,
    view: u64,
    view_pages: u64,
    /// The secondary indexes: `indexes` areas of `index_pages` each, one after the other.
    index: u64,
    /// Pages of one secondary index: its root page, then its leaves (an index of one page is
    /// its own root).
    index_pages: u64,
    /// Leaf pages of one secondary index: the folder's entries at `index_entry_bytes` each.
    index_leaves: u64,
}

/// The layout of every database of a store (all databases have the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Database page size, bytes.
    pub page_bytes: u64,
    /// Mailboxes per database.
    pub mailboxes: u64,
    /// Items a mailbox holds at initialisation.
    pub items: u64,
    /// Pages of one mailbox extent.
    pub mailbox_pages: u64,
    /// Secondary indexes per folder.
    pub indexes: u64,
    /// Message header rows per page.
    rows_per_page: u64,
    /// View entries per page.
    entries_per_page: u64,
    folders: [FolderArea; 6],
    /// The long-value area: first page within the extent, pages.
    bodies: (u64, u64),
    seed: u64,
}

/// Where one message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Message {
    /// The page holding its header row.
    pub header: u64,
    /// The page holding its view entry.
    pub view: u64,
    /// Its body: first page and pages.
    pub body: (u64, u64),
    /// The root pages of its folder's secondary indexes (every seek reads them): first page,
    /// pages, and pages apart.
    pub index_roots: (u64, u64, u64),
    /// The leaf pages of its entries in those indexes: first page, pages, and pages apart.
    pub index: (u64, u64, u64),
    /// Its size, bytes.
    pub bytes: u64,
}

impl Layout {
    /// The layout for mailboxes of `mailbox_bytes` each, `mailboxes` per database, with room
    /// for `growth_pct` more items than at initialisation and `indexes` secondary indexes per
    /// folder whose entries take `index_entry_bytes` each.
    pub(crate) fn new(
        page_bytes: u64,
        mailbox_bytes: u64,
        mailboxes: u64,
        growth_pct: u64,
        indexes: u64,
        index_entry_bytes: u64,
        seed: u64,
    ) -> Self {
        let mean = mean_message_bytes();
        let items = (mailbox_bytes / mean).max(Folder::ALL.len() as u64);
        let capacity = items + items * growth_pct / 100;
        let rows_per_page = (page_bytes / ROW_BYTES).max(1);
        let entries_per_page = (page_bytes / VIEW_ENTRY_BYTES).max(1);
        let index_entries_per_page = (page_bytes / index_entry_bytes.max(1)).max(1);
        let mut next = 0;
        let folders = Folder::ALL.map(|f| {
            let n = (capacity * f.share_pct()).div_ceil(100).max(1);
            let table_pages = n.div_ceil(rows_per_page);
            let view_pages = n.div_ceil(entries_per_page);
            let index_leaves = n.div_ceil(index_entries_per_page);
            let area = FolderArea {
                table: next,
                table_pages,
                view: next + table_pages,
                view_pages,
                index: next + table_pages + view_pages,
                index_pages: index_leaves + u64::from(index_leaves > 1),
                index_leaves,
            };
            next += table_pages + view_pages + area.index_pages * indexes;
            area
        });
        // Bodies: the items' mean size over whole pages, with the growth room.
        let body_pages = (capacity * mean).div_ceil(page_bytes).max(1);
        let bodies = (next, body_pages);
        Self {
            page_bytes,
            mailboxes,
            items,
            mailbox_pages: next + body_pages,
            indexes,
            rows_per_page,
            entries_per_page,
            folders,
            bodies,
            seed,
        }
    }

    /// Pages of a database file.
    pub(crate) fn database_pages(&self) -> u64 {
        HEADER_PAGES + self.mailboxes * self.mailbox_pages
    }

    /// Bytes of a database file.
    pub(crate) fn database_bytes(&self) -> u64 {
        self.database_pages() * self.page_bytes
    }

    /// The first page of `mailbox`'s extent (mailbox numbers are per database).
    pub(crate) fn mailbox_start(&self, mailbox: u64) -> u64 {
        HEADER_PAGES + (mailbox % self.mailboxes) * self.mailbox_pages
    }

    /// Items of `folder` in a mailbox at initialisation.
    pub(crate) fn initial_items(&self, folder: Folder) -> u64 {
        (self.items * folder.share_pct()) / 100
    }

    /// The page of `mailbox`'s folder hierarchy (the first page of its first folder table).
    pub(crate) fn root(&self, mailbox: u64) -> u64 {
        self.mailbox_start(mailbox)
    }

    /// Message `n` of `folder` in `mailbox` (numbers past the folder's room wrap).
    pub(crate) fn message(&self, mailbox: u64, folder: Folder, n: u64) -> Message {
        self.message_of(mailbox, folder, n, None)
    }

    /// Message `n` of `folder` in `mailbox`, of `bytes` (a copy of a message sent elsewhere),
    /// or of its own size from the mix (`None`).
    pub(crate) fn message_of(
        &self,
        mailbox: u64,
        folder: Folder,
        n: u64,
        bytes: Option<u64>,
    ) -> Message {
        let area = self.folders[folder as usize];
        let start = self.mailbox_start(mailbox);
        // 1 when the indexes have a root page apart from their leaves.
        let root = area.index_pages - area.index_leaves;
        let h = hash(self.seed ^ mailbox.rotate_left(20) ^ (folder as u64).rotate_left(50) ^ n);
        let bytes = bytes.unwrap_or_else(|| message_bytes(h));
        let pages = bytes.div_ceil(self.page_bytes).clamp(1, self.bodies.1);
        let first = (h >> 16) % (self.bodies.1 - pages + 1);
        Message {
            header: start + area.table + (n / self.rows_per_page) % area.table_pages,
            view: start + area.view + (n / self.entries_per_page) % area.view_pages,
            body: (start + self.bodies.0 + first, pages),
            // An index of one page is its own root: no separate seek.
            index_roots: (start + area.index, self.indexes * root, area.index_pages),
            // Other sort orders than arrival: the entry's place is as good as random.
            index: (
                start + area.index + root + (h >> 32) % area.index_leaves,
                self.indexes,
                area.index_pages,
            ),
            bytes,
        }
    }

    /// The view pages of `folder` in `mailbox` that hold its newest `items` entries, counting
    /// back from item `end` (exclusive): first page and pages.
    pub(crate) fn view_pages(
        &self,
        mailbox: u64,
        folder: Folder,
        end: u64,
        items: u64,
    ) -> (u64, u64) {
        let area = self.folders[folder as usize];
        let (first, pages) = newest(area.view_pages, self.entries_per_page, end, items);
        (self.mailbox_start(mailbox) + area.view + first, pages)
    }

    /// The table pages of `folder` in `mailbox` that hold the header rows of its newest
    /// `items` messages, counting back from item `end` (exclusive): first page and pages.
    pub(crate) fn header_pages(
        &self,
        mailbox: u64,
        folder: Folder,
        end: u64,
        items: u64,
    ) -> (u64, u64) {
        let area = self.folders[folder as usize];
        let (first, pages) = newest(area.table_pages, self.rows_per_page, end, items);
        (self.mailbox_start(mailbox) + area.table + first, pages)
    }

    #[cfg(test)]
    /// Pages of `folder`'s view and of its table: (view pages, table pages).
    pub(crate) fn folder_pages(&self, folder: Folder) -> (u64, u64) {
        let area = self.folders[folder as usize];
        (area.view_pages, area.table_pages)
    }
}

/// Within an area of `area_pages` holding `per_page` entries a page (entry numbers wrap past
/// its end), the pages of the newest `items` entries before `end`: first page from the area's
/// start, and pages. A range that would wrap past the area's end keeps its newest part.
fn newest(area_pages: u64, per_page: u64, end: u64, items: u64) -> (u64, u64) {
    let first = end.saturating_sub(items) / per_page % area_pages;
    let last = end.saturating_sub(1) / per_page % area_pages;
    let first = if last < first { 0 } else { first };
    (first, last - first + 1)
}

/// The mean of the message-size mix, bytes.
pub(crate) fn mean_message_bytes() -> u64 {
    let total: u64 = MESSAGE_SIZES.iter().map(|s| u64::from(s.1)).sum();
    MESSAGE_SIZES
        .iter()
        .map(|&(b, w)| b * u64::from(w))
        .sum::<u64>()
        / total
}

/// A message's size from a hash: the mix's weights over the hash's low 16 bits (of 100).
fn message_bytes(h: u64) -> u64 {
    let mut r = (h & 0xffff) * 100 / 65_536;
    for &(bytes, weight) in &MESSAGE_SIZES {
        if r < u64::from(weight) {
            return bytes;
        }
        r -= u64::from(weight);
    }
    MESSAGE_SIZES[MESSAGE_SIZES.len() - 1].0
}

/// A 64-bit mix (splitmix64's finaliser).
fn hash(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Layout {
        // 2007: 8 KiB pages; 250 MB mailboxes, 100 per database, 20 % room to grow.
        Layout::new(8192, 250_000_000, 100, 20, 4, VIEW_ENTRY_BYTES, 7)
    }

    #[test]
    fn extents_tile_the_database_and_hold_the_mailbox() {
        let l = layout();
        assert_eq!(l.mailbox_start(0), HEADER_PAGES);
        assert_eq!(l.mailbox_start(1), HEADER_PAGES + l.mailbox_pages);
        assert_eq!(l.database_pages(), HEADER_PAGES + 100 * l.mailbox_pages);
        // The extent holds the mailbox's bytes and the room to grow, and not much more.
        let extent = l.mailbox_pages * 8192;
        assert!(extent as f64 >= 250e6 * 1.2 * 0.98, "{extent}");
        assert!((extent as f64) < 250e6 * 1.2 * 1.1, "{extent}");
        assert!(l.items > 3000 && l.items < 3400, "{}", l.items);
    }

    #[test]
    fn messages_stay_in_their_mailbox_and_areas() {
        let l = layout();
        for mailbox in [0, 1, 57, 99] {
            let start = l.mailbox_start(mailbox);
            let end = start + l.mailbox_pages;
            for folder in Folder::ALL {
                for n in (0..5000).step_by(37) {
                    let m = l.message(mailbox, folder, n);
                    let (root, indexes, stride) = m.index_roots;
                    let (leaf, _, _) = m.index;
                    assert_eq!((indexes, m.index.1, m.index.2), (4, 4, stride));
                    // Each index: its root, then its leaves; the entry is a leaf.
                    assert!(leaf > root && leaf < root + stride, "{m:?}");
                    let last_leaf = leaf + (indexes - 1) * stride;
                    for page in [
                        m.header,
                        m.view,
                        m.body.0,
                        m.body.0 + m.body.1 - 1,
                        root,
                        last_leaf,
                    ] {
                        assert!(
                            (start..end).contains(&page),
                            "{mailbox} {folder:?} {n}: {m:?}"
                        );
                    }
                    assert_eq!(m.body.1, m.bytes.div_ceil(8192));
                    assert_eq!(m, l.message(mailbox, folder, n), "the same every time");
                }
            }
        }
        // Four header rows share a page, 64 view entries share a page.
        let a = l.message(3, Folder::Inbox, 8);
        assert_eq!(l.message(3, Folder::Inbox, 11).header, a.header);
        assert_eq!(l.message(3, Folder::Inbox, 12).header, a.header + 1);
        assert_eq!(l.message(3, Folder::Inbox, 63).view, a.view);
    }

    #[test]
    fn bigger_index_entries_spread_an_index_over_more_leaves() {
        let small = layout();
        let big = Layout::new(8192, 250_000_000, 100, 20, 4, 4 * VIEW_ENTRY_BYTES, 7);
        // Four times the entry: four times the leaves (each index a root and its leaves),
        // with the same tables, views and bodies around them.
        let leaves = |l: &Layout| l.message(0, Folder::Inbox, 0).index_roots.2 - 1;
        let (l4, l1) = (leaves(&big), leaves(&small));
        assert!(
            (4 * l1 - 3..=4 * l1).contains(&l4),
            "{l1} leaves, then {l4}"
        );
        let mut spread = std::collections::HashSet::new();
        for n in 0..2000 {
            let (a, b) = (
                small.message(0, Folder::Inbox, n),
                big.message(0, Folder::Inbox, n),
            );
            assert_eq!((a.header, a.view, a.bytes), (b.header, b.view, b.bytes));
            let (root, _, stride) = b.index_roots;
            assert!(b.index.0 > root && b.index.0 < root + stride, "{b:?}");
            spread.insert(b.index.0);
        }
        // The entries use the whole of the bigger index.
        assert!(spread.len() as u64 > 3 * l1, "{}", spread.len());
        // The Inbox's four indexes grew (and the other folders'), so the extent did.
        assert!(big.mailbox_pages >= small.mailbox_pages + 4 * (l4 - l1));
    }

    #[test]
    fn sizes_follow_the_mix() {
        let l = layout();
        let n = 20_000;
        let total: u64 = (0..n)
            .map(|i| l.message(i % 100, Folder::Inbox, i).bytes)
            .sum();
        let mean = total as f64 / n as f64;
        assert!(
            (mean / mean_message_bytes() as f64 - 1.0).abs() < 0.05,
            "{mean}"
        );
    }

    #[test]
    fn view_pages_count_back_from_the_newest() {
        let l = layout();
        let inbox = l.message(0, Folder::Inbox, 0).view;
        // 64 entries a page: items 0..200 fill pages 0..=3; the newest 100 are on pages 2 and 3.
        assert_eq!(l.view_pages(0, Folder::Inbox, 200, 100), (inbox + 1, 3));
        assert_eq!(l.view_pages(0, Folder::Inbox, 200, 1), (inbox + 3, 1));
        assert_eq!(l.view_pages(0, Folder::Inbox, 10, 1000), (inbox, 1));
    }
}
