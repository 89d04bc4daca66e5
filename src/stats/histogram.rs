//! Latency histograms: log-linear buckets (hdrhistogram, two significant digits: every
//! recorded value is kept within 1% of its true value) from 1 ns to 2 hours, plus the exact
//! minimum, maximum, sum and sum of squares. Histograms merge by adding, so totals over workers,
//! intervals and steps are exact merges, never averaged percentiles.

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use std::io::Read;

/// Highest trackable latency: 2 hours in nanoseconds. Larger values are clamped (and counted).
pub(crate) const HIGHEST_NS: u64 = 2 * 3600 * 1_000_000_000;
/// Significant decimal digits kept: 2 means a relative error of at most 1%.
pub(crate) const SIGNIFICANT_DIGITS: u8 = 2;

/// A latency histogram in nanoseconds.
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Counts,
    min: u64,
    max: u64,
    sum: u128,
    sum_sq: u128,
}

/// The bucket counts. Recording needs every bucket at hand (37 KiB); a histogram that is only
/// carried and added (an interval's statistics on their way from a worker to the collector)
/// needs only its non-empty buckets. The dense buckets are behind a pointer, so that a compact
/// histogram is small itself (80 bytes; 144 with hdrhistogram's 96-byte header inline): an
/// interval's statistics are six of them a class, and a collector that falls behind holds
/// them for every interval it has not yet written.
#[derive(Clone, Debug)]
enum Counts {
    /// Every bucket.
    Dense(Box<hdrhistogram::Histogram<u64>>),
    /// The non-empty buckets, ascending: (lowest value of the bucket, count).
    Sparse(Vec<(u64, u64)>),
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

/// An empty set of every bucket, built once.
fn empty() -> &'static hdrhistogram::Histogram<u64> {
    static EMPTY: std::sync::OnceLock<hdrhistogram::Histogram<u64>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(|| {
        hdrhistogram::Histogram::new_with_bounds(1, HIGHEST_NS, SIGNIFICANT_DIGITS)
            .expect("fixed histogram bounds are valid")
    })
}

/// An empty set of every bucket. Copied from one built once: a copy of its 37 KiB is a memory
/// copy, where building one fills the counters one by one (slow in debug builds).
fn empty_dense() -> hdrhistogram::Histogram<u64> {
    empty().clone()
}

fn densify(pairs: &[(u64, u64)]) -> hdrhistogram::Histogram<u64> {
    let mut h = empty_dense();
    for &(v, n) in pairs {
        h.saturating_record_n(v, n);
    }
    h
}

impl Histogram {
    /// An empty histogram, ready to record.
    pub fn new() -> Self {
        Self {
            counts: Counts::Dense(Box::new(empty_dense())),
            min: u64::MAX,
            max: 0,
            sum: 0,
            sum_sq: 0,
        }
    }

    /// Every bucket, made so if the histogram was compact.
    fn dense_mut(&mut self) -> &mut hdrhistogram::Histogram<u64> {
        if let Counts::Sparse(pairs) = &self.counts {
            self.counts = Counts::Dense(Box::new(densify(pairs)));
        }
        match &mut self.counts {
            Counts::Dense(h) => h,
            Counts::Sparse(_) => unreachable!("made dense above"),
        }
    }

    /// Every bucket, built for the occasion if the histogram is compact.
    fn dense(&self) -> std::borrow::Cow<'_, hdrhistogram::Histogram<u64>> {
        match &self.counts {
            Counts::Dense(h) => std::borrow::Cow::Borrowed(h),
            Counts::Sparse(pairs) => std::borrow::Cow::Owned(densify(pairs)),
        }
    }

    /// Records one latency. Never allocates (a histogram made by [`Histogram::take`], which
    /// is never recorded into, would first be made whole again).
    #[inline]
    pub fn record(&mut self, ns: u64) {
        match &mut self.counts {
            Counts::Dense(h) => h.saturating_record(ns.max(1)),
            Counts::Sparse(_) => self.dense_mut().saturating_record(ns.max(1)),
        }
        self.min = self.min.min(ns);
        self.max = self.max.max(ns);
        self.sum += ns as u128;
        self.sum_sq += (ns as u128) * (ns as u128);
    }

    /// Number of recorded values.
    pub(crate) fn count(&self) -> u64 {
        match &self.counts {
            Counts::Dense(h) => h.len(),
            Counts::Sparse(pairs) => pairs.iter().map(|&(_, n)| n).sum(),
        }
    }

    /// Largest recorded value, exact (0 when empty).
    pub(crate) fn max(&self) -> u64 {
        self.max
    }

    /// Adds every value of `other` into `self`.
    pub(crate) fn add(&mut self, other: &Histogram) {
        match &other.counts {
            Counts::Dense(o) if o.is_empty() => return,
            Counts::Dense(o) => self
                .dense_mut()
                .add(&**o)
                .expect("histograms with the same bounds always add"),
            Counts::Sparse(pairs) if pairs.is_empty() => return,
            Counts::Sparse(pairs) => {
                let h = self.dense_mut();
                for &(v, n) in pairs {
                    h.saturating_record_n(v, n);
                }
            }
        }
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        // Sums read from files are any u128: they saturate rather than wrap.
        self.sum = self.sum.saturating_add(other.sum);
        self.sum_sq = self.sum_sq.saturating_add(other.sum_sq);
    }

    /// Moves every value out into a compact histogram (only its non-empty buckets: a few KiB
    /// at most where a whole one is 37 KiB) and leaves `self` empty, keeping its buckets for
    /// more recording. The compact one adds into others exactly like the original would.
    pub(crate) fn take(&mut self) -> Histogram {
        let pairs = match &self.counts {
            Counts::Dense(h) if h.is_empty() => Vec::new(),
            Counts::Dense(h) => nonempty_buckets(h, self.min, self.max),
            Counts::Sparse(pairs) => pairs.clone(),
        };
        let out = Histogram {
            counts: Counts::Sparse(pairs),
            min: self.min,
            max: self.max,
            sum: self.sum,
            sum_sq: self.sum_sq,
        };
        self.reset();
        out
    }

    /// Forgets every value.
    pub(crate) fn reset(&mut self) {
        match &mut self.counts {
            Counts::Dense(h) if h.is_empty() => {}
            Counts::Dense(h) => h.reset(),
            Counts::Sparse(pairs) => pairs.clear(),
        }
        self.min = u64::MAX;
        self.max = 0;
        self.sum = 0;
        self.sum_sq = 0;
    }

    /// Exact mean, nanoseconds (0 when empty).
    pub(crate) fn mean(&self) -> f64 {
        match self.count() {
            0 => 0.0,
            n => self.sum as f64 / n as f64,
        }
    }

    /// Value at quantile `q` (0..=1), nanoseconds, within 1%.
    pub(crate) fn quantile(&self, q: f64) -> u64 {
        if self.count() == 0 {
            return 0;
        }
        self.quantile_in(&self.dense(), q)
    }

    fn quantile_in(&self, h: &hdrhistogram::Histogram<u64>, q: f64) -> u64 {
        h.value_at_quantile(q).clamp(self.min, self.max)
    }

    /// The summary statistics.
    pub(crate) fn summary(&self) -> LatencySummary {
        let n = self.count();
        if n == 0 {
            return LatencySummary::default();
        }
        let h = self.dense();
        let q = |q: f64| self.quantile_in(&h, q);
        let mean = self.mean();
        let var = (self.sum_sq as f64 / n as f64 - mean * mean).max(0.0);
        LatencySummary {
            min: self.min,
            mean,
            max: self.max,
            stddev: var.sqrt(),
            p50: q(0.50),
            p90: q(0.90),
            p95: q(0.95),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
        }
    }

    /// The non-empty buckets, ascending: (the highest value the bucket holds, ns; its count).
    pub(crate) fn buckets(&self) -> Vec<(u64, u64)> {
        let h = self.dense();
        (h.iter_recorded())
            .map(|v| {
                (
                    h.highest_equivalent(v.value_iterated_to()),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    /// The non-empty buckets, ascending: (the lowest and the highest value the bucket holds,
    /// ns; its count).
    pub(crate) fn bucket_ranges(&self) -> Vec<(u64, u64, u64)> {
        let h = self.dense();
        (h.iter_recorded())
            .map(|v| {
                let at = v.value_iterated_to();
                (
                    h.lowest_equivalent(at),
                    h.highest_equivalent(at),
                    v.count_at_value(),
                )
            })
            .collect()
    }

    /// Percentile curve for plots: (percentile, ns) at log-spaced tail points.
    pub(crate) fn percentile_curve(&self) -> Vec<(f64, u64)> {
        if self.count() == 0 {
            return Vec::new();
        }
        let h = self.dense();
        let mut out = Vec::new();
        for nines in [
            0.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99, 99.999, 100.0,
        ] {
            out.push((nines, self.quantile_in(&h, nines / 100.0)));
        }
        out
    }

    /// Compact, mergeable encoding: hdrhistogram V2 + deflate, base64.
    pub(crate) fn encode(&self) -> EncodedHistogram {
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&self.dense(), &mut bytes)
            .expect("serialising into memory cannot fail");
        EncodedHistogram {
            hdr_v2_deflate_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            min_ns: if self.count() == 0 { 0 } else { self.min },
            max_ns: self.max,
            sum_ns: self.sum.to_string(),
            sum_sq_ns2: self.sum_sq.to_string(),
        }
    }

    /// Decodes [`Histogram::encode`]'s output. The encoding is checked before anything is
    /// allocated from it ([`EncodedHistogram::check`]).
    pub(crate) fn decode(e: &EncodedHistogram) -> Result<Histogram, String> {
        let inflated = e.check()?;
        let decoded: hdrhistogram::Histogram<u64> = Deserializer::new()
            .deserialize(&mut inflated.as_slice())
            .map_err(|err| format!("histogram cannot be decoded: {err}"))?;
        let mut out = Histogram::new();
        out.dense_mut()
            .add(&decoded)
            .map_err(|err| format!("histogram has other bounds: {err:?}"))?;
        if out.count() > 0 {
            out.min = e.min_ns;
        }
        out.max = e.max_ns;
        out.sum = e.sum_ns.parse().map_err(|_| "bad sum_ns".to_string())?;
        out.sum_sq = e
            .sum_sq_ns2
            .parse()
            .map_err(|_| "bad sum_sq_ns2".to_string())?;
        Ok(out)
    }
}

/// HdrHistogram's V2 encoding: its cookie and the length of its header, bytes (cookie,
/// payload length, normalizing offset, significant digits, lowest and highest trackable
/// values, integer-to-double ratio).
const V2_COOKIE: u32 = 0x1c84_9313;
const V2_HEADER_BYTES: usize = 40;
/// The compressed V2 encoding's cookie (followed by the compressed length and a zlib stream).
const V2_DEFLATE_COOKIE: u32 = 0x1c84_9314;

/// The longest V2 encoding of a histogram with storlab's bounds: its header and, for each
/// bucket, a count of at most 9 bytes (about 43 KiB).
fn max_v2_bytes() -> usize {
    V2_HEADER_BYTES + 9 * empty().distinct_values()
}

impl EncodedHistogram {
    /// Checks the encoding and returns it inflated (HdrHistogram V2, uncompressed), ready for
    /// hdrhistogram's deserializer: base64 of the compressed V2 encoding, inflating to at most
    /// the longest encoding of its buckets (about 43 KiB), whose header declares storlab's
    /// bounds (1 ns to [`HIGHEST_NS`], [`SIGNIFICANT_DIGITS`]) and a payload of exactly the
    /// bytes that follow, so that nothing hdrhistogram allocates is sized by a number of the
    /// file; and the exact figures beside it whole numbers, the minimum at most the maximum.
    pub(crate) fn check(&self) -> Result<Vec<u8>, String> {
        if self.min_ns > self.max_ns {
            return Err(format!(
                "histogram's min_ns {} is above its max_ns {}",
                self.min_ns, self.max_ns
            ));
        }
        for (name, v) in [("sum_ns", &self.sum_ns), ("sum_sq_ns2", &self.sum_sq_ns2)] {
            if v.len() > 39 || v.parse::<u128>().is_err() {
                return Err(format!(
                    "histogram's {name} `{}` is not a whole number below 2^128",
                    v.chars().take(40).collect::<String>()
                ));
            }
        }
        // Base64 of at most the longest encoding: 4 characters for 3 bytes, and its 8-byte head.
        let limit = (max_v2_bytes() + 64) * 4 / 3 + 16;
        if self.hdr_v2_deflate_base64.len() > limit {
            return Err(format!(
                "histogram is {} characters of base64; an encoding of storlab's buckets is at most {limit}",
                self.hdr_v2_deflate_base64.len()
            ));
        }
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&self.hdr_v2_deflate_base64)
            .map_err(|err| format!("histogram is not valid base64: {err}"))?;
        inflate(&bytes)
    }
}

/// The V2 encoding inside a compressed V2 encoding (see [`EncodedHistogram::check`]).
fn inflate(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let be32 = |b: &[u8], at: usize| -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().expect("4 bytes"))
    };
    if bytes.len() < 8 || be32(bytes, 0) != V2_DEFLATE_COOKIE {
        return Err("histogram is not an HdrHistogram V2 compressed encoding".into());
    }
    let compressed = be32(bytes, 4) as usize;
    let Some(stream) = bytes.get(8..8 + compressed) else {
        return Err(format!(
            "histogram declares {compressed} compressed bytes but holds {}",
            bytes.len() - 8
        ));
    };
    let max = max_v2_bytes();
    let mut inflated = Vec::new();
    flate2::read::ZlibDecoder::new(stream)
        .take(max as u64 + 1)
        .read_to_end(&mut inflated)
        .map_err(|err| format!("histogram does not inflate: {err}"))?;
    if inflated.len() > max {
        return Err(format!(
            "histogram inflates to more than {max} bytes, the most storlab's buckets take"
        ));
    }
    if inflated.len() < V2_HEADER_BYTES || be32(&inflated, 0) != V2_COOKIE {
        return Err("histogram does not hold an HdrHistogram V2 encoding".into());
    }
    let payload = be32(&inflated, 4) as usize;
    let be64 = |at: usize| u64::from_be_bytes(inflated[at..at + 8].try_into().expect("8 bytes"));
    if payload != inflated.len() - V2_HEADER_BYTES {
        return Err(format!(
            "histogram declares {payload} bytes of counts but holds {}",
            inflated.len() - V2_HEADER_BYTES
        ));
    }
    let (offset, digits, low, high) = (be32(&inflated, 8), be32(&inflated, 12), be64(16), be64(24));
    let ratio = f64::from_bits(be64(32));
    if offset != 0
        || digits != u32::from(SIGNIFICANT_DIGITS)
        || low != 1
        || high != HIGHEST_NS
        || ratio != 1.0
    {
        return Err(format!(
            "histogram's bounds are {low} to {high} ns with {digits} significant digits; storlab's are 1 to {HIGHEST_NS} ns with {SIGNIFICANT_DIGITS}"
        ));
    }
    Ok(inflated)
}

/// The non-empty buckets of `h`, whose values lie between `min` and `max`: only the buckets
/// between the two are visited (a few hundred for most latency spreads, of 4,736).
fn nonempty_buckets(h: &hdrhistogram::Histogram<u64>, min: u64, max: u64) -> Vec<(u64, u64)> {
    let mut pairs = Vec::new();
    let mut found = 0u64;
    let top = max.clamp(1, h.high());
    let mut v = h.lowest_equivalent(min.clamp(1, top));
    while v <= top {
        let n = h.count_at(v);
        if n > 0 {
            pairs.push((v, n));
            found += n;
        }
        v = h.next_non_equivalent(v);
    }
    if found != h.len() {
        // Values beyond the trackable range, clamped into the last buckets: visit them all.
        pairs = h
            .iter_recorded()
            .map(|r| {
                (
                    h.lowest_equivalent(r.value_iterated_to()),
                    r.count_at_value(),
                )
            })
            .collect();
    }
    pairs
}

/// A histogram as stored in results files: merge them by decoding and adding. Reading one
/// checks it ([`EncodedHistogram::check`]): a file cannot hold one that would allocate in
/// proportion to a number it declares.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EncodedHistogram {
    /// HdrHistogram V2 compressed encoding, base64 (standard alphabet).
    pub hdr_v2_deflate_base64: String,
    /// Exact minimum, ns.
    pub min_ns: u64,
    /// Exact maximum, ns.
    pub max_ns: u64,
    /// Exact sum of values, ns (decimal string: may exceed 2^64).
    pub sum_ns: String,
    /// Exact sum of squares, ns² (decimal string).
    pub sum_sq_ns2: String,
}

impl<'de> Deserialize<'de> for EncodedHistogram {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        /// The fields as written, before they are checked.
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Written {
            hdr_v2_deflate_base64: String,
            min_ns: u64,
            max_ns: u64,
            sum_ns: String,
            sum_sq_ns2: String,
        }
        let w = Written::deserialize(d)?;
        let e = EncodedHistogram {
            hdr_v2_deflate_base64: w.hdr_v2_deflate_base64,
            min_ns: w.min_ns,
            max_ns: w.max_ns,
            sum_ns: w.sum_ns,
            sum_sq_ns2: w.sum_sq_ns2,
        };
        e.check().map_err(serde::de::Error::custom)?;
        Ok(e)
    }
}

/// Latency statistics in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LatencySummary {
    /// Smallest, exact.
    pub min: u64,
    /// Mean, exact.
    pub mean: f64,
    /// Largest, exact.
    pub max: u64,
    /// Standard deviation, exact.
    pub stddev: f64,
    /// Median (within 1%).
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 95th percentile.
    pub p95: u64,
    /// 99th percentile.
    pub p99: u64,
    /// 99.9th percentile.
    pub p99_9: u64,
    /// 99.99th percentile.
    pub p99_99: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng, rngs::SmallRng};

    #[test]
    fn merge_equals_recording_everything_into_one() {
        let mut rng = SmallRng::seed_from_u64(7);
        let mut all = Histogram::new();
        let mut parts = vec![Histogram::new(), Histogram::new(), Histogram::new()];
        for i in 0..100_000 {
            let v = (rng.random::<f64>().powi(4) * 1e9) as u64 + 100;
            all.record(v);
            parts[i % 3].record(v);
        }
        let mut merged = Histogram::new();
        for p in &parts {
            merged.add(p);
        }
        assert_eq!(merged.summary(), all.summary());
        assert_eq!(merged.count(), 100_000);
    }

    #[test]
    fn relative_error_within_one_percent() {
        for v in [100u64, 1_234, 98_765, 5_000_000, 3_600_000_000_000] {
            let mut h = Histogram::new();
            for _ in 0..3 {
                h.record(v);
            }
            h.record(1);
            let p50 = h.quantile(0.5) as f64;
            assert!((p50 - v as f64).abs() / v as f64 <= 0.01, "{v} -> {p50}");
        }
    }

    #[test]
    fn summary_of_known_values() {
        let mut h = Histogram::new();
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert_eq!(s.min, 1000);
        assert_eq!(s.max, 1_000_000);
        assert!((s.mean - 500_500.0).abs() < 1e-6);
        assert!((s.p50 as f64 - 500_000.0).abs() / 500_000.0 <= 0.01);
        assert!((s.p99 as f64 - 990_000.0).abs() / 990_000.0 <= 0.01);
        assert!((s.stddev - 288_675.0).abs() < 10.0);
    }

    #[test]
    fn a_histogram_is_small_itself_and_its_buckets_are_behind_a_pointer() {
        // What a compact histogram costs whatever it holds: an interval's statistics carry six
        // a class, for every interval a collector that falls behind has not yet written.
        assert!(std::mem::size_of::<Histogram>() <= 80);
        assert!(std::mem::size_of::<hdrhistogram::Histogram<u64>>() > 80);
    }

    #[test]
    fn take_moves_values_into_a_compact_histogram_that_adds_the_same() {
        let mut rng = SmallRng::seed_from_u64(11);
        let mut h = Histogram::new();
        let mut whole = Histogram::new();
        let mut values: Vec<u64> = (0..20_000)
            .map(|_| (rng.random::<f64>().powi(3) * 5e7) as u64 + 900)
            .collect();
        // Edges: zero, one, and beyond the trackable range (clamped).
        values.extend([0, 1, HIGHEST_NS, HIGHEST_NS * 3]);
        for &v in &values {
            h.record(v);
            whole.record(v);
        }
        let taken = h.take();
        assert_eq!(h.count(), 0);
        assert_eq!(h.summary(), LatencySummary::default());
        assert!(matches!(taken.counts, Counts::Sparse(_)));
        assert_eq!(taken.count(), whole.count());
        assert_eq!(taken.summary(), whole.summary());
        let mut into = Histogram::new();
        into.record(5_000);
        let mut expected = into.clone();
        into.add(&taken);
        expected.add(&whole);
        assert_eq!(into.summary(), expected.summary());
        assert_eq!(into.encode(), expected.encode());
        // The emptied one records again, and an empty take is empty.
        h.record(42);
        assert_eq!(h.take().summary().max, 42);
        assert_eq!(h.take().count(), 0);
        // Narrow spreads visit few buckets and keep only the non-empty ones.
        for v in [1_000u64, 1_001, 2_000] {
            h.record(v);
        }
        match h.take().counts {
            Counts::Sparse(pairs) => assert_eq!(pairs.len(), 2, "{pairs:?}"),
            Counts::Dense(_) => panic!("take must be compact"),
        }
    }

    /// A compressed V2 encoding of `inner` (a V2 encoding, maybe a hostile one), as a results
    /// file holds it.
    fn encoded(inner: &[u8], min_ns: u64, max_ns: u64) -> EncodedHistogram {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        z.write_all(inner).unwrap();
        let stream = z.finish().unwrap();
        let mut bytes = V2_DEFLATE_COOKIE.to_be_bytes().to_vec();
        bytes.extend((stream.len() as u32).to_be_bytes());
        bytes.extend(stream);
        EncodedHistogram {
            hdr_v2_deflate_base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            min_ns,
            max_ns,
            sum_ns: "0".into(),
            sum_sq_ns2: "0".into(),
        }
    }

    /// A V2 header declaring `payload` bytes of counts, bounds `low` to `high` with `digits`.
    fn header(payload: u32, digits: u32, low: u64, high: u64) -> Vec<u8> {
        let mut h = V2_COOKIE.to_be_bytes().to_vec();
        for v in [payload, 0, digits] {
            h.extend(v.to_be_bytes());
        }
        h.extend(low.to_be_bytes());
        h.extend(high.to_be_bytes());
        h.extend(1.0f64.to_be_bytes());
        h
    }

    #[test]
    fn an_encoding_that_declares_more_than_it_holds_is_refused_before_anything_is_allocated() {
        // 4 GiB of counts declared, 100 bytes held: hdrhistogram would allocate the 4 GiB.
        let mut inner = header(0xFFFF_FF00, 2, 1, HIGHEST_NS);
        inner.extend([2u8; 100]);
        let e = Histogram::decode(&encoded(&inner, 1, 2)).unwrap_err();
        assert_eq!(
            e,
            "histogram declares 4294967040 bytes of counts but holds 100"
        );
        // Bounds other than storlab's: a wide range or more digits is a larger array.
        let inner = header(0, 5, 1, u64::MAX / 2);
        let e = Histogram::decode(&encoded(&inner, 1, 2)).unwrap_err();
        assert!(
            e.starts_with("histogram's bounds are 1 to 9223372036854775807 ns with 5"),
            "{e}"
        );
        // A deflate bomb: 1 MiB of zeros inflates past any encoding of storlab's buckets.
        let mut inner = header(1 << 20, 2, 1, HIGHEST_NS);
        inner.extend(vec![0u8; 1 << 20]);
        let e = Histogram::decode(&encoded(&inner, 1, 2)).unwrap_err();
        assert!(e.starts_with("histogram inflates to more than"), "{e}");
        // A compressed length beyond the bytes there are.
        let mut e = encoded(&header(0, 2, 1, HIGHEST_NS), 1, 2);
        let mut bytes = base64::engine::general_purpose::STANDARD
            .decode(&e.hdr_v2_deflate_base64)
            .unwrap();
        bytes[4..8].copy_from_slice(&u32::MAX.to_be_bytes());
        e.hdr_v2_deflate_base64 = base64::engine::general_purpose::STANDARD.encode(bytes);
        assert!(
            Histogram::decode(&e)
                .unwrap_err()
                .contains("declares 4294967295 compressed bytes")
        );
        // Not an encoding at all; too long to be one.
        let mut e = encoded(&header(0, 2, 1, HIGHEST_NS), 1, 2);
        e.hdr_v2_deflate_base64 = "AAAA".into();
        assert!(
            Histogram::decode(&e)
                .unwrap_err()
                .contains("not an HdrHistogram V2")
        );
        e.hdr_v2_deflate_base64 = "A".repeat(1 << 20);
        assert!(
            Histogram::decode(&e)
                .unwrap_err()
                .contains("characters of base64")
        );
    }

    #[test]
    fn exact_figures_that_contradict_each_other_are_refused() {
        let mut h = Histogram::new();
        h.record(500);
        h.record(9_000);
        let good = h.encode();
        assert!(good.check().is_ok());
        // A minimum above the maximum would make every percentile panic (clamp).
        let e = EncodedHistogram {
            min_ns: 10_000,
            ..good.clone()
        };
        assert_eq!(
            Histogram::decode(&e).unwrap_err(),
            "histogram's min_ns 10000 is above its max_ns 9000"
        );
        let json = serde_json::to_string(&e).unwrap();
        let err = serde_json::from_str::<EncodedHistogram>(&json)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("histogram's min_ns 10000 is above"),
            "{err}"
        );
        let e = EncodedHistogram {
            sum_ns: "-1".into(),
            ..good.clone()
        };
        assert!(
            Histogram::decode(&e)
                .unwrap_err()
                .contains("sum_ns `-1` is not a whole number")
        );
        // Sums that would overflow when added saturate.
        let e = EncodedHistogram {
            sum_ns: u128::MAX.to_string(),
            ..good
        };
        let mut merged = Histogram::decode(&e).unwrap();
        merged.add(&Histogram::decode(&e).unwrap());
        assert_eq!(merged.sum, u128::MAX);
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut h = Histogram::new();
        for v in [5u64, 50, 500, 5_000_000] {
            h.record(v);
        }
        let back = Histogram::decode(&h.encode()).unwrap();
        assert_eq!(back.summary(), h.summary());
        let empty = Histogram::decode(&Histogram::new().encode()).unwrap();
        assert_eq!(empty.count(), 0);
    }
}
