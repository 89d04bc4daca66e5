//! The operations a file-system workload does, as vdbench names them (its `move` is
//! `rename` here), and what each needs of the tree: an existing file, a name that is free, an
//! empty directory…

use serde::{Deserialize, Serialize};

/// One file-system operation.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FsOp {
    /// Read an open file (`pread`).
    Read,
    /// Write an open file (`pwrite`).
    Write,
    /// Create a new file (`openat` with `O_CREAT | O_EXCL`), then write it whole and close it.
    Create,
    /// Remove a file (`unlinkat`).
    Delete,
    /// Open an existing file (`openat`).
    Open,
    /// Close an open file (`close`; after a `fsync` when the files are opened with `fsync`).
    Close,
    /// A file's attributes (`statx`).
    Getattr,
    /// Set a file's times (`utimensat`).
    Setattr,
    /// Whether a file may be read (`faccessat`).
    Access,
    /// Make a directory (`mkdirat`).
    Mkdir,
    /// Remove an empty directory (`unlinkat` with `AT_REMOVEDIR`).
    Rmdir,
    /// Copy a file to a new one (read and written through the worker's buffer).
    Copy,
    /// Rename a file to a free name (`renameat2` with `RENAME_NOREPLACE`; vdbench's `move`).
    Rename,
}

impl FsOp {
    /// Every operation, in the order results list them.
    pub(crate) const ALL: [FsOp; 13] = [
        FsOp::Create,
        FsOp::Open,
        FsOp::Read,
        FsOp::Write,
        FsOp::Close,
        FsOp::Getattr,
        FsOp::Setattr,
        FsOp::Access,
        FsOp::Delete,
        FsOp::Mkdir,
        FsOp::Rmdir,
        FsOp::Copy,
        FsOp::Rename,
    ];

    /// Its place in [`FsOp::ALL`].
    pub(crate) fn index(self) -> usize {
        FsOp::ALL.iter().position(|&o| o == self).unwrap_or(0)
    }

    /// Its name, as results and job files write it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            FsOp::Read => "read",
            FsOp::Write => "write",
            FsOp::Create => "create",
            FsOp::Delete => "delete",
            FsOp::Open => "open",
            FsOp::Close => "close",
            FsOp::Getattr => "getattr",
            FsOp::Setattr => "setattr",
            FsOp::Access => "access",
            FsOp::Mkdir => "mkdir",
            FsOp::Rmdir => "rmdir",
            FsOp::Copy => "copy",
            FsOp::Rename => "rename",
        }
    }

    /// Parses a name (`move` is `rename`, as vdbench calls it).
    pub(crate) fn parse(s: &str) -> Result<FsOp, String> {
        let s = s.trim().to_ascii_lowercase();
        if s == "move" {
            return Ok(FsOp::Rename);
        }
        FsOp::ALL
            .into_iter()
            .find(|o| o.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = FsOp::ALL.iter().map(|o| o.name()).collect();
                format!("unknown operation `{s}`; use {}", names.join(", "))
            })
    }

    /// Whether it moves file data (its bytes are counted).
    pub(crate) fn moves_data(self) -> bool {
        matches!(self, FsOp::Read | FsOp::Write | FsOp::Copy)
    }

    /// Whether it changes the tree or a file (reported as a write; the others as reads).
    pub(crate) fn modifies(self) -> bool {
        matches!(
            self,
            FsOp::Write
                | FsOp::Create
                | FsOp::Delete
                | FsOp::Setattr
                | FsOp::Mkdir
                | FsOp::Rmdir
                | FsOp::Copy
                | FsOp::Rename
        )
    }

    /// Whether it acts on directories rather than files.
    pub(crate) fn on_dirs(self) -> bool {
        matches!(self, FsOp::Mkdir | FsOp::Rmdir)
    }
}

impl std::fmt::Display for FsOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the files of a read or write are opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum OpenMode {
    /// `O_RDONLY`.
    #[default]
    Read,
    /// `O_WRONLY`.
    Write,
    /// `O_RDWR` (reads and writes of the same file, vdbench's `rdpct`).
    Both,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_move_is_rename() {
        for op in FsOp::ALL {
            assert_eq!(FsOp::parse(op.name()), Ok(op));
        }
        assert_eq!(FsOp::parse("Move"), Ok(FsOp::Rename));
        let e = FsOp::parse("link").unwrap_err();
        assert!(e.contains("getattr"), "{e}");
    }
}
