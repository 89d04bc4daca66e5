//! Host figures: storlab's own CPU time and the whole machine's from `/proc`, block-device
//! counters from `/sys/block`, and static facts about the host and the filesystem under a path.
//! Pure reads of kernel files: nothing here depends on the rest of the crate. The mount table
//! and swap list (`/proc/self/mountinfo`, `/proc/swaps`) are parsed in [`mounts`], block devices
//! are read from sysfs in [`sysfs`], the holders of file locks (`/proc/locks`) in [`locks`];
//! nothing else in the crate parses those files.

pub(crate) mod cgroup;
pub(crate) mod cpus;
pub(crate) mod kthreads;
pub(crate) mod locks;
pub(crate) mod mounts;
pub(crate) mod sysfs;

use serde::{Deserialize, Serialize};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A device number, as `st_dev`/`st_rdev` carry it and `/proc` and `/sys` write it (`8:2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct DeviceNumber {
    /// Major number (the driver).
    pub major: u32,
    /// Minor number (the device or partition of that driver).
    pub minor: u32,
}

impl DeviceNumber {
    /// The number packed in a `st_dev` or `st_rdev`.
    pub(crate) fn of(dev: u64) -> DeviceNumber {
        DeviceNumber {
            major: rustix::fs::major(dev),
            minor: rustix::fs::minor(dev),
        }
    }

    /// Parses `MAJOR:MINOR`.
    pub(crate) fn parse(text: &str) -> Option<DeviceNumber> {
        let (major, minor) = text.trim().split_once(':')?;
        Some(DeviceNumber {
            major: major.parse().ok()?,
            minor: minor.parse().ok()?,
        })
    }
}

impl std::fmt::Display for DeviceNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.major, self.minor)
    }
}

/// Static facts about the machine, recorded once per run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostInfo {
    /// Host name (`/proc/sys/kernel/hostname`).
    pub hostname: String,
    /// Kernel release (`uname -r`).
    pub kernel: String,
    /// CPU model name from `/proc/cpuinfo`.
    pub cpu_model: String,
    /// Number of online CPUs.
    pub cpus: u32,
    /// Total memory in bytes (`MemTotal`).
    pub memory_bytes: u64,
}

/// Reads [`HostInfo`]; fields that cannot be read are left empty or zero.
pub(crate) fn host_info() -> HostInfo {
    let uname = rustix::system::uname();
    let kernel_file = |name: &str, fallback: &std::ffi::CStr| {
        sysfs::read_trimmed(&Path::new("/proc/sys/kernel").join(name))
            .unwrap_or_else(|| fallback.to_string_lossy().into_owned())
    };
    let cpuinfo = read(Path::new("/proc/cpuinfo")).unwrap_or_default();
    let cpus = read(Path::new("/sys/devices/system/cpu/online"))
        .and_then(|s| parse_cpu_list(&s))
        .unwrap_or_else(|| count_processors(&cpuinfo));
    HostInfo {
        hostname: kernel_file("hostname", uname.nodename()),
        kernel: kernel_file("osrelease", uname.release()),
        cpu_model: parse_cpu_model(&cpuinfo).unwrap_or_default(),
        cpus,
        memory_bytes: read(Path::new("/proc/meminfo"))
            .and_then(|s| parse_mem_total(&s))
            .unwrap_or(0),
    }
}

/// Where a path lives: its filesystem and, when there is one, its block device.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Placement {
    /// Filesystem type (`ext4`, `tmpfs`, `btrfs`...), or `block device` for a device node.
    pub filesystem: String,
    /// Mount point of that filesystem, when the path is a file.
    pub mount_point: Option<PathBuf>,
    /// Mount options, e.g. `rw,relatime,compress=zstd` (used to warn about compression).
    pub mount_options: String,
    /// Kernel name of the block device (`sda`, `nvme0n1p2`, `loop3`), when there is one.
    pub device: Option<String>,
    /// Device model from sysfs (`device/model`), when known.
    pub device_model: Option<String>,
}

/// Finds the filesystem and block device under `path` (a file, directory or device node).
pub(crate) fn placement(path: &Path) -> Placement {
    let Some(canonical) = canonical_existing(path) else {
        return Placement::default();
    };
    let Ok(meta) = std::fs::metadata(&canonical) else {
        return Placement::default();
    };
    if meta.file_type().is_block_device() {
        let device = sysfs::block_name(DeviceNumber::of(meta.rdev()));
        return Placement {
            filesystem: "block device".to_string(),
            device_model: device.as_deref().and_then(sysfs::device_model),
            device,
            ..Placement::default()
        };
    }
    let mounts = mounts::mounts();
    let dev = DeviceNumber::of(meta.dev());
    let Some(mount) = mounts::find_mount(&mounts, dev, &canonical) else {
        return Placement {
            device: sysfs::block_name(dev),
            ..Placement::default()
        };
    };
    let device =
        sysfs::block_name(dev).or_else(|| mount.source_device().and_then(sysfs::block_name));
    Placement {
        filesystem: mount.fstype.clone(),
        mount_point: Some(mount.mount_point.clone()),
        mount_options: mount.options.clone(),
        device_model: device.as_deref().and_then(sysfs::device_model),
        device,
    }
}

/// One reading of `/sys/block/<dev>/stat` (or `/sys/class/block/<part>/stat`).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
pub(crate) struct DiskCounters {
    /// Reads completed.
    pub reads: u64,
    /// Sectors read (512 bytes each, whatever the device's block size).
    pub read_sectors: u64,
    /// Milliseconds spent reading.
    pub read_ms: u64,
    /// Writes completed.
    pub writes: u64,
    /// Sectors written (512 bytes each).
    pub write_sectors: u64,
    /// Milliseconds spent writing.
    pub write_ms: u64,
    /// I/Os currently in flight.
    pub in_flight: u64,
    /// Milliseconds the device had I/O in flight (busy time).
    pub io_ticks_ms: u64,
    /// Flush requests completed (0 on kernels that do not report them).
    pub flushes: u64,
}

/// Reads the counters of block device `name` (kernel name as in [`Placement::device`]).
pub(crate) fn disk_counters(name: &str) -> Option<DiskCounters> {
    parse_disk_stat(&sysfs::block_stat(name)?)
}

/// Cumulative CPU times, in nanoseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct CpuTimes {
    /// This process, user mode.
    pub process_user_ns: u64,
    /// This process, kernel mode.
    pub process_system_ns: u64,
    /// Whole machine (all CPUs summed), user + nice.
    pub system_user_ns: u64,
    /// Whole machine, system + irq + softirq.
    pub system_system_ns: u64,
    /// Whole machine, iowait.
    pub system_iowait_ns: u64,
    /// Whole machine, idle.
    pub system_idle_ns: u64,
    /// Whole machine, everything (for percentages).
    pub system_total_ns: u64,
    /// Whole machine: time some task was ready to run but waited for a CPU
    /// (`/proc/pressure/cpu`, `some total`), ns; `None` without pressure stall information.
    pub cpu_pressure_ns: Option<u64>,
}

/// storlab's own CPU time so far (every thread, user and kernel), seconds: what a phase used
/// is the difference of two readings.
pub(crate) fn process_cpu_s() -> f64 {
    let t = cpu_times();
    (t.process_user_ns + t.process_system_ns) as f64 / 1e9
}

/// Reads [`CpuTimes`] from `/proc/self/stat`, `/proc/stat` and `/proc/pressure/cpu`.
pub(crate) fn cpu_times() -> CpuTimes {
    let hz = rustix::param::clock_ticks_per_second();
    let (user, system) = read(Path::new("/proc/self/stat"))
        .and_then(|s| parse_self_stat(&s))
        .unwrap_or_default();
    let machine = read(Path::new("/proc/stat"))
        .and_then(|s| parse_proc_stat(&s))
        .unwrap_or_default();
    let ns = |ticks: u64| ticks_to_ns(ticks, hz);
    CpuTimes {
        process_user_ns: ns(user),
        process_system_ns: ns(system),
        system_user_ns: ns(machine.user),
        system_system_ns: ns(machine.system),
        system_iowait_ns: ns(machine.iowait),
        system_idle_ns: ns(machine.idle),
        system_total_ns: ns(machine.total),
        cpu_pressure_ns: read(Path::new("/proc/pressure/cpu"))
            .and_then(|s| parse_pressure(&s))
            .map(|us| us * 1000),
    }
}

/// The `some` line's `total=` (µs) of a pressure file.
fn parse_pressure(text: &str) -> Option<u64> {
    let some = text.lines().find(|l| l.starts_with("some "))?;
    let total = some
        .split_whitespace()
        .find_map(|w| w.strip_prefix("total="))?;
    total.parse().ok()
}

/// CPU use over an interval, in percent.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CpuPercent {
    /// storlab's user time as a percentage of one CPU (200 = two CPUs busy).
    pub process_user_pct: f64,
    /// storlab's kernel time as a percentage of one CPU.
    pub process_system_pct: f64,
    /// Whole machine user time, percent of all CPUs.
    pub system_user_pct: f64,
    /// Whole machine kernel time, percent of all CPUs.
    pub system_system_pct: f64,
    /// Whole machine iowait, percent of all CPUs.
    pub system_iowait_pct: f64,
    /// Whole machine idle, percent of all CPUs.
    pub system_idle_pct: f64,
    /// Share of the time some task on the machine was ready to run and waited for a CPU
    /// (pressure stall information, `/proc/pressure/cpu`), percent; absent where the kernel
    /// has none (schema 1.18).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_cpu_pressure_pct: Option<f64>,
}

impl CpuPercent {
    /// The average of `parts`, each weighted by its `f64` (e.g. its duration).
    pub(crate) fn weighted(parts: impl IntoIterator<Item = (CpuPercent, f64)>) -> CpuPercent {
        let mut out = CpuPercent::default();
        let mut total = 0.0;
        for (c, w) in parts {
            total += w;
            out.process_user_pct += c.process_user_pct * w;
            out.process_system_pct += c.process_system_pct * w;
            out.system_user_pct += c.system_user_pct * w;
            out.system_system_pct += c.system_system_pct * w;
            out.system_iowait_pct += c.system_iowait_pct * w;
            out.system_idle_pct += c.system_idle_pct * w;
            if let Some(p) = c.system_cpu_pressure_pct {
                *out.system_cpu_pressure_pct.get_or_insert(0.0) += p * w;
            }
        }
        if total > 0.0 {
            for v in [
                &mut out.process_user_pct,
                &mut out.process_system_pct,
                &mut out.system_user_pct,
                &mut out.system_system_pct,
                &mut out.system_iowait_pct,
                &mut out.system_idle_pct,
            ] {
                *v /= total;
            }
            if let Some(p) = out.system_cpu_pressure_pct.as_mut() {
                *p /= total;
            }
        }
        out
    }

    /// storlab's own CPU: user and kernel time, percent of one CPU (above 100 when it kept
    /// more than one CPU busy).
    pub(crate) fn process_pct(&self) -> f64 {
        self.process_user_pct + self.process_system_pct
    }

    /// The machine's busy share: user and kernel time (nice, irq and softirq in them), percent
    /// of all CPUs. Iowait is not busy: it is idle time with I/O pending, in
    /// [`CpuPercent::machine_idle_pct`].
    pub(crate) fn machine_busy_pct(&self) -> f64 {
        self.system_user_pct + self.system_system_pct
    }

    /// `; 26.2% of it waiting for I/O (iowait: ...)` when the machine waited for I/O (half a
    /// percent or more), else nothing: what every view adds after the busy and idle shares.
    pub(crate) fn iowait_note(&self) -> String {
        if self.system_iowait_pct >= 0.5 {
            format!(
                "; {} of it waiting for I/O (iowait: idle time with I/O pending, not load)",
                crate::units::format_pct(self.system_iowait_pct)
            )
        } else {
            String::new()
        }
    }

    /// The machine's idle share, iowait included, percent of all CPUs.
    pub(crate) fn machine_idle_pct(&self) -> f64 {
        self.system_idle_pct + self.system_iowait_pct
    }

    /// CPU use between two readings taken `wall_ns` nanoseconds apart.
    pub(crate) fn between(before: &CpuTimes, after: &CpuTimes, wall_ns: u64) -> CpuPercent {
        let of_wall = |a: u64, b: u64| percent(a.saturating_sub(b), wall_ns);
        let total = after.system_total_ns.saturating_sub(before.system_total_ns);
        let of_total = |a: u64, b: u64| percent(a.saturating_sub(b), total);
        CpuPercent {
            process_user_pct: of_wall(after.process_user_ns, before.process_user_ns),
            process_system_pct: of_wall(after.process_system_ns, before.process_system_ns),
            system_user_pct: of_total(after.system_user_ns, before.system_user_ns),
            system_system_pct: of_total(after.system_system_ns, before.system_system_ns),
            system_iowait_pct: of_total(after.system_iowait_ns, before.system_iowait_ns),
            system_idle_pct: of_total(after.system_idle_ns, before.system_idle_ns),
            system_cpu_pressure_pct: (before.cpu_pressure_ns)
                .zip(after.cpu_pressure_ns)
                .map(|(b, a)| of_wall(a, b).min(100.0)),
        }
    }
}

/// What a block device did over an interval: the difference of two [`DiskCounters`].
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DiskDelta {
    /// Reads completed.
    pub reads: u64,
    /// Writes completed.
    pub writes: u64,
    /// Bytes read (sectors × 512).
    pub read_bytes: u64,
    /// Bytes written (sectors × 512).
    pub write_bytes: u64,
    /// Flushes completed.
    pub flushes: u64,
    /// Busy time in milliseconds.
    pub busy_ms: u64,
    /// Busy time as a percentage of the interval.
    pub util_pct: f64,
    /// Mean time per read in the device queue, milliseconds (read_ms / reads).
    pub read_await_ms: f64,
    /// Mean time per write in the device queue, milliseconds.
    pub write_await_ms: f64,
}

impl DiskDelta {
    /// Adds the activity of `other` (a later interval or run): counts add, mean queue times
    /// are weighted by their operations. `util_pct` is left as it is: it depends on the wall
    /// time the sum covers.
    pub(crate) fn add(&mut self, other: &DiskDelta) {
        let weighted = |a: f64, na: u64, b: f64, nb: u64| {
            (a * na as f64 + b * nb as f64) / (na + nb).max(1) as f64
        };
        self.read_await_ms = weighted(
            self.read_await_ms,
            self.reads,
            other.read_await_ms,
            other.reads,
        );
        self.write_await_ms = weighted(
            self.write_await_ms,
            self.writes,
            other.write_await_ms,
            other.writes,
        );
        self.reads += other.reads;
        self.writes += other.writes;
        self.read_bytes += other.read_bytes;
        self.write_bytes += other.write_bytes;
        self.flushes += other.flushes;
        self.busy_ms += other.busy_ms;
    }

    /// The device's activity between two readings taken `wall_ns` nanoseconds apart.
    pub(crate) fn between(before: &DiskCounters, after: &DiskCounters, wall_ns: u64) -> DiskDelta {
        let reads = after.reads.saturating_sub(before.reads);
        let writes = after.writes.saturating_sub(before.writes);
        let busy_ms = after.io_ticks_ms.saturating_sub(before.io_ticks_ms);
        let mean = |ms: u64, count: u64| {
            if count == 0 {
                0.0
            } else {
                ms as f64 / count as f64
            }
        };
        DiskDelta {
            reads,
            writes,
            read_bytes: after
                .read_sectors
                .saturating_sub(before.read_sectors)
                .saturating_mul(512),
            write_bytes: after
                .write_sectors
                .saturating_sub(before.write_sectors)
                .saturating_mul(512),
            flushes: after.flushes.saturating_sub(before.flushes),
            busy_ms,
            util_pct: percent(busy_ms.saturating_mul(1_000_000), wall_ns).min(100.0),
            read_await_ms: mean(after.read_ms.saturating_sub(before.read_ms), reads),
            write_await_ms: mean(after.write_ms.saturating_sub(before.write_ms), writes),
        }
    }
}

/// `part` as a percentage of `whole`, 0 when `whole` is 0.
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64 * 100.0
    }
}

fn ticks_to_ns(ticks: u64, hz: u64) -> u64 {
    if hz == 0 {
        return 0;
    }
    u64::try_from(u128::from(ticks) * 1_000_000_000 / u128::from(hz)).unwrap_or(u64::MAX)
}

fn read(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

/// Counts the CPUs in a list such as `0-3,6,8-9`.
fn parse_cpu_list(list: &str) -> Option<u32> {
    let mut count = 0u32;
    for part in list.trim().split(',').filter(|p| !p.is_empty()) {
        let (lo, hi) = part.split_once('-').unwrap_or((part, part));
        let (lo, hi): (u32, u32) = (lo.trim().parse().ok()?, hi.trim().parse().ok()?);
        count = count.saturating_add(hi.checked_sub(lo)?.saturating_add(1));
    }
    (count > 0).then_some(count)
}

fn cpuinfo_values<'a>(cpuinfo: &'a str, key: &'a str) -> impl Iterator<Item = &'a str> {
    cpuinfo.lines().filter_map(move |line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim())
    })
}

fn count_processors(cpuinfo: &str) -> u32 {
    let n = cpuinfo_values(cpuinfo, "processor").count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Processor", "cpu model", "Hardware"]
        .iter()
        .find_map(|key| cpuinfo_values(cpuinfo, key).find(|v| !v.is_empty()))
        .map(str::to_string)
}

fn parse_mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find_map(|l| l.strip_prefix("MemTotal:"))?;
    let mut words = line.split_whitespace();
    let value: u64 = words.next()?.parse().ok()?;
    let unit = match words.next() {
        Some("kB") => 1024,
        None => 1,
        Some(_) => return None,
    };
    Some(value.saturating_mul(unit))
}

/// `path` canonicalized, or its nearest existing ancestor when it does not exist.
fn canonical_existing(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .map(|p| {
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            }
        })
        .find_map(|p| std::fs::canonicalize(p).ok())
}

fn parse_disk_stat(text: &str) -> Option<DiskCounters> {
    let fields = text
        .split_whitespace()
        .map(|f| f.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    if fields.len() < 11 {
        return None;
    }
    Some(DiskCounters {
        reads: fields[0],
        read_sectors: fields[2],
        read_ms: fields[3],
        writes: fields[4],
        write_sectors: fields[6],
        write_ms: fields[7],
        in_flight: fields[8],
        io_ticks_ms: fields[9],
        flushes: fields.get(15).copied().unwrap_or(0),
    })
}

/// `(utime, stime)` in clock ticks from a `/proc/PID/stat` line.
fn parse_self_stat(text: &str) -> Option<(u64, u64)> {
    let (_, rest) = text.rsplit_once(')')?;
    let mut fields = rest.split_whitespace().skip(11);
    Some((fields.next()?.parse().ok()?, fields.next()?.parse().ok()?))
}

/// Whole-machine times from `/proc/stat`, in clock ticks.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct MachineTicks {
    user: u64,
    system: u64,
    iowait: u64,
    idle: u64,
    total: u64,
}

fn parse_proc_stat(text: &str) -> Option<MachineTicks> {
    let line = text.lines().find_map(|l| l.strip_prefix("cpu "))?;
    let mut v = [0u64; 8];
    for (slot, field) in v.iter_mut().zip(line.split_whitespace()) {
        *slot = field.parse().ok()?;
    }
    let [user, nice, system, idle, iowait, irq, softirq, _steal] = v;
    Some(MachineTicks {
        user: user.saturating_add(nice),
        system: system.saturating_add(irq).saturating_add(softirq),
        iowait,
        idle,
        total: v.iter().fold(0u64, |a, b| a.saturating_add(*b)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn self_stat_comm_with_parentheses_and_spaces() {
        let line = "4242 (evil ) (name) S 1 4242 4242 0 -1 4194560 1200 0 3 0 \
                    731 58 0 0 20 0 3 0 123456 1000000 500 18446744073709551615\n";
        assert_eq!(parse_self_stat(line), Some((731, 58)));
        assert_eq!(parse_self_stat("4242 (truncated) S 1 2"), None);
        assert_eq!(parse_self_stat("no paren at all"), None);
    }

    #[test]
    fn disk_stat_with_11_15_and_17_fields() {
        let eleven = "  100 5 2000 40 300 7 6000 90 2 120 130\n";
        let c = parse_disk_stat(eleven).unwrap();
        assert_eq!(
            c,
            DiskCounters {
                reads: 100,
                read_sectors: 2000,
                read_ms: 40,
                writes: 300,
                write_sectors: 6000,
                write_ms: 90,
                in_flight: 2,
                io_ticks_ms: 120,
                flushes: 0,
            }
        );
        let fifteen = format!("{} 11 0 88 4", eleven.trim());
        assert_eq!(parse_disk_stat(&fifteen), Some(c));
        let seventeen = format!("{fifteen} 57 31");
        assert_eq!(parse_disk_stat(&seventeen).unwrap().flushes, 57);
        assert_eq!(parse_disk_stat("1 2 3 4 5 6 7 8 9 10"), None);
        assert_eq!(parse_disk_stat("1 2 3 4 5 6 7 8 9 10 x"), None);
        assert_eq!(parse_disk_stat(""), None);
    }

    #[test]
    fn proc_stat_machine_line() {
        let text = "cpu  10 2 30 400 5 6 7 8 9 10\ncpu0 1 1 1 1 1 1 1 1 1 1\nintr 1\n";
        assert_eq!(
            parse_proc_stat(text),
            Some(MachineTicks {
                user: 12,
                system: 43,
                iowait: 5,
                idle: 400,
                total: 10 + 2 + 30 + 400 + 5 + 6 + 7 + 8,
            })
        );
        assert_eq!(parse_proc_stat("cpu0 1 2 3\n"), None);
        assert_eq!(ticks_to_ns(250, 100), 2_500_000_000);
        assert_eq!(ticks_to_ns(5, 0), 0);
    }

    #[test]
    fn helpers_on_odd_input() {
        assert_eq!(parse_cpu_list("0-3,6,8-9\n"), Some(7));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list(""), None);
        assert_eq!(
            parse_mem_total("MemFree: 1 kB\nMemTotal:  2048 kB\n"),
            Some(2 * 1024 * 1024)
        );
        assert_eq!(parse_mem_total("MemFree: 1 kB\n"), None);
        let cpuinfo = "processor\t: 0\nmodel name\t: Fancy CPU @ 3GHz\n\nprocessor\t: 1\nmodel name\t: Fancy CPU @ 3GHz\n";
        assert_eq!(count_processors(cpuinfo), 2);
        assert_eq!(
            parse_cpu_model(cpuinfo).as_deref(),
            Some("Fancy CPU @ 3GHz")
        );
        assert_eq!(disk_counters("../../etc"), None);
        assert_eq!(disk_counters("no-such-disk"), None);
    }

    #[test]
    fn percentages() {
        let before = CpuTimes {
            process_user_ns: 1_000_000_000,
            system_user_ns: 100,
            system_idle_ns: 100,
            system_total_ns: 1000,
            ..CpuTimes::default()
        };
        let after = CpuTimes {
            process_user_ns: 3_000_000_000,
            process_system_ns: 500_000_000,
            system_user_ns: 350,
            system_idle_ns: 850,
            system_total_ns: 2000,
            ..CpuTimes::default()
        };
        let p = CpuPercent::between(&before, &after, 1_000_000_000);
        assert_eq!(p.process_user_pct, 200.0);
        assert_eq!(p.process_system_pct, 50.0);
        assert_eq!(p.system_user_pct, 25.0);
        assert_eq!(p.system_idle_pct, 75.0);
        assert_eq!(
            CpuPercent::between(&before, &after, 0).process_user_pct,
            0.0
        );
        assert_eq!(CpuPercent::between(&after, &before, 1).system_user_pct, 0.0);
        assert_eq!(p.system_cpu_pressure_pct, None);
        let (b, a) = (
            CpuTimes {
                cpu_pressure_ns: Some(1_000_000),
                ..before
            },
            CpuTimes {
                cpu_pressure_ns: Some(251_000_000),
                ..after
            },
        );
        let p = CpuPercent::between(&b, &a, 1_000_000_000);
        assert_eq!(p.system_cpu_pressure_pct, Some(25.0));
        let file = "some avg10=1.00 avg60=0.50 avg300=0.10 total=157543876\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
        assert_eq!(parse_pressure(file), Some(157_543_876));
        // Busy is user and kernel time; iowait is idle time with I/O pending, not busy.
        let c = CpuPercent {
            process_user_pct: 80.0,
            process_system_pct: 40.0,
            system_user_pct: 20.0,
            system_system_pct: 10.0,
            system_iowait_pct: 67.0,
            system_idle_pct: 3.0,
            system_cpu_pressure_pct: None,
        };
        assert_eq!(c.process_pct(), 120.0);
        assert_eq!(c.machine_busy_pct(), 30.0);
        assert_eq!(c.machine_idle_pct(), 70.0);

        let d0 = DiskCounters {
            reads: 10,
            read_ms: 5,
            io_ticks_ms: 100,
            ..DiskCounters::default()
        };
        let d1 = DiskCounters {
            reads: 14,
            read_ms: 25,
            read_sectors: 8,
            writes: 3,
            write_sectors: 16,
            io_ticks_ms: 600,
            flushes: 2,
            ..DiskCounters::default()
        };
        let d = DiskDelta::between(&d0, &d1, 2_000_000_000);
        assert_eq!((d.reads, d.writes, d.flushes, d.busy_ms), (4, 3, 2, 500));
        assert_eq!((d.read_bytes, d.write_bytes), (4096, 8192));
        assert_eq!(d.util_pct, 25.0);
        assert_eq!((d.read_await_ms, d.write_await_ms), (5.0, 0.0));
        assert_eq!(DiskDelta::between(&d0, &d1, 100_000_000).util_pct, 100.0);
        assert_eq!(DiskDelta::between(&d0, &d1, 0).util_pct, 0.0);
        assert_eq!(DiskDelta::between(&d1, &d0, 1), DiskDelta::default());
    }

    #[test]
    fn live_host_info() {
        let info = host_info();
        assert!(info.cpus >= 1);
        assert!(info.memory_bytes > 0);
        assert!(!info.kernel.is_empty());
    }

    #[test]
    fn live_placement_of_root() {
        let root = placement(Path::new("/"));
        assert!(!root.filesystem.is_empty());
        assert_eq!(root.mount_point.as_deref(), Some(Path::new("/")));
    }

    #[test]
    fn live_placement_of_tmpfs_and_missing_path() {
        let mounts = mounts::mounts();
        let Some(dir) = ["/dev/shm", "/run"].into_iter().map(Path::new).find(|d| {
            let p = canonical_existing(d);
            mounts
                .iter()
                .rev()
                .find(|m| Some(&m.mount_point) == p.as_ref())
                .is_some_and(|m| m.fstype == "tmpfs")
        }) else {
            return;
        };
        for path in [dir.to_path_buf(), dir.join("storlab-missing/deeper/file")] {
            let p = placement(&path);
            assert_eq!(p.filesystem, "tmpfs", "{path:?}");
            assert_eq!(p.device, None);
            assert_eq!(p.mount_point.as_deref(), Some(dir));
        }
    }

    #[test]
    fn live_placement_of_block_device_node() {
        let Ok(entries) = std::fs::read_dir("/sys/class/block") else {
            return;
        };
        let Some(name) = entries
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find(|n| Path::new("/dev").join(n).exists())
        else {
            return;
        };
        let p = placement(&Path::new("/dev").join(&name));
        assert_eq!(p.filesystem, "block device");
        assert_eq!(p.device.as_deref(), Some(name.as_str()));
        assert_eq!(p.mount_point, None);
        assert!(disk_counters(&name).is_some());
    }

    #[test]
    fn live_cpu_times_increase() {
        let before = cpu_times();
        assert!(before.system_total_ns > 0);
        let start = std::time::Instant::now();
        let mut x = 0u64;
        let mut after = before;
        while after.process_user_ns + after.process_system_ns
            <= before.process_user_ns + before.process_system_ns
            && start.elapsed() < std::time::Duration::from_secs(10)
        {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
            }
            after = cpu_times();
        }
        assert!(
            after.process_user_ns + after.process_system_ns
                > before.process_user_ns + before.process_system_ns
        );
        assert!(after.system_total_ns >= before.system_total_ns);
    }
}
