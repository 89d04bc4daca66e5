//! The `data` section of a results file: the compression and dedupe ratios the job asked of
//! the written data (`[data]`) and those the data achieved, measured on a sample of it.

use crate::job::data::DataReduction;
use serde::{Deserialize, Serialize};

/// The written data's reduction: asked and achieved.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DataResult {
    /// Compression ratio asked, N:1 (1: incompressible).
    pub compress_asked: f64,
    /// Compression ratio achieved, N:1: bytes of the sampled units over their bytes once each
    /// unit is deflated on its own (flate2, zlib's default level 6 (the fastest level before
    /// 1.19); a unit never counts larger than itself). `None`: no unit was sampled.
    #[serde(default)]
    pub compress_achieved: Option<f64>,
    /// Dedupe ratio asked, N:1 (1: every unit unique).
    pub dedupe_asked: f64,
    /// Dedupe ratio achieved, N:1: sampled units over distinct sampled units (by xxh3-64 hash
    /// of their content). `None`: no unit was sampled.
    #[serde(default)]
    pub dedupe_achieved: Option<f64>,
    /// The dedupe unit, bytes: units are deflated and compared whole.
    pub unit_bytes: u64,
    /// Units written by the run (ramp included), count.
    pub units_written: u64,
    /// Units in the sample measured, count.
    pub units_sampled: u64,
    /// The compression the sample achieved deflated in each unit arrays compress in (4, 8, 32
    /// and 128 KiB; a unit larger than the sample is left out): as `compress_achieved` (added
    /// in 1.19).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub compress_by_unit: Vec<UnitCompression>,
    /// The compression each worker's sample achieved deflated as one stream (added in 1.19).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compress_stream_achieved: Option<f64>,
}

/// The compression achieved at one unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct UnitCompression {
    /// The unit, bytes.
    pub unit_bytes: u64,
    /// Bytes over their bytes once each unit is deflated on its own, N:1.
    pub compress_achieved: f64,
}

impl DataResult {
    /// What `asked` achieved: `ratios` (compression, dedupe) of `sampled` of the `written`
    /// units.
    pub(crate) fn new(
        asked: DataReduction,
        ratios: Option<(f64, f64)>,
        written: u64,
        sampled: u64,
    ) -> Self {
        DataResult {
            compress_asked: asked.compress,
            compress_achieved: ratios.map(|r| r.0),
            dedupe_asked: asked.dedupe,
            dedupe_achieved: ratios.map(|r| r.1),
            unit_bytes: asked.unit_bytes,
            units_written: written,
            units_sampled: sampled,
            compress_by_unit: Vec::new(),
            compress_stream_achieved: None,
        }
    }

    /// With the compression each unit and the stream achieved (`by_unit`: see
    /// [`crate::engine::reduce::achieved_by_unit`]).
    pub(crate) fn with_units(mut self, by_unit: (Vec<(u64, f64)>, Option<f64>)) -> Self {
        self.compress_by_unit = (by_unit.0.into_iter())
            .map(|(unit_bytes, compress_achieved)| UnitCompression {
                unit_bytes,
                compress_achieved,
            })
            .collect();
        self.compress_stream_achieved = by_unit.1;
        self
    }

    /// `asked:1 asked, achieved:1 achieved` of a ratio, as every view shows it.
    pub(crate) fn show(asked: f64, achieved: Option<f64>) -> String {
        match achieved {
            Some(a) => format!("{asked:.2}:1 asked, {a:.2}:1 achieved"),
            None => format!("{asked:.2}:1 asked, not measured (no write sampled)"),
        }
    }
}
