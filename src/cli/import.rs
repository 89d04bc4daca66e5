//! Where a run's job comes from when it is not storlab's own: `storlab import FILE`,
//! `storlab import-fio JOB.fio`, and the job of `storlab run` from a preset, a job file of any
//! format [`crate::import`] converts, `--fio` or `--diskspd`.

use super::{QUICKSTART_FILE, QUICKSTART_JOB, RunArgs};
use crate::import::{self, Converted, Format, ImportError, Options};
use crate::report::console;
use crate::results::JobSource;
use crate::workloads::presets;
use crate::{Usage, exit};
use anyhow::Result;
use std::path::{Path, PathBuf};

/// A job's text and where it came from.
pub(super) struct JobInput {
    /// The name errors give it: the file, `preset:NAME`, `FILE (converted from Iometer)`.
    pub(super) label: PathBuf,
    /// The storlab job (TOML).
    pub(super) text: String,
    /// As recorded in the results.
    pub(super) source: JobSource,
    /// Converted from another tool's file: its format.
    pub(super) converted: Option<Format>,
}

/// Prints what a conversion left out (only with `--lenient`).
fn left_out(converted: &Converted) {
    for u in &converted.left_out {
        console::note(&format!("left out ({}): {}: {}", u.at, u.option, u.why));
    }
}

/// A conversion's error as a usage error (exit 2), prefixed by `flag`.
fn usage(e: ImportError, flag: &str) -> anyhow::Error {
    Usage(format!("{flag}{e}")).into()
}

/// `storlab import-fio`.
pub(super) fn import_fio(path: &Path, lenient: bool, output: Option<&Path>) -> Result<i32> {
    if let Some(out) = output {
        super::output::check("the job", out)?;
    }
    let opts = Options {
        lenient,
        map: Vec::new(),
    };
    let text = import::read(path, Format::Fio).map_err(|e| usage(e, ""))?;
    let converted = import::convert(path, &text, Format::Fio, &opts).map_err(|e| usage(e, ""))?;
    left_out(&converted);
    write_job(&converted.toml, output)
}

/// `storlab import FILE`.
pub(super) fn import(
    path: &Path,
    from: Option<&str>,
    opts: &Options,
    output: Option<&Path>,
) -> Result<i32> {
    if let Some(out) = output {
        super::output::check("the job", out)?;
    }
    let from = format_flag(from)?;
    let (text, format) = read_job(path, from)?;
    if let Some((_, foreign)) = crate::workloads::foreign_of(&text).filter(|_| from.is_none()) {
        return write_job(&(foreign.convert)(path, &text, &opts.map)?, output);
    }
    let Some(format) = format else {
        if looks_like_storlab(path, &text) {
            return Err(Usage(format!(
                "{}: this is a storlab job already: run it with storlab run {}",
                path.display(),
                path.display()
            ))
            .into());
        }
        return Err(Usage(not_convertible(path)).into());
    };
    let converted = import::convert(path, &text, format, opts).map_err(|e| usage(e, ""))?;
    left_out(&converted);
    // A workload's job (vdbench's file-system definitions): checked as `storlab run` loads it.
    if let Some(room) = crate::workloads::room_of(&converted.toml) {
        let label = PathBuf::from(format!("the job converted from {}", path.display()));
        let job = crate::workloads::JobText {
            path: &label,
            text: &converted.toml,
        };
        (room.load)(&job, &Default::default()).map_err(|e| {
            Usage(format!(
                "{}: storlab cannot run what it converts to: {}",
                path.display(),
                crate::units::strip_os_error(&format!("{e:#}"))
            ))
        })?;
    }
    write_job(&converted.toml, output)
}

fn write_job(toml: &str, output: Option<&Path>) -> Result<i32> {
    match output {
        Some(out) if !super::output::is_stdout(out) => {
            crate::files::write_output("the job", out, toml.as_bytes())?;
            console::note(&format!(
                "storlab job: {} (run it with storlab run {})",
                out.display(),
                out.display()
            ));
        }
        _ => console::print_text(toml.trim_end()),
    }
    Ok(exit::OK)
}

/// `--from FORMAT`.
fn format_flag(from: Option<&str>) -> Result<Option<Format>> {
    from.map(|f| {
        Format::parse(f).ok_or_else(|| {
            Usage(format!(
                "--from: `{f}` is not a format storlab converts; formats: {}",
                Format::ALL.map(Format::name).join(", ")
            ))
            .into()
        })
    })
    .transpose()
}

/// A storlab job (or a broken one, whose errors are storlab's to report): named `.toml`, or a
/// TOML document.
fn looks_like_storlab(path: &Path, text: &str) -> bool {
    is_toml(path) || toml::from_str::<toml::Table>(text).is_ok()
}

fn is_toml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
}

/// The job file at `path` as text, and its format when it is another tool's (`from`, or what
/// [`import::identify`] finds): another tool's file is read in any encoding Windows tools
/// write (UTF-16, a byte-order mark, Windows-1252); storlab's own must be UTF-8, as TOML is.
fn read_job(path: &Path, from: Option<Format>) -> Result<(String, Option<Format>)> {
    let bytes = crate::input::read(path, crate::input::Kind::JobFile).map_err(|e| {
        crate::job::JobError {
            location: path.display().to_string(),
            key: String::new(),
            message: e.unnamed(),
        }
    })?;
    let decoded = import::decode(path, &bytes);
    let format = from.or_else(|| {
        let text = decoded.as_ref().ok()?;
        import::identify(path, text)
    });
    match format {
        Some(f) => Ok((decoded.map_err(|e| usage(e, ""))?, Some(f))),
        None => Ok((crate::job::file::decode(path, bytes)?, None)),
    }
}

/// Why `path` is converted by none of the formats.
fn not_convertible(path: &Path) -> String {
    format!(
        "{}: not a job file storlab can convert: none of fio, Iometer (.icf), DiskSpd (XML profile) or vdbench; name its format with --from {}",
        path.display(),
        Format::ALL.map(Format::name).join("|")
    )
}

/// The job `storlab run` was given: a preset, a job file (converted when it is another tool's),
/// `--fio`, `--diskspd`, or none (the quickstart job, or a one-line job from `--target`).
pub(super) fn job_input(args: &RunArgs) -> Result<Option<JobInput>> {
    let from = format_flag(args.from.as_deref())?;
    let opts = Options {
        lenient: args.lenient,
        map: args.map.clone(),
    };
    let convertible = args.fio.is_some() || args.diskspd.is_some() || from.is_some();
    if let Some(path) = &args.fio {
        let text = import::read(path, Format::Fio).map_err(|e| usage(e, "--fio: "))?;
        let converted =
            import::convert(path, &text, Format::Fio, &opts).map_err(|e| usage(e, "--fio: "))?;
        left_out(&converted);
        return Ok(Some(JobInput {
            label: PathBuf::from(format!("{} (converted from fio)", path.display())),
            text: converted.toml,
            source: JobSource::File {
                path: path.display().to_string(),
            },
            converted: Some(Format::Fio),
        }));
    }
    if let Some(line) = &args.diskspd {
        let converted =
            import::convert_diskspd_line(line, &opts).map_err(|e| usage(e, "--diskspd: "))?;
        left_out(&converted);
        return Ok(Some(JobInput {
            label: PathBuf::from("DiskSpd command line (converted)"),
            text: converted.toml,
            source: JobSource::Imported {
                format: Format::DiskSpd.name().into(),
                from: line.trim().to_string(),
            },
            converted: Some(Format::DiskSpd),
        }));
    }
    let input = match (&args.job, &args.preset) {
        (_, Some(name)) => {
            let p = presets::find(name).ok_or_else(|| {
                let all: Vec<&str> = presets::PRESETS.iter().map(|p| p.name).collect();
                Usage(presets::unknown(name, "", &all))
            })?;
            Some(JobInput {
                label: PathBuf::from(format!("preset:{name}")),
                text: p.toml.to_string(),
                source: JobSource::Preset { name: name.clone() },
                converted: None,
            })
        }
        (Some(path), None) => {
            let (text, format) = read_job(path, from)?;
            let foreign = crate::workloads::foreign_of(&text).filter(|_| from.is_none());
            Some(match (foreign, format) {
                // A room's own foreign file (Jetstress's): run as the room's command runs it.
                (Some((room, f)), _) => {
                    let command = room.subcommand.as_ref().map_or("run", |s| s.name);
                    console::note(&format!(
                        "{}: {} file, run as storlab {command} runs it (see the job with storlab import {})",
                        path.display(),
                        f.tool,
                        path.display()
                    ));
                    JobInput {
                        label: PathBuf::from(format!(
                            "{} (converted from {})",
                            path.display(),
                            f.tool
                        )),
                        text: (f.convert)(path, &text, &opts.map)?,
                        source: JobSource::Imported {
                            format: f.format.into(),
                            from: path.display().to_string(),
                        },
                        converted: None,
                    }
                }
                (None, None) => JobInput {
                    label: path.clone(),
                    text,
                    source: JobSource::File {
                        path: path.display().to_string(),
                    },
                    converted: None,
                },
                (None, Some(format)) => {
                    let converted =
                        import::convert(path, &text, format, &opts).map_err(|e| usage(e, ""))?;
                    left_out(&converted);
                    console::note(&format!(
                        "{}: {} file, converted (see it with storlab import {})",
                        path.display(),
                        format.tool(),
                        path.display()
                    ));
                    JobInput {
                        label: PathBuf::from(format!(
                            "{} (converted from {})",
                            path.display(),
                            format.tool()
                        )),
                        text: converted.toml,
                        source: JobSource::Imported {
                            format: format.name().into(),
                            from: path.display().to_string(),
                        },
                        converted: Some(format),
                    }
                }
            })
        }
        (None, None) if args.targets.is_empty() => Some(JobInput {
            label: PathBuf::from("quickstart.toml"),
            text: QUICKSTART_JOB.to_string(),
            source: JobSource::Default {
                file: QUICKSTART_FILE.into(),
            },
            converted: None,
        }),
        (None, None) => None,
    };
    let converted = (input.as_ref())
        .is_some_and(|i| i.converted.is_some() || matches!(i.source, JobSource::Imported { .. }));
    if !converted && (args.lenient || !args.map.is_empty()) && !convertible {
        let flag = if args.lenient { "--lenient" } else { "--map" };
        return Err(Usage(format!(
            "{flag} applies to another tool's job file (fio, Iometer, DiskSpd, vdbench) or --diskspd; this job is storlab's own: leave {flag} out"
        ))
        .into());
    }
    Ok(input)
}
