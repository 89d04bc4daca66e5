//! io_uring's paths: the set-up flags a ring asks for (polled completions, a submission
//! polling thread, a single issuer, deferred or cooperative task work), the order they are
//! given up in when the kernel refuses a ring, and what the results record of them
//! ([`RingPaths`]). The ring itself, with its registrations, is [`super::ring`].

use crate::job::uring::{SqPoll, TaskRun, UringOptions};
use io_uring::IoUring;
use std::io;

/// Which of io_uring's paths a ring uses, and why any asked for (or tried by default) is not
/// used: what the results record for each worker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RingPaths {
    /// The paths used: `fixed_files`, `fixed_buffers`, `registered_ring`, `single_issuer`,
    /// `defer_taskrun`, `coop_taskrun`, `sqpoll`, `iopoll`.
    pub used: Vec<&'static str>,
    /// The paths asked for or tried by default and not used: (path, why).
    pub not_used: Vec<(&'static str, String)>,
    /// CPU time of the ring's submission polling thread, ns (with `sqpoll`).
    pub sqpoll_cpu_ns: Option<u64>,
}

/// The set-up flags of one attempt to create a ring.
#[derive(Debug, Clone, Copy)]
pub(super) struct Setup {
    pub(super) iopoll: bool,
    pub(super) sqpoll: Option<SqPoll>,
    pub(super) single_issuer: bool,
    pub(super) defer: bool,
    pub(super) coop: bool,
    /// `task_run = "auto"`: refused deferred task work falls back to cooperative.
    auto: bool,
}

impl Setup {
    /// What `o` asks for. `auto` is the fastest the kernel has: deferred task work with a
    /// single issuer (docs/performance.md, "Ring set-up"); with a submission polling thread
    /// neither deferred nor cooperative task work is allowed (the thread runs it).
    pub(super) fn asked(o: &UringOptions) -> Setup {
        let (single_issuer, defer, coop) = match o.task_run {
            TaskRun::Auto if o.sqpoll.is_some() => (true, false, false),
            TaskRun::Auto | TaskRun::Defer => (true, true, false),
            TaskRun::Coop => (false, false, true),
            TaskRun::Plain => (false, false, false),
        };
        Setup {
            iopoll: o.poll,
            sqpoll: o.sqpoll,
            single_issuer,
            defer,
            coop,
            auto: o.task_run == TaskRun::Auto,
        }
    }

    /// Turns off the next path after the kernel refused a ring with all of them; `None` when
    /// nothing is left to turn off.
    pub(super) fn drop_one(&mut self) -> Option<(&'static str, &'static str)> {
        if self.defer {
            self.defer = false;
            self.coop = self.auto;
            Some(("defer_taskrun", "Linux 6.1"))
        } else if self.coop {
            self.coop = false;
            Some(("coop_taskrun", "Linux 5.19"))
        } else if self.single_issuer {
            self.single_issuer = false;
            Some(("single_issuer", "Linux 6.0"))
        } else if self.sqpoll.is_some() {
            self.sqpoll = None;
            Some((
                "sqpoll",
                "Linux 5.11 without privileges; sqpoll_cpu must be an online CPU",
            ))
        } else if self.iopoll {
            self.iopoll = false;
            Some(("iopoll", "Linux 5.1"))
        } else {
            None
        }
    }

    pub(super) fn build(&self, entries: u32) -> io::Result<IoUring> {
        let mut b = IoUring::builder();
        b.setup_cqsize(entries * 2);
        if self.iopoll {
            b.setup_iopoll();
        }
        if let Some(sq) = self.sqpoll {
            b.setup_sqpoll(sq.idle_ms);
            if let Some(cpu) = sq.cpu {
                b.setup_sqpoll_cpu(cpu);
            }
        }
        if self.single_issuer {
            b.setup_single_issuer();
        }
        if self.defer {
            b.setup_defer_taskrun();
        }
        if self.coop {
            b.setup_coop_taskrun();
            b.setup_taskrun_flag();
        }
        b.build(entries)
    }

    /// The set-up paths it uses, for [`RingPaths::used`].
    pub(super) fn used(&self) -> impl Iterator<Item = &'static str> {
        [
            (self.iopoll, "iopoll"),
            (self.sqpoll.is_some(), "sqpoll"),
            (self.single_issuer, "single_issuer"),
            (self.defer, "defer_taskrun"),
            (self.coop, "coop_taskrun"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
    }
}

/// The id of the submission polling thread of the ring the calling thread created: the kernel
/// names it `iou-sqp-TID` after its creator.
pub(super) fn sqpoll_thread() -> Option<u32> {
    let name = format!("iou-sqp-{}", rustix::thread::gettid().as_raw_nonzero());
    std::fs::read_dir("/proc/self/task").ok()?.find_map(|e| {
        let e = e.ok()?;
        let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
        (comm.trim_end() == name)
            .then(|| e.file_name().to_str()?.parse().ok())
            .flatten()
    })
}

/// CPU time of thread `tid` of this process so far, ns (`schedstat`'s first field).
pub(super) fn thread_cpu_ns(tid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/self/task/{tid}/schedstat")).ok()?;
    s.split_whitespace().next()?.parse().ok()
}

/// Why a path was turned off after the kernel refused a ring with it (`error`), `needs`
/// saying what it needs ("Linux 6.0", "Linux 5.11 without privileges; …"): a kernel version
/// is blamed only when this kernel is older than it. A newer kernel refused another setting
/// of the ring along with it, and the note says so rather than blame the version.
pub(super) fn refused_text(error: &io::Error, needs: &str) -> String {
    let release = rustix::system::uname()
        .release()
        .to_string_lossy()
        .into_owned();
    let version = |text: &str| -> Option<(u32, u32)> {
        let mut parts = (text.split(|c: char| !c.is_ascii_digit())).filter(|p| !p.is_empty());
        Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
    };
    let needed = needs.strip_prefix("Linux ").and_then(version);
    match (needed, version(&release)) {
        (Some(needed), Some(running)) if running >= needed => {
            let tail = needs
                .split_once("; ")
                .map_or_else(String::new, |(_, t)| format!("; {t}"));
            format!(
                "the kernel refused a ring with it ({error}) though this kernel (Linux {release}) has it: another setting of the ring was refused with it{tail}"
            )
        }
        _ => format!("the kernel refused a ring with it ({error}); it needs {needs}"),
    }
}

#[cfg(test)]
#[allow(clippy::print_stderr)]
mod tests {
    //! Each path on this kernel, through a real ring: what is available works and is
    //! recorded; what is not falls back with the reason.

    use super::super::buf::{Slot, SlotArena};
    use super::super::ring::UringBackend;
    use super::super::ring::tests::{pipe, read};
    use super::super::{Backend, IoOp};
    use crate::job::uring::{SqPoll, TaskRun, UringOptions};
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::os::unix::fs::OpenOptionsExt;
    use std::os::unix::net::UnixStream;

    /// Whether a capability this kernel lacks may be skipped: not under CI, where every
    /// capability the tests need is there.
    fn may_skip(what: &str, why: &str) -> bool {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI=true and {what} is not available: {why}"
        );
        eprintln!("skipped: {what} is not available: {why}");
        true
    }

    /// One read of `len` bytes through `ring`, made readable by writing `data` to `w`.
    fn read_through<'a>(ring: &mut UringBackend<'_, 'a>, slot: Slot<'a>, w: &UnixStream) {
        ring.push(slot, &read(4096));
        ring.submit(false, 0).unwrap();
        (&*w).write_all(b"data").unwrap();
        let mut done = Vec::new();
        while done.is_empty() {
            ring.submit(true, 1_000_000_000).unwrap();
            ring.reap(&mut done);
        }
        assert_eq!(done[0].1, 4);
    }

    #[test]
    fn every_task_run_mode_reads_and_records_what_it_used() {
        for (mode, wants) in [
            (TaskRun::Auto, &["single_issuer", "defer_taskrun"][..]),
            (TaskRun::Defer, &["single_issuer", "defer_taskrun"][..]),
            (TaskRun::Coop, &["coop_taskrun"][..]),
            (TaskRun::Plain, &[][..]),
        ] {
            let (r, w) = pipe();
            let options = UringOptions {
                task_run: mode,
                ..UringOptions::default()
            };
            SlotArena::with(2, 4096, 1, |arena, mut slots| {
                let mut ring = UringBackend::new(vec![r.as_fd()], arena, &options, &[])
                    .expect("a ring: each path refused falls back");
                read_through(&mut ring, slots.pop().unwrap(), &w);
                let p = ring.paths();
                for path in wants
                    .iter()
                    .chain(&["registered_ring", "fixed_files", "fixed_buffers"])
                {
                    if !p.used.contains(path) {
                        let why = p.not_used.iter().find(|(n, _)| n == path);
                        let why = why.map(|(_, w)| w.as_str()).unwrap_or("no reason recorded");
                        assert!(
                            why != "no reason recorded",
                            "{mode:?}: {path} neither used nor explained: {p:?}"
                        );
                        may_skip(path, why);
                    }
                }
                if mode == TaskRun::Plain {
                    assert!(!p.used.iter().any(|u| u.ends_with("taskrun")), "{p:?}");
                }
            });
        }
    }

    #[test]
    fn a_submission_polling_thread_submits_and_its_cpu_is_counted() {
        let (r, w) = pipe();
        let options = UringOptions {
            sqpoll: Some(SqPoll {
                cpu: None,
                idle_ms: 10,
            }),
            ..UringOptions::default()
        };
        SlotArena::with(2, 4096, 1, |arena, mut slots| {
            let mut ring = UringBackend::new(vec![r.as_fd()], arena, &options, &[]).unwrap();
            let p = ring.paths();
            if !p.used.contains(&"sqpoll") {
                let why = &p
                    .not_used
                    .iter()
                    .find(|(n, _)| *n == "sqpoll")
                    .expect("a reason")
                    .1;
                may_skip("SQPOLL", why);
                return;
            }
            assert!(
                !p.used.contains(&"defer_taskrun"),
                "the kernel refuses deferred task work with SQPOLL: auto must not ask for it"
            );
            // The read is submitted by the thread; the ring is entered only to wait.
            read_through(&mut ring, slots.pop().unwrap(), &w);
            let cpu = ring.paths().sqpoll_cpu_ns;
            assert!(
                cpu.is_some(),
                "the polling thread's CPU time is read: {:?}",
                ring.paths()
            );
        });
    }

    #[test]
    fn polled_completions_fall_back_with_the_reason_where_the_device_cannot_poll() {
        let dir = tempfile::tempdir_in(std::env::temp_dir()).unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![7u8; 8192]).unwrap();
        let file = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT)
            .open(&path)
        {
            Ok(f) => f,
            Err(e) => return eprintln!("skipped: no O_DIRECT in {}: {e}", dir.path().display()),
        };
        let options = UringOptions {
            poll: true,
            ..UringOptions::default()
        };
        SlotArena::with(2, 4096, 1, |arena, _slots| {
            let ring = UringBackend::new(vec![file.as_fd()], arena, &options, &[4096]).unwrap();
            let p = ring.paths();
            match p.not_used.iter().find(|(n, _)| *n == "iopoll") {
                // This machine's disks have no poll queues: the probe read said so.
                Some((_, why)) => {
                    assert!(
                        why.contains("cannot be polled") && why.contains("io_poll"),
                        "{why}"
                    );
                    assert!(!p.used.contains(&"iopoll"));
                }
                None => assert!(p.used.contains(&"iopoll"), "{p:?}"),
            }
        });
    }

    #[test]
    fn completion_batches_wait_for_the_minimum_and_reap_at_most_the_maximum() {
        let (r1, w1) = pipe();
        let (r2, w2) = pipe();
        let options = UringOptions {
            batch_complete_min: 2,
            batch_complete_max: Some(1),
            ..UringOptions::default()
        };
        SlotArena::with(2, 4096, 1, |arena, mut slots| {
            let mut ring =
                UringBackend::new(vec![r1.as_fd(), r2.as_fd()], arena, &options, &[]).unwrap();
            ring.push(slots.pop().unwrap(), &read(4096));
            ring.push(
                slots.pop().unwrap(),
                &IoOp {
                    target: 1,
                    ..read(4096)
                },
            );
            ring.submit(false, 0).unwrap();
            (&w1).write_all(b"one").unwrap();
            // One completion of the two: a wait for two lasts its whole timeout.
            let t = std::time::Instant::now();
            ring.submit(true, 200_000_000).unwrap();
            assert!(
                t.elapsed() >= std::time::Duration::from_millis(150),
                "{:?}",
                t.elapsed()
            );
            (&w2).write_all(b"two").unwrap();
            let mut done = Vec::new();
            while ring.outstanding() == 2 || done.len() < 2 {
                ring.submit(true, 1_000_000_000).unwrap();
                let before = done.len();
                ring.reap(&mut done);
                assert!(done.len() - before <= 1, "at most one completion a reap");
            }
            let mut got: Vec<i32> = done.iter().map(|(_, r)| *r).collect();
            got.sort();
            assert_eq!(got, [3, 3]);
        });
    }

    #[test]
    fn a_path_refused_on_a_kernel_new_enough_for_it_does_not_blame_the_version() {
        use super::refused_text;
        let e = std::io::Error::from_raw_os_error(22);
        assert_eq!(
            refused_text(&e, "Linux 99.0"),
            "the kernel refused a ring with it (Invalid argument (os error 22)); it needs Linux 99.0"
        );
        let newer = refused_text(&e, "Linux 2.6");
        assert!(!newer.contains("it needs"), "{newer}");
        assert!(newer.contains("though this kernel (Linux "), "{newer}");
        let sqpoll = refused_text(
            &e,
            "Linux 2.6 without privileges; sqpoll_cpu must be an online CPU",
        );
        assert!(
            sqpoll.ends_with("; sqpoll_cpu must be an online CPU"),
            "{sqpoll}"
        );
    }
}
