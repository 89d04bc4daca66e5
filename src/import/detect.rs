//! Which other tool's job file a text is, from its content: positive evidence only, so that a
//! storlab job with a syntax error is still read, and its error reported, as a storlab job.
//! Each format's function is its entry of [`super::CONVERTERS`]; [`storlab`] comes first.
//! Every function reads at most the first [`MAX_LINES`] lines that are not blank.

/// Lines (not blank) a detection reads at most: a file's marks are near its start.
const MAX_LINES: usize = 4000;

/// Keys a fio job file almost always holds (one of them in a section marks a fio file).
const FIO_KEYS: &[&str] = &[
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "ioengine",
    "iodepth",
    "filename",
    "directory",
    "size",
    "filesize",
    "numjobs",
    "runtime",
    "time_based",
    "direct",
    "buffered",
    "rwmixread",
    "rwmixwrite",
    "rate_iops",
    "ramp_time",
    "stonewall",
    "thinktime",
    "group_reporting",
    "io_size",
    "nrfiles",
];

/// The text's lines that are not blank, trimmed, at most [`MAX_LINES`].
fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MAX_LINES)
}

/// An Iometer file: its `Version ... Iometer` line near the start, or its `'TEST SETUP` or
/// `'ACCESS SPECIFICATIONS` markers.
pub(super) fn iometer(text: &str) -> bool {
    let lower = |l: &str| l.to_ascii_lowercase();
    lines(text).take(20).any(|l| {
        let l = lower(l);
        l.starts_with("version ") && l.contains("iometer") || l.starts_with("'test setup")
    }) || lines(text).any(|l| lower(l).starts_with("'access specifications"))
}

/// A DiskSpd profile: XML whose first lines hold `<Profile>`.
pub(super) fn diskspd(text: &str) -> bool {
    let head: String = lines(text).take(5).collect::<Vec<_>>().join(" ");
    head.starts_with('<') && head.to_ascii_lowercase().contains("<profile")
}

/// A vdbench parameter file: an `rd=` line and a storage, workload or file-system definition
/// (`sd=`, `wd=`, `fsd=`, `fwd=`), comment lines aside.
pub(super) fn vdbench(text: &str) -> bool {
    let starts = |keys: &[&str]| {
        lines(text)
            .filter(|l| !l.starts_with('*') && !l.starts_with('#'))
            .any(|l| {
                let l = l.to_ascii_lowercase();
                keys.iter().any(|k| l.starts_with(k))
            })
    };
    starts(&["rd="]) && starts(&["sd=", "wd=", "fsd=", "fwd="])
}

/// A fio job file: not TOML, no storlab table (`[[worker]]`, `[cycle]`...) or quoted value
/// (see [`storlab`]), a `[section]` and one of fio's common options (`rw=`, `bs=`,
/// `filename=`...).
pub(super) fn fio(text: &str) -> bool {
    let section = lines(text).any(|l| l.starts_with('[') && l.ends_with(']'));
    let fio_key = lines(text).any(|l| {
        let key = l.split('=').next().unwrap_or("").trim();
        FIO_KEYS.contains(&key.to_ascii_lowercase().as_str())
    });
    section && fio_key
}

/// A storlab job (or a broken one, whose errors are storlab's to report): a TOML document,
/// or text with a storlab table (`[[worker]]`, `[cycle]`, `[exchange]`...) or a quoted value.
/// Looked for before any other format's marks but Iometer's, DiskSpd's and vdbench's, which
/// no TOML has.
pub(super) fn storlab(text: &str) -> bool {
    if iometer(text) || diskspd(text) || vdbench(text) {
        return false;
    }
    let marked = lines(text).any(|l| {
        let value = l.split_once('=').map(|(_, v)| v.trim_start());
        l.starts_with("[[")
            || [
                "[cycle]",
                "[exchange]",
                "[users]",
                "[data]",
                "[precondition]",
            ]
            .contains(&l)
            || value.is_some_and(|v| v.starts_with(['"', '\'', '{']))
    });
    marked || toml::from_str::<toml::Table>(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::super::{Format, identify};
    use std::path::Path;

    fn detect(text: &str) -> Option<Format> {
        identify(Path::new("job"), text)
    }

    #[test]
    fn formats_are_told_apart_by_content() {
        let icf = "Version 1.1.0 \n'TEST SETUP ====================================\n";
        assert_eq!(detect(icf), Some(Format::Iometer));
        let xml = "<?xml version=\"1.0\"?>\n<Profile>\n<TimeSpans>";
        assert_eq!(detect(xml), Some(Format::DiskSpd));
        let vd = "* a comment\nsd=sd1,lun=/dev/sdb\nwd=wd1,sd=sd1,xfersize=4k\nrd=run1,wd=wd1,iorate=max,elapsed=60\n";
        assert_eq!(detect(vd), Some(Format::Vdbench));
        let fio = "[global]\nioengine=io_uring\n[job]\nrw=randread\n";
        assert_eq!(detect(fio), Some(Format::Fio));
        let storlab = "duration = \"10s\"\n[[worker]]\nqueue_depth = 8\n";
        assert_eq!(detect(storlab), None);
        // storlab jobs with syntax errors stay storlab's, to be reported as such.
        for broken in [
            "description = \"x\"\n[[worker]]\nqueue_depth = \n",
            "[[worker]]\n[[worker.access]]\nclass =\n",
            "[[target]]\npath=\n",
            "description = \"bad\"\n[job]\nrw = read\n",
            "[exchange]\nmailboxes = 10\n[exchange]\n",
        ] {
            assert_eq!(detect(broken), None, "{broken}");
        }
        assert_eq!(detect("[a]\nfoo=bar\n"), None);
        assert_eq!(detect("hello\n"), None);
    }

    #[test]
    fn a_name_says_the_format_when_the_content_does_not() {
        let broken = "this is not quite right\n";
        assert_eq!(identify(Path::new("a.icf"), broken), Some(Format::Iometer));
        assert_eq!(identify(Path::new("a.XML"), broken), Some(Format::DiskSpd));
        assert_eq!(identify(Path::new("a.vdb"), broken), Some(Format::Vdbench));
        assert_eq!(identify(Path::new("a.fio"), broken), Some(Format::Fio));
        assert_eq!(identify(Path::new("a.txt"), broken), None);
        // A file named .toml is storlab's whatever it holds.
        let fio = "[global]\nioengine=io_uring\n[job]\nrw=randread\n";
        assert_eq!(identify(Path::new("a.toml"), fio), None);
    }
}
