//! What shapes a job's I/O and its end: strided zones, `exitall`, atomic writes, flows, and
//! reads' and writes' own block sizes.

use super::{conv_with, refused, resolves, text};
use crate::import::Options;

#[test]
fn strided_zones_become_the_entrys_zones_and_zoned_devices_are_refused() {
    let a = |t: &str| {
        let job = resolves(t);
        job.workers[0].access[0].zones
    };
    // fio's zonerange defaults to zonesize; no zonemode with a zonesize is strided.
    let z = a(&text(
        "rw=read\nzonemode=strided\nzonesize=256k\nzoneskip=64k\n",
    ))
    .unwrap();
    assert_eq!(
        (z.size_bytes, z.transfer_bytes, z.skip_bytes),
        (256 << 10, 256 << 10, 64 << 10)
    );
    let z = a(&text("rw=randread\nzonerange=128k\nzonesize=32k\n")).unwrap();
    assert_eq!(
        (z.size_bytes, z.transfer_bytes, z.skip_bytes),
        (128 << 10, 32 << 10, 0)
    );
    assert!(a(&text("rw=read\nzonemode=none\nzoneskip=4k\n")).is_none());
    for (job, says) in [
        (
            "zonemode=zbd\nzonesize=256m\n",
            "job.fio:6: zonemode=zbd: storlab does not drive zoned",
        ),
        (
            "zonemode=none\nzonesize=256k\n",
            "job.fio:7: zonesize=256k: fio refuses",
        ),
        (
            "zonemode=strided\n",
            "job.fio:6: zonemode=strided: fio needs zonesize",
        ),
        (
            "zonemode=stripes\nzonesize=4k\n",
            "job.fio:6: zonemode=stripes: none, strided or zbd",
        ),
    ] {
        let e = refused(job);
        assert!(e.contains(says), "{job}: {e}");
    }
}

#[test]
fn exitall_ends_the_step_or_the_run_as_exit_what_says() {
    let conv = |t: &str| conv_with(t, &Options::default());
    let on_done = |t: &str| -> Vec<crate::job::OnDone> {
        let c = conv(t).unwrap_or_else(|e| panic!("{e}"));
        resolves(&c.toml)
            .workers
            .iter()
            .map(|w| w.on_done)
            .collect()
    };
    use crate::job::OnDone::{Continue, EndRun, EndStep};
    let head = "[global]\nioengine=psync\nfilename=/tmp/x\nsize=1m\nruntime=5\nexitall\n";
    // exit_what=stonewall: the jobs running stop; all: the later ones do not run either.
    let t = format!("{head}[a]\nexit_what=stonewall\nnumber_ios=10\n[b]\ntime_based\n");
    assert_eq!(on_done(&t), [EndStep, Continue]);
    let t = format!("{head}[a]\nexit_what=all\nnumber_ios=10\n[b]\nstonewall\nnumber_ios=5\n");
    assert_eq!(on_done(&t), [EndRun, Continue]);
    // exit_what=group (the default): the two jobs of one reporting group are the step.
    let t = format!("{head}[a]\nnumber_ios=10\n[b]\nnumber_ios=20\n");
    assert_eq!(on_done(&t), [EndStep, EndStep]);
    assert!(
        conv(&t)
            .unwrap()
            .toml
            .contains("# fio's exitall (exit_what=group, its reporting group the step's jobs)")
    );
    // Each in a reporting group of its own (new_group): each stops only itself.
    let t = format!("{head}[a]\nnumber_ios=10\n[b]\nnew_group\nnumber_ios=20\n");
    assert_eq!(on_done(&t), [Continue, Continue]);
    assert!(conv(&t).unwrap().toml.contains("# exitall: no effect"));
    // A job's clones (its reporting group) beside another job of the step: storlab cannot
    // stop only them.
    let t = format!("{head}[a]\nnumber_ios=10\n[b]\nnew_group\nnumjobs=2\nnumber_ios=20\n");
    let e = conv(&t).unwrap_err().to_string();
    assert!(
        e.contains("job.fio:6: exitall: fio then stops the jobs of its reporting group only"),
        "{e}"
    );
    // A job that runs for its runtime ends with the others.
    let t = format!("{head}[a]\ntime_based\n");
    assert_eq!(on_done(&t), [Continue]);
    // Without exitall, exit_what does nothing.
    let t = text("exit_what=all\n");
    assert!(
        t.contains("# exit_what: no effect (fio uses it with exitall)"),
        "{t}"
    );
    let e = refused("exitall\nexit_what=some\n");
    assert!(e.contains("exit_what=some: group, stonewall or all"), "{e}");
}

#[test]
fn atomic_writes_carry_rwf_atomic() {
    let t = text("rw=randwrite\ndirect=1\nbs=16k\natomic=1\n");
    assert!(
        t.contains("job.fio:9: atomic=1") && t.contains("atomic = true"),
        "{t}"
    );
    assert!(resolves(&t).workers[0].access[0].atomic);
    assert!(!resolves(&text("rw=randwrite\natomic=0\n")).workers[0].access[0].atomic);
}

#[test]
fn a_flows_jobs_become_one_worker_in_the_ratio_of_their_weights() {
    let conv = |t: &str| conv_with(t, &Options::default());
    let head =
        "[global]\nioengine=io_uring\nfilename=/tmp/x\nsize=1m\ntime_based\nruntime=5\niodepth=4\n";
    let t = format!(
        "{head}[w]\nrw=write\nflow=1\n[r]\nrw=randread\niodepth=8\nflow=8\n[other]\nrw=read\n"
    );
    let c = conv(&t).unwrap_or_else(|e| panic!("{e}"));
    let job = resolves(&c.toml);
    assert_eq!(job.workers.len(), 2, "{}", c.toml);
    let w = &job.workers[0];
    assert_eq!(w.queue_depth, 12);
    let entries: Vec<(u32, f64, &str)> = (w.access.iter())
        .map(|a| (a.weight, a.read_pct, job.classes[a.class].as_str()))
        .collect();
    assert_eq!(entries, [(1, 0.0, "w"), (8, 100.0, "r")]);
    // Their I/O limits add up; flow_id keeps flows apart.
    let t = "[global]\nioengine=io_uring\nfilename=/tmp/x\nsize=1m\n[a]\nnumber_ios=10\nflow=1\n[b]\nnumber_ios=20\nflow=2\n[c]\nflow_id=1\nflow=3\n";
    let job = resolves(&conv(t).unwrap().toml);
    assert_eq!(job.workers.len(), 2);
    assert_eq!(job.workers[0].io_limit, Some(crate::job::IoLimit::Ios(30)));
    assert!(
        conv(t)
            .unwrap()
            .toml
            .contains("# flow: no effect (the only job of its flow_id")
    );
    // Jobs that differ in more than what they do, and psync's one I/O at a time: refused.
    for (t, says) in [
        (
            format!("{head}[w]\nrw=write\nflow=1\n[r]\nfilename=/tmp/y\nflow=8\n"),
            "give them the same files",
        ),
        (
            format!("{head}[w]\nrw=write\nflow=1\n[r]\nnumjobs=2\nflow=8\n"),
            "numjobs (1)",
        ),
        (
            "[global]\nfilename=/tmp/x\nsize=1m\n[w]\nrw=write\nflow=1\n[r]\nflow=8\n".to_string(),
            "with the psync engine it does one I/O at a time",
        ),
        (format!("{head}[w]\nflow=1001\n"), "a weight from 1 to 1000"),
    ] {
        let e = conv(&t).unwrap_err().to_string();
        assert!(e.contains(says), "{t}: {e}");
    }
}

#[test]
fn reads_and_writes_of_their_own_sizes_are_two_entries_weighted_by_the_mix() {
    let entries = |t: &str| -> Vec<(u32, f64, u64, usize)> {
        let job = resolves(&text(t));
        (job.workers[0].access.iter())
            .map(|a| {
                (
                    a.weight,
                    a.read_pct,
                    a.block_size_bytes,
                    a.block_sizes.len(),
                )
            })
            .collect()
    };
    assert_eq!(
        entries("rw=randrw\nrwmixread=70\nbs=4k,64k\n"),
        [(700, 100.0, 4096, 0), (300, 0.0, 65536, 0)]
    );
    // One direction: its own size only; the same size twice: one entry.
    assert_eq!(entries("rw=randread\nbs=4k,64k\n"), [(1, 100.0, 4096, 0)]);
    assert_eq!(entries("rw=write\nbs=4k,64k\n"), [(1, 0.0, 65536, 0)]);
    assert_eq!(entries("rw=randrw\nbs=8k,8k\n"), [(1, 50.0, 8192, 0)]);
    // An empty size is fio's default, 4 KiB.
    assert_eq!(
        entries("rw=randrw\nbs=,8k\n"),
        [(500, 100.0, 4096, 0), (500, 0.0, 8192, 0)]
    );
    // bssplit: the reads' mix, then the writes'.
    assert_eq!(
        entries("rw=randrw\nbssplit=4k/50:8k/50,64k/100\n"),
        [(500, 100.0, 8192, 2), (500, 0.0, 65536, 1)]
    );
    // Without time_based, the data once over at the mix's mean size: 1 MiB at 34 KiB.
    let job = resolves(&text("rw=randrw\nbs=4k,64k\n"));
    assert_eq!(job.workers[0].io_limit, Some(crate::job::IoLimit::Ios(31)));
    // fio paces each direction by its bytes: not converted.
    assert!(
        refused("rw=randrw\nbs=4k,64k\nrate_iops=100\n")
            .contains("rate_iops=100: a rate with the reads' and writes' own sizes")
    );
    assert!(refused("rw=randrw\nbs=4k-8k,64k\n").contains("bs=4k-8k,64k"));
}
