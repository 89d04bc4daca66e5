//! Reading the trace formats (see the module above): every line checked, an error naming the
//! file, the line and what was expected.

use super::{Trace, TraceIo};
use crate::job::trace::Format;
use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::Path;

/// Windows ticks (MSR's time unit), ns.
const TICK_NS: u64 = 100;
/// blkparse's sector, bytes.
const SECTOR: u64 = 512;

/// Longest line of a trace, bytes (an MSR or blkparse line is under 200).
const MAX_LINE_BYTES: u64 = 64 << 10;
/// Devices a trace may have (each is a target of its own).
const MAX_DEVICES: usize = 4096;
/// Where an I/O of a trace may end at most, bytes: 1 EiB, beyond any device (a block number
/// of 4 KiB blocks then fits the 48 bits a block sample's key gives it).
const MAX_END: u64 = 1 << 60;
/// The latest time of a trace, ns (about 292 years: any later one is no time).
const MAX_NS: u64 = u64::MAX / 2;

/// Reads the trace at `path` in `format` (`None`: from its first line), within the cap of
/// traces ([`crate::input`]); returns it and the format it was read in.
pub(crate) fn read(path: &Path, format: Option<Format>) -> Result<(Trace, Format), String> {
    let file = crate::input::open(path, crate::input::Kind::Trace).map_err(|e| e.to_string())?;
    let mut input = std::io::BufReader::with_capacity(1 << 16, file);
    let mut parser: Option<Parser> = format.map(Parser::new);
    let mut bytes = Vec::new();
    for i in 0.. {
        let at = |m: String| format!("{}:{}: {m}", path.display(), i + 1);
        bytes.clear();
        let n = (&mut input)
            .take(MAX_LINE_BYTES + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|e| at(format!("cannot read: {}", crate::units::os_error_text(&e))))?;
        if n == 0 {
            break;
        }
        if bytes.len() as u64 > MAX_LINE_BYTES {
            return Err(at(format!(
                "the line is longer than {}; a trace's lines are under 200 bytes",
                crate::units::format_size(MAX_LINE_BYTES)
            )));
        }
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| at("the line is not text (UTF-8)".into()))?
            .trim();
        if text.is_empty() {
            continue;
        }
        if parser.is_none() {
            let f = Format::sniff(text).ok_or_else(|| {
                at("neither an MSR Cambridge CSV line nor a blkparse event; give --format msr or --format blkparse".into())
            })?;
            parser = Some(Parser::new(f));
        }
        if let Some(p) = parser.as_mut() {
            p.line(text).map_err(at)?;
        }
    }
    let Some(parser) = parser.filter(|p| !(p.ios.is_empty() && p.issued.is_empty())) else {
        return Err(format!(
            "{}: no reads or writes in the trace",
            path.display()
        ));
    };
    let format = parser.format;
    let trace = parser
        .finish()
        .map_err(|e| format!("{}: {e}: split it", path.display()))?;
    Ok((trace, format))
}

/// Where an I/O at `offset` of `len` bytes ends, if that is within [`MAX_END`].
fn end(offset: u64, len: u32) -> Result<u64, String> {
    offset
        .checked_add(u64::from(len))
        .filter(|&e| e <= MAX_END)
        .ok_or_else(|| {
            format!("offset {offset} + size {len} ends beyond 1 EiB, past the end of any device")
        })
}

/// A trace being read.
struct Parser {
    format: Format,
    devices: Vec<String>,
    index: HashMap<String, u32>,
    /// MSR: I/Os with absolute times in ticks; blkparse: `Q` events (ns).
    ios: Vec<TraceIo>,
    /// blkparse: `D` events, for a trace without `Q`.
    issued: Vec<TraceIo>,
}

impl Parser {
    fn new(format: Format) -> Parser {
        Parser {
            format,
            devices: Vec::new(),
            index: HashMap::new(),
            ios: Vec::new(),
            issued: Vec::new(),
        }
    }

    fn device(&mut self, name: String) -> Result<u32, String> {
        if let Some(&d) = self.index.get(&name) {
            return Ok(d);
        }
        if self.devices.len() == MAX_DEVICES {
            return Err(format!(
                "device `{name}` is the trace's {}th; storlab replays and imports at most {MAX_DEVICES} devices",
                MAX_DEVICES + 1
            ));
        }
        let d = self.devices.len() as u32;
        self.devices.push(name.clone());
        self.index.insert(name, d);
        Ok(d)
    }

    fn line(&mut self, text: &str) -> Result<(), String> {
        match self.format {
            Format::Msr => self.msr(text),
            Format::Blkparse => self.blkparse(text),
        }
    }

    /// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    fn msr(&mut self, text: &str) -> Result<(), String> {
        let f: Vec<&str> = text.split(',').map(str::trim).collect();
        if f.len() != 7 {
            return Err(format!(
                "{} fields; an MSR Cambridge line has 7: Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime",
                f.len()
            ));
        }
        if f[0].eq_ignore_ascii_case("timestamp") {
            return Ok(()); // a header
        }
        let number = |i: usize, what: &str| {
            f[i].parse::<u64>()
                .map_err(|_| format!("{what} `{}` is not a whole number", f[i]))
        };
        let ticks = number(0, "Timestamp")?;
        let write = match f[3].to_ascii_lowercase().as_str() {
            "read" => false,
            "write" => true,
            other => return Err(format!("Type `{other}`: expected Read or Write")),
        };
        let offset = number(4, "Offset")?;
        let len = number(5, "Size")?;
        let len = u32::try_from(len).map_err(|_| format!("Size {len} is over 4 GiB"))?;
        end(offset, len)?;
        let latency = number(6, "ResponseTime")?;
        let latency_ns = (latency.checked_mul(TICK_NS))
            .ok_or_else(|| format!("ResponseTime {latency} is over 2^64 ns"))?;
        let device = self.device(format!("{} disk {}", f[1], f[2]))?;
        self.ios.push(TraceIo {
            t_ns: ticks,
            device,
            write,
            offset,
            len,
            latency_ns: Some(latency_ns),
        });
        Ok(())
    }

    /// `MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT [PROCESS]`.
    fn blkparse(&mut self, text: &str) -> Result<(), String> {
        let f: Vec<&str> = text.split_whitespace().collect();
        let is_event = f.first().is_some_and(|d| {
            let p: Vec<&str> = d.split(',').collect();
            p.len() == 2 && p.iter().all(|x| x.parse::<u32>().is_ok())
        });
        if !is_event {
            return Ok(()); // the summary blkparse prints at the end
        }
        let action = f.get(5).copied().unwrap_or("");
        if action != "Q" && action != "D" {
            return Ok(());
        }
        let rwbs = f.get(6).copied().unwrap_or("");
        let write = match (rwbs.contains('W'), rwbs.contains('R')) {
            (true, _) => true,
            (false, true) => false,
            _ => return Ok(()), // a flush, a discard, a barrier
        };
        if f.len() < 10 || f[8] != "+" {
            return Err(format!(
                "a {action} event without `SECTOR + COUNT`; expected MAJ,MIN CPU SEQ SECONDS PID ACTION RWBS SECTOR + COUNT"
            ));
        }
        let seconds: f64 = (f[3].parse().ok())
            .filter(|s: &f64| (0.0..=MAX_NS as f64 / 1e9).contains(s))
            .ok_or_else(|| format!("time `{}` is not a number of seconds", f[3]))?;
        let sector: u64 = f[7]
            .parse()
            .map_err(|_| format!("sector `{}` is not a whole number", f[7]))?;
        let count: u64 = f[9]
            .parse()
            .map_err(|_| format!("sector count `{}` is not a whole number", f[9]))?;
        let len = (count.checked_mul(SECTOR))
            .and_then(|b| u32::try_from(b).ok())
            .ok_or_else(|| format!("{count} sectors is over 4 GiB"))?;
        let offset = sector
            .checked_mul(SECTOR)
            .ok_or_else(|| format!("sector {sector} is beyond 2^64 bytes"))?;
        end(offset, len)?;
        let device = self.device(f[0].to_string())?;
        let io = TraceIo {
            t_ns: (seconds * 1e9).round() as u64,
            device,
            write,
            offset,
            len,
            latency_ns: None,
        };
        if action == "Q" {
            self.ios.push(io);
        } else {
            self.issued.push(io);
        }
        Ok(())
    }

    /// The trace, its times from its first I/O in ns; an error when it spans more than
    /// [`MAX_NS`] (Windows ticks count from 1601: only their differences are times).
    fn finish(self) -> Result<Trace, String> {
        let mut ios = if self.ios.is_empty() {
            self.issued
        } else {
            self.ios
        };
        ios.retain(|io| io.len > 0);
        ios.sort_by_key(|io| io.t_ns);
        let t0 = ios.first().map_or(0, |io| io.t_ns);
        let scale = match self.format {
            Format::Msr => TICK_NS,
            Format::Blkparse => 1,
        };
        let last = ios.last().map_or(0, |io| io.t_ns);
        if last - t0 > MAX_NS / scale {
            return Err(format!(
                "the trace spans from {t0} to {last} ({}); storlab reads traces of at most {} years",
                match self.format {
                    Format::Msr => "ticks of 100 ns",
                    Format::Blkparse => "ns",
                },
                MAX_NS / 1_000_000_000 / 86_400 / 365
            ));
        }
        for io in &mut ios {
            io.t_ns = (io.t_ns - t0) * scale;
        }
        Ok(Trace {
            ios,
            devices: self.devices,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    #[test]
    fn msr_lines_become_ios_in_ns_from_the_first() {
        let (_d, p) = write(
            "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n\
             128166372003061629,hm,1,Read,383496192,32768,1331\n\
             128166372003071629,hm,1,Write,4096,4096,200\n\
             128166372003081629,web,0,Read,0,512,10\n",
        );
        let (t, _) = read(&p, None).unwrap();
        assert_eq!(t.devices, ["hm disk 1", "web disk 0"]);
        assert_eq!(t.ios.len(), 3);
        assert_eq!(t.ios[0].t_ns, 0);
        assert_eq!(t.ios[1].t_ns, 1_000_000, "10,000 ticks of 100 ns");
        assert_eq!(
            (t.ios[1].write, t.ios[1].offset, t.ios[1].len),
            (true, 4096, 4096)
        );
        assert_eq!(t.ios[0].latency_ns, Some(133_100));
        assert_eq!(t.ios[2].device, 1);
        assert_eq!(t.extent(0), 383496192 + 32768);
    }

    #[test]
    fn blkparse_takes_queue_events_and_skips_the_rest() {
        let (_d, p) = write(
            "  7,1    0        1     0.000000000  100  Q   R 2048 + 8 [storlab]\n\
             \x20 7,1    0        2     0.000001000  100  G   R 2048 + 8 [storlab]\n\
             \x20 7,1    0        3     0.000002000  100  D   R 2048 + 8 [storlab]\n\
             \x20 7,1    1        4     0.000500000  100  Q  WS 16 + 16 [storlab]\n\
             \x20 7,1    1        5     0.000600000  100  Q  FN [storlab]\n\
             \x20 7,1    0        6     0.001000000    0  C   R 2048 + 8 [0]\n\
             CPU0 (7,1):\n Reads Queued:           1,        4KiB\n",
        );
        let (t, _) = read(&p, None).unwrap();
        assert_eq!(t.devices, ["7,1"]);
        let got: Vec<(u64, bool, u64, u32)> = t
            .ios
            .iter()
            .map(|i| (i.t_ns, i.write, i.offset, i.len))
            .collect();
        assert_eq!(
            got,
            [(0, false, 1 << 20, 4096), (500_000, true, 8192, 8192)]
        );
    }

    #[test]
    fn bad_lines_are_named() {
        let (_d, p) =
            write("128166372003061629,hm,1,Read,383496192,32768,1331\n1,hm,1,Erase,0,1,1\n");
        let e = read(&p, None).unwrap_err();
        assert!(
            e.ends_with(":2: Type `erase`: expected Read or Write"),
            "{e}"
        );
        let (_d, p) = write("128166372003061629,hm,1,Read,x,32768,1331\n");
        assert!(
            read(&p, Some(Format::Msr))
                .unwrap_err()
                .contains(":1: Offset `x` is not a whole number")
        );
        let (_d, p) = write("hello world\n");
        assert!(read(&p, None).unwrap_err().contains(":1: neither an MSR"));
        let (_d, p) = write("  8,0 0 1 0.1 5 Q R 100 +\n");
        assert!(
            read(&p, None)
                .unwrap_err()
                .contains(":1: a Q event without")
        );
        let (_d, p) = write("");
        assert!(read(&p, None).unwrap_err().contains("no reads or writes"));
    }

    #[test]
    fn numbers_beyond_any_device_or_time_are_refused_not_wrapped() {
        let (_d, p) = write("1,hm,1,Read,1152921504606846976,4096,1\n");
        let e = read(&p, None).unwrap_err();
        assert!(e.ends_with(":1: offset 1152921504606846976 + size 4096 ends beyond 1 EiB, past the end of any device"), "{e}");
        let (_d, p) = write("1,hm,1,Read,0,4096,184467440737095517\n");
        let e = read(&p, None).unwrap_err();
        assert!(
            e.ends_with(":1: ResponseTime 184467440737095517 is over 2^64 ns"),
            "{e}"
        );
        let (_d, p) = write("  8,0 0 1 0.1 5 Q R 2251799813685248 + 8\n");
        let e = read(&p, None).unwrap_err();
        assert!(e.contains("ends beyond 1 EiB"), "{e}");
        // Windows ticks count from 1601: only a span over 292 years is refused.
        let (_d, p) = write("1,hm,1,Read,0,4096,1\n92233720368547760,hm,1,Read,0,4096,1\n");
        let e = read(&p, None).unwrap_err();
        assert!(e.contains(": the trace spans from 1 to 92233720368547760 (ticks of 100 ns); storlab reads traces of at most 292 years: split it"), "{e}");
    }
}
