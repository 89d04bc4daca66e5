//! The tree's shape, pure: how many directories at each level under the anchor, which of them
//! hold files, what every directory and file is called, and how large each file is. A
//! directory or a file is known by its number everywhere (the run's state, the operations it
//! issues, the results); its name and place follow from the number, so nothing per file is
//! stored but its state.
//!
//! Directories are numbered breadth first: 0 is the anchor, the children of directory `p` are
//! `p × width + 1` to `p × width + width`, named `d01`, `d02`… among their siblings. Files are
//! numbered directory by directory over the directories that hold them (the deepest level, or
//! every directory but the anchor), `files` to each, named `f0001`…: file `i` is the
//! `i mod files`-th file of the `i ÷ files`-th holding directory.

use serde::{Deserialize, Serialize};

/// Most files a tree may have: vdbench's own limit per file-system definition (32 Mi), so
/// the state of every file (8 bytes each) stays within 256 MiB.
pub(crate) const MAX_FILES: u64 = 32 << 20;
/// Most directories a tree may have.
pub(crate) const MAX_DIRS: u64 = 4 << 20;
/// Deepest tree.
pub(crate) const MAX_DEPTH: u32 = 32;
/// Largest file.
pub(crate) const MAX_FILE_BYTES: u64 = 1 << 44;

/// Where files go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum Spread {
    /// Only in the deepest directories (vdbench's `distribution=bottom`, its default).
    Bottom,
    /// In every directory under the anchor (vdbench's `distribution=all`).
    All,
}

/// A tree's shape: what a marker records and a run checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct Shape {
    /// Levels of directories under the anchor (0: files in the anchor itself).
    pub depth: u32,
    /// Directories in each directory above the deepest level.
    pub width: u32,
    /// Files in each directory that holds files.
    pub files: u64,
    /// File sizes: (bytes, weight), each file's drawn from its number and `seed`.
    pub sizes: Vec<(u64, u32)>,
    /// Which directories hold files.
    pub spread: Spread,
    /// Seed of the file sizes.
    pub seed: u64,
}

impl Shape {
    /// Directories, the anchor included.
    pub(crate) fn dirs(&self) -> u64 {
        let mut total = 1u64;
        let mut level = 1u64;
        for _ in 0..self.depth {
            level = level.saturating_mul(u64::from(self.width));
            total = total.saturating_add(level);
        }
        total
    }

    /// The directories that hold files: (first number, how many).
    pub(crate) fn holders(&self) -> (u64, u64) {
        let dirs = self.dirs();
        match (self.depth, self.spread) {
            (0, _) => (0, 1),
            (_, Spread::All) => (1, dirs - 1),
            (_, Spread::Bottom) => {
                let deepest = u64::from(self.width).saturating_pow(self.depth);
                (dirs - deepest, deepest)
            }
        }
    }

    /// Files in the whole tree.
    pub(crate) fn file_count(&self) -> u64 {
        self.holders().1.saturating_mul(self.files)
    }

    /// Why this shape cannot be used, if it cannot: too many directories or files, a size of
    /// 0 or beyond the largest.
    pub(crate) fn refusal(&self) -> Option<String> {
        if self.depth > MAX_DEPTH {
            return Some(format!(
                "a depth of {} is beyond {MAX_DEPTH} levels",
                self.depth
            ));
        }
        if self.depth > 0 && self.width == 0 {
            return Some("a tree with depth needs a width of at least 1".into());
        }
        let dirs = self.dirs();
        if dirs > MAX_DIRS {
            return Some(format!(
                "depth {} and width {} make {dirs} directories, more than storlab keeps open ({MAX_DIRS}); give a smaller depth or width",
                self.depth, self.width
            ));
        }
        let files = self.file_count();
        if files > MAX_FILES || self.files > MAX_FILES {
            return Some(format!(
                "the tree would hold {files} files, more than {MAX_FILES} (vdbench's own limit per file-system definition); give fewer files, a smaller width or depth"
            ));
        }
        if self.sizes.is_empty() {
            return Some("give at least one file size".into());
        }
        if let Some(&(b, _)) = self.sizes.iter().find(|(b, _)| *b > MAX_FILE_BYTES) {
            return Some(format!(
                "a file size of {} is beyond 16 TiB",
                crate::units::format_size(b)
            ));
        }
        None
    }

    /// The parent of directory `d` (`d` > 0).
    pub(crate) fn parent(&self, d: u64) -> u64 {
        (d - 1) / u64::from(self.width.max(1))
    }

    /// The level of directory `d` (the anchor's is 0).
    pub(crate) fn level(&self, d: u64) -> u32 {
        let mut level = 0;
        let mut d = d;
        while d > 0 {
            d = self.parent(d);
            level += 1;
        }
        level
    }

    /// The name of directory `d` (> 0) in its parent: `d01`, `d02`… (digits enough for the
    /// width).
    pub(crate) fn dir_name(&self, d: u64) -> String {
        let index = (d - 1) % u64::from(self.width.max(1)) + 1;
        format!("d{index:0w$}", w = digits(u64::from(self.width)).max(2))
    }

    /// The name of the `index`-th file (from 0) of its directory: `f0001`….
    pub(crate) fn file_name_at(&self, index: u64) -> String {
        format!("f{:0w$}", index + 1, w = digits(self.files).max(4))
    }

    /// [`Shape::dir_name`] of `d` into `buf`, as the system calls take it (no allocation).
    pub(crate) fn dir_cname<'b>(&self, d: u64, buf: &'b mut NameBuf) -> &'b std::ffi::CStr {
        let index = (d - 1) % u64::from(self.width.max(1)) + 1;
        buf.put('d', index, digits(u64::from(self.width)).max(2))
    }

    /// [`Shape::file_name_at`] of `index` into `buf`, as the system calls take it.
    pub(crate) fn file_cname<'b>(&self, index: u64, buf: &'b mut NameBuf) -> &'b std::ffi::CStr {
        buf.put('f', index + 1, digits(self.files).max(4))
    }

    /// The directory that holds file `f`, and the file's index in it.
    pub(crate) fn file_place(&self, f: u64) -> (u64, u64) {
        let (first, _) = self.holders();
        let per = self.files.max(1);
        (first + f / per, f % per)
    }

    /// File `index` of directory `d`, if `d` holds files and has that many.
    pub(crate) fn file_at(&self, d: u64, index: u64) -> Option<u64> {
        let (first, count) = self.holders();
        (d >= first && d < first + count && index < self.files)
            .then(|| (d - first) * self.files + index)
    }

    /// The path of directory `d` from the anchor (`d01/d03`; empty for the anchor).
    pub(crate) fn dir_path(&self, d: u64) -> String {
        let mut parts = Vec::new();
        let mut d = d;
        while d > 0 {
            parts.push(self.dir_name(d));
            d = self.parent(d);
        }
        parts.reverse();
        parts.join("/")
    }

    /// The path of file `f` from the anchor.
    pub(crate) fn file_path(&self, f: u64) -> String {
        let (d, i) = self.file_place(f);
        let dir = self.dir_path(d);
        let name = self.file_name_at(i);
        if dir.is_empty() {
            name
        } else {
            format!("{dir}/{name}")
        }
    }

    /// The size of file `f`, bytes: drawn from the sizes by their weights, from the file's
    /// number and the seed (the same file has the same size in every run of the same tree).
    pub(crate) fn file_size(&self, f: u64) -> u64 {
        match self.sizes.as_slice() {
            [] => 0,
            [(b, _)] => *b,
            sizes => {
                let total: u64 = sizes.iter().map(|&(_, w)| u64::from(w)).sum();
                let mut pick =
                    crate::engine::buf::splitmix(self.seed ^ f.rotate_left(17)) % total.max(1);
                for &(b, w) in sizes {
                    if pick < u64::from(w) {
                        return b;
                    }
                    pick -= u64::from(w);
                }
                sizes[sizes.len() - 1].0
            }
        }
    }

    /// Bytes of every file together (a pass over each file's number).
    pub(crate) fn total_bytes(&self) -> u64 {
        match self.sizes.as_slice() {
            [(b, _)] => b.saturating_mul(self.file_count()),
            _ => (0..self.file_count())
                .map(|f| self.file_size(f))
                .fold(0u64, u64::saturating_add),
        }
    }

    /// `2 levels of 4 directories (21 in all), 100 files in each of the 16 deepest: 1,600
    /// files of 4 KiB (6.2 MiB)`.
    pub(crate) fn text(&self) -> String {
        use crate::units::{format_count, format_size};
        let (_, holders) = self.holders();
        let where_ = match (self.depth, self.spread) {
            (0, _) => "in the anchor".to_string(),
            (_, Spread::Bottom) => format!("in each of the {} deepest", format_count(holders)),
            (_, Spread::All) => format!("in each of the {} directories", format_count(holders)),
        };
        let sizes = match self.sizes.as_slice() {
            [(b, _)] => format_size(*b),
            many => many
                .iter()
                .map(|&(b, w)| format!("{} ×{w}", format_size(b)))
                .collect::<Vec<_>>()
                .join(", "),
        };
        let levels = if self.depth == 0 {
            "no directories under the anchor".to_string()
        } else {
            format!(
                "{} level{} of {} director{} ({} in all)",
                self.depth,
                if self.depth == 1 { "" } else { "s" },
                self.width,
                if self.width == 1 { "y" } else { "ies" },
                format_count(self.dirs() - 1)
            )
        };
        format!(
            "{levels}, {} files {where_}: {} files of {sizes} ({})",
            format_count(self.files),
            format_count(self.file_count()),
            format_size(self.total_bytes())
        )
    }
}

/// Room for one name of the tree and its terminating zero: a letter and at most 20 digits.
#[derive(Debug, Default)]
pub(crate) struct NameBuf([u8; 32]);

impl NameBuf {
    /// `letter` then `n` in at least `width` digits, zero-terminated.
    fn put(&mut self, letter: char, n: u64, width: usize) -> &std::ffi::CStr {
        let mut digits_buf = [0u8; 20];
        let mut len = 0;
        let mut v = n;
        loop {
            digits_buf[len] = b'0' + (v % 10) as u8;
            len += 1;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        let width = width.min(20);
        self.0[0] = letter as u8;
        let mut at = 1;
        for _ in len..width {
            self.0[at] = b'0';
            at += 1;
        }
        for i in (0..len).rev() {
            self.0[at] = digits_buf[i];
            at += 1;
        }
        self.0[at] = 0;
        std::ffi::CStr::from_bytes_with_nul(&self.0[..=at]).unwrap_or_default()
    }
}

/// Decimal digits of `n` (1 for 0).
fn digits(n: u64) -> usize {
    n.max(1).ilog10() as usize + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(depth: u32, width: u32, files: u64, spread: Spread) -> Shape {
        Shape {
            depth,
            width,
            files,
            sizes: vec![(4096, 1)],
            spread,
            seed: 1,
        }
    }

    #[test]
    fn directories_and_files_are_numbered_breadth_first() {
        let s = shape(2, 3, 5, Spread::Bottom);
        assert_eq!(s.dirs(), 1 + 3 + 9);
        assert_eq!(s.holders(), (4, 9));
        assert_eq!(s.file_count(), 45);
        assert_eq!(s.parent(4), 1);
        assert_eq!(s.parent(12), 3);
        assert_eq!((s.level(0), s.level(3), s.level(12)), (0, 1, 2));
        assert_eq!(s.dir_path(12), "d03/d03");
        assert_eq!(s.dir_path(5), "d01/d02");
        assert_eq!(s.file_path(0), "d01/d01/f0001");
        assert_eq!(s.file_path(44), "d03/d03/f0005");
        assert_eq!(s.file_place(7), (5, 2));
        let mut buf = NameBuf::default();
        assert_eq!(s.file_cname(4, &mut buf).to_str(), Ok("f0005"));
        assert_eq!(s.dir_cname(12, &mut buf).to_str(), Ok("d03"));
        assert_eq!(s.file_at(5, 2), Some(7));
        assert_eq!(s.file_at(3, 0), None);
        let all = shape(2, 3, 5, Spread::All);
        assert_eq!(all.holders(), (1, 12));
        assert_eq!(all.file_path(0), "d01/f0001");
        let flat = shape(0, 0, 10, Spread::Bottom);
        assert_eq!((flat.dirs(), flat.holders()), (1, (0, 1)));
        assert_eq!(flat.file_path(9), "f0010");
    }

    #[test]
    fn sizes_follow_their_weights_and_the_seed() {
        let s = Shape {
            sizes: vec![(1000, 3), (8000, 1)],
            ..shape(1, 10, 1000, Spread::Bottom)
        };
        let big = (0..s.file_count())
            .filter(|&f| s.file_size(f) == 8000)
            .count();
        assert!((2000..3000).contains(&big), "{big} of 10000");
        assert_eq!(s.file_size(17), s.file_size(17));
        assert_eq!(
            s.total_bytes(),
            (0..10_000).map(|f| s.file_size(f)).sum::<u64>()
        );
    }

    #[test]
    fn shapes_beyond_the_limits_are_refused() {
        assert!(shape(4, 10, 10, Spread::Bottom).refusal().is_none());
        assert!(shape(10, 10, 1, Spread::Bottom).refusal().is_some());
        assert!(
            shape(1, 1, MAX_FILES + 1, Spread::Bottom)
                .refusal()
                .is_some()
        );
        assert!(shape(2, 0, 1, Spread::Bottom).refusal().is_some());
        assert!(shape(40, 1, 1, Spread::Bottom).refusal().is_some());
    }
}
