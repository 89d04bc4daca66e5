//! What data verification found: blocks checked, each kind of error, the first errors in
//! detail, and the final read-back pass. The mechanism (sector headers, the block table,
//! the checks) is `engine::verify`; this is its data, as results files hold it.

use serde::{Deserialize, Serialize};

/// How many verification errors are kept in detail.
pub(crate) const ERROR_DETAILS: usize = 16;

/// The kinds of verification error.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum VerifyErrorKind {
    /// Checksum or magic mismatch.
    Corrupted,
    /// A valid block of another offset or target.
    Misdirected,
    /// Older than the last acknowledged write.
    Lost,
    /// Partly the last write, partly older data.
    Torn,
}

impl VerifyErrorKind {
    /// The name used in results and reports.
    pub(crate) fn name(self) -> &'static str {
        match self {
            VerifyErrorKind::Corrupted => "corrupted",
            VerifyErrorKind::Misdirected => "misdirected",
            VerifyErrorKind::Lost => "lost",
            VerifyErrorKind::Torn => "torn",
        }
    }
}

/// One verification error, kept in detail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyError {
    /// What was wrong.
    pub kind: VerifyErrorKind,
    /// Target index.
    pub target: usize,
    /// Byte offset of the block.
    pub offset: u64,
    /// Bytes per block.
    pub len: u32,
    /// What the block should have held.
    pub expected: String,
    /// What was found (the first sector that differs).
    pub found: String,
    /// `run` (a read during the run) or `read-back` (the final pass).
    pub phase: String,
    /// When, ms from the start of the run (of the final pass for `read-back`).
    pub t_ms: u64,
}

/// Verification counts: what a worker or the final pass found, and merged, what the run did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VerifyCounts {
    /// Blocks whose content was checked.
    pub blocks_checked: u64,
    /// Blocks read but not checkable: never written by storlab (a block device or a file
    /// storlab did not prepare) or last written by a write that failed; and blocks written
    /// that the final read-back never read (it was stopped).
    pub blocks_unchecked: u64,
    /// Checksum or magic mismatches.
    pub corrupted: u64,
    /// Valid blocks found at the wrong offset or target.
    pub misdirected: u64,
    /// Blocks older than their last acknowledged write.
    pub lost: u64,
    /// Blocks partly from their last write, partly older.
    pub torn: u64,
    /// The first errors.
    pub first_errors: Vec<VerifyError>,
    /// Bytes per verified block (in a run's results; 0 in a worker's counts).
    #[serde(default)]
    pub block_bytes: u64,
    /// The final pass that reads back every block written during the run (in a run's
    /// results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_back: Option<ReadBack>,
}

/// How the final read-back pass ended (JSON: `completed`, `interrupted` or `failed: <why>`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(into = "String", from = "String")]
pub enum ReadBackState {
    /// Every block written was read back.
    #[default]
    Completed,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
    /// A read failed: why.
    Failed(String),
}

impl std::fmt::Display for ReadBackState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadBackState::Completed => f.write_str("completed"),
            ReadBackState::Interrupted => f.write_str("interrupted"),
            ReadBackState::Failed(why) => write!(f, "failed: {why}"),
        }
    }
}

impl From<ReadBackState> for String {
    fn from(s: ReadBackState) -> String {
        s.to_string()
    }
}

impl From<String> for ReadBackState {
    fn from(s: String) -> ReadBackState {
        match s.as_str() {
            "completed" => ReadBackState::Completed,
            "interrupted" => ReadBackState::Interrupted,
            other => ReadBackState::Failed(other.strip_prefix("failed: ").unwrap_or(other).into()),
        }
    }
}

/// The final read-back pass.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadBack {
    /// How it ended.
    pub state: ReadBackState,
    /// Blocks it read back and checked.
    pub blocks_checked: u64,
    /// Blocks written during the run that it did not read back: it was stopped (Ctrl-C,
    /// SIGTERM, a failure) or a read failed first. Counted in the run's `blocks_unchecked`
    /// too; a verdict never passes while any is left.
    #[serde(default)]
    pub blocks_unread: u64,
    /// Bytes it read.
    pub bytes: u64,
    /// How long it took, s.
    pub seconds: f64,
}

impl VerifyCounts {
    /// Every error found.
    pub fn errors(&self) -> u64 {
        self.corrupted + self.misdirected + self.lost + self.torn
    }

    /// Adds `other` (keeping the earliest details).
    pub(crate) fn merge(&mut self, other: &VerifyCounts) {
        self.blocks_checked += other.blocks_checked;
        self.blocks_unchecked += other.blocks_unchecked;
        self.corrupted += other.corrupted;
        self.misdirected += other.misdirected;
        self.lost += other.lost;
        self.torn += other.torn;
        for e in &other.first_errors {
            if self.first_errors.len() < ERROR_DETAILS {
                self.first_errors.push(e.clone());
            }
        }
    }

    pub(crate) fn count(&mut self, kind: VerifyErrorKind) {
        match kind {
            VerifyErrorKind::Corrupted => self.corrupted += 1,
            VerifyErrorKind::Misdirected => self.misdirected += 1,
            VerifyErrorKind::Lost => self.lost += 1,
            VerifyErrorKind::Torn => self.torn += 1,
        }
    }

    pub(crate) fn add(&mut self, e: VerifyError) {
        self.count(e.kind);
        if self.first_errors.len() < ERROR_DETAILS {
            self.first_errors.push(e);
        }
    }
}
