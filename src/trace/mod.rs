//! Block traces from other tools: the public formats read into I/Os (`formats`), and a trace
//! turned into storlab's block sample and a results file, for cache curves (`import`).
//!
//! Two formats:
//!
//! - **MSR Cambridge CSV** (SNIA IOTTA): `Timestamp,Hostname,DiskNumber,Type,Offset,Size,
//!   ResponseTime`, the timestamp and response time in Windows ticks (100 ns), `Type` `Read`
//!   or `Write`, offset and size in bytes. Each (host, disk) is a device.
//! - **blkparse text** (blktrace's default output): `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS
//!   SECTOR + COUNT [PROCESS]`, sectors of 512 bytes. The `Q` events (the I/O as it was asked
//!   for) are taken, or the `D` events (as issued to the driver) when there are none; reads
//!   and writes only (`R` or `W` in RWBS); other lines (the summary at the end) are skipped.
//!   Each MAJ,MIN is a device.

pub(crate) mod formats;
pub(crate) mod import;
pub(crate) mod replay;

/// One I/O of a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TraceIo {
    /// When it was issued, ns from the trace's first I/O.
    pub(crate) t_ns: u64,
    /// Index into [`Trace::devices`].
    pub(crate) device: u32,
    /// A write (else a read).
    pub(crate) write: bool,
    /// Byte offset.
    pub(crate) offset: u64,
    /// Bytes.
    pub(crate) len: u32,
    /// The latency the trace recorded, ns (MSR's response time), if it has one.
    pub(crate) latency_ns: Option<u64>,
}

/// A trace, read whole.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Trace {
    /// Its I/Os, in time order.
    pub(crate) ios: Vec<TraceIo>,
    /// Its devices' names (`host disk N`, `MAJ,MIN`).
    pub(crate) devices: Vec<String>,
}

impl Trace {
    /// Bytes of device `d` the trace reaches (its largest offset + size).
    pub(crate) fn extent(&self, d: u32) -> u64 {
        (self.ios.iter())
            .filter(|io| io.device == d)
            .map(|io| io.offset + u64::from(io.len))
            .max()
            .unwrap_or(0)
    }

    /// From the first I/O to the last, ns.
    pub(crate) fn span_ns(&self) -> u64 {
        self.ios.last().map_or(0, |io| io.t_ns)
    }
}
