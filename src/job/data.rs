//! `[data]`: what the written data is like — how well it compresses and how much of it
//! duplicates other data (as vdbench's `compratio`/`dedupratio` and fio's
//! `buffer_compress_percentage`/`dedupe_percentage` ask). Resolved into [`DataReduction`];
//! the engine builds the data ([`crate::engine::reduce`]). Pure: no syscalls.

use super::file::Source;
use super::spec::JobSpec;
use super::{Job, JobError};
use crate::units::Size;
use serde::{Deserialize, Serialize};

/// Highest compression or dedupe ratio a job may ask for.
pub(crate) const MAX_RATIO: f64 = 100.0;
/// Highest compression ratio the data can reach: every 512-byte sector keeps its 48-byte
/// verification header and an 8-byte tag, masked so that they do not compress (56 of 512
/// bytes: about 8.5:1 at most).
pub(crate) const MAX_COMPRESS: f64 = 8.0;
/// Largest dedupe unit.
pub(crate) const MAX_UNIT: u64 = 1 << 20;
/// Default dedupe unit, bytes.
pub(crate) const DEFAULT_UNIT: u64 = 4096;

/// The unit the asked compression is calibrated on: 32 KiB, the middle of the units arrays
/// compress in (4 KiB to 128 KiB and streams), deflated at zlib's default level.
pub(crate) const CALIBRATION_UNIT: usize = 32 << 10;

/// Bytes `unit` deflates to (flate2, its pure-Rust miniz_oxide backend, zlib's default level
/// 6, raw deflate), at most its own length (a store keeps data that does not shrink as it is):
/// how storlab measures compression, of what a run wrote and of a file a converted job's data
/// is to be like.
pub(crate) fn compressed_len(unit: &[u8], out: &mut Vec<u8>) -> usize {
    let mut c = flate2::Compress::new(flate2::Compression::default(), false);
    out.clear();
    out.reserve(unit.len() + 64);
    match c.compress_vec(unit, out, flate2::FlushCompress::Finish) {
        Ok(flate2::Status::StreamEnd) => out.len().min(unit.len()),
        _ => unit.len(),
    }
}

/// The compression ratio of `data` deflated in units of `unit` bytes (a last part shorter
/// than a unit is left out), N:1; `None` when it holds no whole unit.
pub(crate) fn compress_ratio(data: &[u8], unit: usize) -> Option<f64> {
    let mut out = Vec::new();
    let (mut bytes, mut compressed) = (0usize, 0usize);
    for u in data.chunks_exact(unit.max(1)) {
        bytes += u.len();
        compressed += compressed_len(u, &mut out);
    }
    (bytes > 0).then(|| bytes as f64 / compressed.max(1) as f64)
}

/// `[data]` as written.
#[derive(Debug, Clone, Default, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct DataSpec {
    /// Compression ratio, N:1 (1: incompressible, the default).
    pub compress: Option<f64>,
    /// Dedupe ratio, N:1 (1: every unit unique, the default).
    pub dedupe: Option<f64>,
    /// The unit of deduplication (default 4 KiB); writes are whole units.
    pub dedupe_unit: Option<Size>,
}

/// What the written data is like.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataReduction {
    /// Compression ratio asked, N:1 (1: incompressible).
    pub compress: f64,
    /// Dedupe ratio asked, N:1 (1: every unit unique).
    pub dedupe: f64,
    /// The unit of deduplication and of the compression measurement, bytes.
    pub unit_bytes: u64,
}

impl Default for DataReduction {
    fn default() -> Self {
        DataReduction {
            compress: 1.0,
            dedupe: 1.0,
            unit_bytes: DEFAULT_UNIT,
        }
    }
}

impl DataReduction {
    /// Whether the data is reduced at all (anything but unique and incompressible).
    pub(crate) fn active(&self) -> bool {
        self.compress > 1.0 || self.dedupe > 1.0
    }
}

/// Errors about `[data]` keys, at the key's line (or the table's).
struct DataErrors<'a> {
    src: &'a Source<'a>,
}

impl DataErrors<'_> {
    fn error(&self, key: &str, message: String) -> JobError {
        self.src.table_error("data", key, message)
    }
}

/// Checks a ratio `key` = `v`: finite, 1 to `max`.
fn ratio(errors: &DataErrors, key: &str, v: Option<f64>, max: f64) -> Result<f64, JobError> {
    let Some(v) = v else { return Ok(1.0) };
    if !v.is_finite() || !(1.0..=max).contains(&v) {
        let why = if key == "compress" && v > max && v <= MAX_RATIO {
            format!(
                "; every 512-byte sector keeps its 48-byte header (what verification and the data's identity need), so storlab's data compresses at most {max}:1"
            )
        } else {
            String::new()
        };
        return Err(errors.error(
            key,
            format!("{key} = {v} is not a ratio from 1 to {max} (N:1, e.g. {key} = 3.0){why}"),
        ));
    }
    Ok(v)
}

/// The `[data]` table of `spec`, checked; the default (unique, incompressible) without one.
pub(super) fn resolve_data(spec: &JobSpec, src: &Source) -> Result<DataReduction, JobError> {
    resolve_spec(spec.data.as_ref(), src)
}

/// A workload's own job file's `[data]` (`name` and `text` the file, `None`: from flags),
/// resolved as a plain job's, its errors at their lines.
pub(crate) fn resolve_in(
    data: Option<&DataSpec>,
    name: &std::path::Path,
    text: Option<&str>,
) -> Result<DataReduction, JobError> {
    let src = Source {
        name: name.display().to_string(),
        text,
    };
    resolve_spec(data, &src)
}

fn resolve_spec(data: Option<&DataSpec>, src: &Source) -> Result<DataReduction, JobError> {
    let Some(d) = data else {
        return Ok(DataReduction::default());
    };
    let errors = DataErrors { src };
    let compress = ratio(&errors, "compress", d.compress, MAX_COMPRESS)?;
    let dedupe = ratio(&errors, "dedupe", d.dedupe, MAX_RATIO)?;
    let unit_bytes = d.dedupe_unit.map_or(DEFAULT_UNIT, |s| s.0);
    if unit_bytes == 0 || unit_bytes % 512 != 0 || unit_bytes > MAX_UNIT {
        return Err(errors.error(
            "dedupe_unit",
            format!(
                "the dedupe unit is {unit_bytes} bytes; it must be a multiple of 512 bytes up to 1 MiB, e.g. dedupe_unit = \"4k\""
            ),
        ));
    }
    Ok(DataReduction {
        compress,
        dedupe,
        unit_bytes,
    })
}

/// With reduced data (or data ratios cycled: `cycled`), every write must be whole dedupe units
/// at unit-aligned offsets: checks the resolved job's access entries that write, naming the
/// first that does not fit.
pub(super) fn check_units(job: &Job, src: &Source, cycled: bool) -> Result<(), JobError> {
    let d = job.data;
    if !d.active() && !cycled {
        return Ok(());
    }
    let unit = d.unit_bytes;
    for (wi, w) in job.workers.iter().enumerate() {
        for (ai, a) in w.access.iter().enumerate() {
            if a.read_pct >= 100.0 {
                continue;
            }
            let sizes = a.block_sizes.iter().map(|&(s, _)| s).chain([
                a.block_size_bytes,
                a.align_bytes,
                a.offset_bytes,
                a.gap_bytes.unsigned_abs(),
                a.start_bytes,
                a.roll_every_bytes,
            ]);
            let zones = a.zones.iter().flat_map(|z| [z.size_bytes, z.skip_bytes]);
            let sizes = sizes.chain(zones);
            if let Some(bad) = sizes.filter(|&s| s > 0).find(|s| s % unit != 0) {
                let name = w.name.split('#').next().unwrap_or(&w.name);
                return Err(DataErrors { src }.error(
                    "dedupe_unit",
                    format!(
                        "worker `{name}` (worker {wi}) access entry {ai} writes with sizes, alignment, offset, gap, start, roll_every or zones of {bad} bytes, not a multiple of the {unit}-byte dedupe unit; make them multiples of {unit}, or set a smaller dedupe_unit"
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::job::{JobError, file, resolve};
    use std::path::Path;

    fn with(extra: &str) -> Result<crate::job::Job, JobError> {
        let text = format!(
            "{extra}\n[[target]]\npath = \"/tmp/x\"\nsize = \"1m\"\n[[worker]]\n[[worker.access]]\nblock_size = \"8k\"\nread = \"50%\"\n"
        );
        let spec = file::parse(Path::new("job.toml"), &text)?;
        resolve(&spec, Some((Path::new("job.toml"), &text)))
    }

    #[test]
    fn default_is_unique_and_incompressible() {
        let job = with("").unwrap();
        assert!(!job.data.active());
        assert_eq!((job.data.compress, job.data.dedupe), (1.0, 1.0));
        let job = with("[data]\ncompress = 3.0\ndedupe = 2\ndedupe_unit = \"8k\"").unwrap();
        assert_eq!(
            (job.data.compress, job.data.dedupe, job.data.unit_bytes),
            (3.0, 2.0, 8192)
        );
    }

    #[test]
    fn bad_values_name_file_line_and_key() {
        for (text, key, line) in [
            ("[data]\ncompress = 0.5", "data.compress", 2),
            ("[data]\n\ndedupe = 101", "data.dedupe", 3),
            ("[data]\ndedupe = nan", "data.dedupe", 2),
            ("[data]\ncompress = 20", "data.compress", 2),
            ("[data]\ndedupe_unit = \"1000\"", "data.dedupe_unit", 2),
            (
                "[data]\ndedupe = 2\ndedupe_unit = \"16k\"",
                "data.dedupe_unit",
                3,
            ),
        ] {
            let e = with(text).unwrap_err();
            assert_eq!(e.key, key, "{text}: {e}");
            assert_eq!(e.location, format!("job.toml:{line}"), "{text}: {e}");
        }
        let e = with("[data]\ncompress = 20").unwrap_err();
        assert!(e.message.contains("at most 8:1"), "{e}");
        let e = with("[data]\ndedupe = 2\ndedupe_unit = \"16k\"").unwrap_err();
        assert!(e.message.contains("8192 bytes"), "{e}");
        // A unit that is not reduced asks nothing of the writes.
        assert!(with("[data]\ndedupe_unit = \"16k\"").is_ok());
        assert!(with("[data]\nsqueeze = 2").is_err());
    }

    #[test]
    fn sequential_gaps_and_starts_must_keep_writes_on_dedupe_units() {
        for (key, value) in [("gap", "2k"), ("gap", "-6k"), ("start", "2k")] {
            let text = format!(
                "[data]\ndedupe = 2\ndedupe_unit = \"4k\"\n[[target]]\npath = \"/tmp/x\"\nsize = \"1m\"\n\
                 [[worker]]\n[[worker.access]]\nblock_size = \"8k\"\nread = \"50%\"\nrandom = 0\n{key} = \"{value}\"\n"
            );
            let spec = file::parse(Path::new("job.toml"), &text).unwrap();
            let e = resolve(&spec, Some((Path::new("job.toml"), &text))).unwrap_err();
            assert_eq!(e.key, "data.dedupe_unit", "{key}: {e}");
            assert!(
                e.message.contains("bytes, not a multiple of the 4096-byte"),
                "{key}: {e}"
            );
        }
    }
}
