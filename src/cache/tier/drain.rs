//! After the run: the dirty lines still in the cache copied to the backing target, byte for
//! byte (through the same O_DIRECT descriptors), so the backing target holds every write the
//! application was told was done before the verification pass reads it back.

use super::{State, Tier};
use crate::engine::source::RequestSource;
use crate::stats::tier::TierDrain;
use std::os::fd::BorrowedFd;
use std::time::Instant;

/// Alignment of the copy buffer (O_DIRECT's strictest).
const ALIGN: usize = 4096;

impl<S: RequestSource> Tier<S> {
    /// Copies every dirty line from `cache` (the cache device) to `backing`; the lines are
    /// clean afterwards. Stops at the first error, saying where.
    pub(crate) fn drain(&mut self, cache: BorrowedFd<'_>, backing: BorrowedFd<'_>) -> TierDrain {
        let line = self.plan.line_bytes as usize;
        let mut storage = vec![0u8; line + ALIGN];
        let skip = storage.as_ptr().align_offset(ALIGN);
        let buf = &mut storage[skip..skip + line];
        self.drain_with(|from, to, len| copy(cache, backing, &mut buf[..len], from, to))
    }

    /// [`Tier::drain`] with `copy(from, to, len)` moving `len` bytes from offset `from` of the
    /// cache device to offset `to` of the backing target.
    pub(super) fn drain_with(
        &mut self,
        mut copy: impl FnMut(u64, u64, usize) -> Result<(), String>,
    ) -> TierDrain {
        let started = Instant::now();
        let mut out = TierDrain::default();
        for s in 0..self.lines.len() {
            let l = self.lines[s];
            if l.state != State::Dirty {
                continue;
            }
            let len = self.line_len(l.key) as usize;
            let from = s as u64 * self.plan.line_bytes;
            let to = l.key * self.plan.line_bytes;
            if let Err(e) = copy(from, to, len) {
                out.error = Some(format!(
                    "writing back line {} (bytes {to}..{}) from offset {from} of the cache device: {e}",
                    l.key,
                    to + len as u64
                ));
                break;
            }
            self.lines[s].state = State::Clean;
            self.dirty_count -= 1;
            out.lines += 1;
            out.bytes += len as u64;
        }
        out.seconds = started.elapsed().as_secs_f64();
        out
    }
}

/// Reads `buf.len()` bytes at `from` of `src` and writes them at `to` of `dst`.
fn copy(
    src: BorrowedFd<'_>,
    dst: BorrowedFd<'_>,
    buf: &mut [u8],
    from: u64,
    to: u64,
) -> Result<(), String> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(src, &mut buf[done..], from + done as u64) {
            Ok(0) => return Err("the cache device ended early".into()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pwrite(dst, &buf[done..], to + done as u64) {
            Ok(0) => return Err("the backing target took no bytes".into()),
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(format!("write: {e}")),
        }
    }
    Ok(())
}
