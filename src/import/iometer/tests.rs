//! Conversions of the `.icf` files in tests/fixtures/iometer/ (written from Iometer's User's
//! Guide and the files it saves) and of smaller ones written here.

use super::convert;
use crate::import::{Converted, ImportError, Options, parse_map};
use crate::job::spec::{CountCycle, JobSpec};
use std::path::Path;

const STUDIES: &str = include_str!("../../../tests/fixtures/iometer/studies.icf");
const OLD: &str = include_str!("../../../tests/fixtures/iometer/old-1998.icf");
const NETWORK: &str = include_str!("../../../tests/fixtures/iometer/network.icf");

fn conv(name: &str, text: &str, opts: &Options) -> Result<Converted, ImportError> {
    convert(Path::new(name), text, opts)
}

fn job(c: &Converted) -> JobSpec {
    toml::from_str(&c.toml).unwrap_or_else(|e| panic!("{e}\n{}", c.toml))
}

fn counts(c: &Option<CountCycle>) -> Vec<u32> {
    match c {
        Some(CountCycle::List(v)) => v.clone(),
        other => panic!("{other:?}"),
    }
}

fn mapped(pairs: &[&str]) -> Options {
    Options {
        lenient: false,
        map: pairs.iter().map(|p| parse_map(p).unwrap()).collect(),
    }
}

#[test]
fn several_specifications_workers_targets_and_queue_depth_cycling() {
    let c = conv(
        "studies.icf",
        STUDIES,
        &mapped(&["C:=/mnt/c.dat", "D:\\=/mnt/d.dat"]),
    )
    .unwrap();
    assert!(c.left_out.is_empty());
    let t = &c.toml;
    let j = job(&c);
    assert_eq!(j.duration.unwrap().0.as_secs(), 1);
    assert!(j.ramp.is_none());
    assert_eq!(j.seed, Some(42));
    let cycle = j.cycle.as_ref().unwrap().get_ref();
    assert_eq!(cycle.group, Some(vec![1, 2]));
    assert_eq!(counts(&cycle.queue_depth), vec![1, 2]);
    // Targets: mapped, sized by disk maximum size (+ starting sector) in 512-byte sectors.
    let targets: Vec<_> = j.target.iter().map(|t| t.get_ref()).collect();
    assert_eq!(targets.len(), 2);
    assert_eq!(targets[0].name.as_deref(), Some("C:"));
    assert_eq!(targets[0].path.as_deref(), Some(Path::new("/mnt/c.dat")));
    assert_eq!(targets[0].size.unwrap().0, 4 << 20);
    assert_eq!(targets[1].path.as_deref(), Some(Path::new("/mnt/d.dat")));
    assert_eq!(targets[1].size.unwrap().0, 5 << 20);
    // Each worker runs each of its specifications in a group of its own.
    let w: Vec<_> = j.worker.iter().map(|w| w.get_ref()).collect();
    assert_eq!(w.len(), 4);
    assert_eq!(w[0].name.as_deref(), Some("Worker 1 [Database 8K]"));
    assert_eq!((w[0].group, w[0].queue_depth), (Some(1), Some(4)));
    assert_eq!(w[0].targets, Some(vec!["C:".to_string(), "D:".to_string()]));
    let db = w[0].access[0].get_ref();
    assert_eq!(db.class.as_deref(), Some("Database 8K"));
    assert_eq!(db.block_size.unwrap().0, 8192);
    assert_eq!(db.read.unwrap().0, 67.0);
    assert_eq!(db.random.unwrap().0, 100.0);
    assert_eq!(db.align.unwrap().0, 8192);
    assert_eq!(w[1].group, Some(2));
    let fs: Vec<_> = w[1].access.iter().map(|a| a.get_ref()).collect();
    assert_eq!(fs.len(), 8);
    let weights: Vec<u32> = fs.iter().map(|a| a.weight.unwrap()).collect();
    assert_eq!(weights, vec![10, 5, 5, 60, 2, 4, 4, 10]);
    assert_eq!(fs[0].block_size.unwrap().0, 512);
    assert!(fs[0].align.is_none());
    assert_eq!(w[2].name.as_deref(), Some("Worker 2 [Database 8K]"));
    assert_eq!(w[2].queue_depth, Some(2));
    let w2 = w[2].access[0].get_ref();
    assert_eq!(w2.offset.unwrap().0, 1 << 20);
    assert_eq!(w2.length.unwrap().0, 4 << 20);
    // Every part names its source line.
    for needle in [
        "# studies.icf:1: Version 2006.07.27\n",
        "# studies.icf:7: Run Time",
        "# studies.icf:24: queue_depth: start 1, end 2, step 2 EXPONENTIAL\n",
        "# studies.icf:26: Test Type CYCLE_OUTSTANDING_IOS\n",
        "# studies.icf:74: C: \"Local Disk\"\n",
        "# studies.icf:40: 8192,100,67,100,0,1,8192,0",
        "# studies.icf:64: use fixed seed ENABLED\nseed = 42\n",
        "# studies.icf:28: RESULTS DISPLAY",
        "name = \"Worker 1 [File Server]\"",
        "align 0 (Iometer: sector boundaries)",
    ] {
        assert!(t.contains(needle), "{needle:?} not in\n{t}");
    }
}

#[test]
fn unmapped_targets_become_scratch_files_with_a_note() {
    let c = conv("studies.icf", STUDIES, &Options::default()).unwrap();
    assert!(c.toml.contains("path = \"iometer-C.dat\""), "{}", c.toml);
    assert!(c.toml.contains("--map \"C:=PATH\""), "{}", c.toml);
}

#[test]
fn an_old_file_with_crlf_and_mixed_case_cycles_workers() {
    assert!(OLD.contains("\r\n"));
    let c = conv("old.icf", OLD, &mapped(&["E:=/e", "F:=/f"])).unwrap();
    let j = job(&c);
    assert_eq!(
        j.description.as_deref(),
        Some("two alike workers, one disk each")
    );
    let w: Vec<_> = j.worker.iter().map(|w| w.get_ref()).collect();
    assert_eq!(w.len(), 1, "{}", c.toml);
    assert_eq!(w[0].count, Some(2));
    assert_eq!(w[0].one_target_each, Some(true));
    assert_eq!(w[0].targets, Some(vec!["E:".to_string(), "F:".to_string()]));
    let a = w[0].access[0].get_ref();
    assert_eq!(a.block_size.unwrap().0, 65536);
    assert_eq!((a.read.unwrap().0, a.random.unwrap().0), (100.0, 0.0));
    let cycle = j.cycle.as_ref().unwrap().get_ref();
    assert_eq!(counts(&cycle.workers), vec![1, 2]);
    assert!(
        c.toml.contains("# old.icf:1: Version 1998.10.08\n"),
        "{}",
        c.toml
    );
    assert_eq!(j.target[0].get_ref().size.unwrap().0, 2 << 20);
}

#[test]
fn network_workers_and_replies_are_refused_with_their_lines() {
    let e = conv("net.icf", NETWORK, &Options::default()).unwrap_err();
    let msg = e.to_string();
    assert!(
        msg.contains("net.icf:52: Worker type NETWORK,TCP (worker Worker 2): a network worker"),
        "{msg}"
    );
    assert!(msg.contains("--lenient"), "{msg}");
    let mut o = mapped(&["PHYSICALDRIVE:1=/dev/sdz"]);
    o.lenient = true;
    let c = conv("net.icf", NETWORK, &o).unwrap();
    assert_eq!(c.left_out.len(), 1, "{:?}", c.left_out);
    let j = job(&c);
    assert_eq!(j.worker.len(), 1);
    assert_eq!(j.worker[0].get_ref().queue_depth, Some(8));
    assert_eq!(
        j.target[0].get_ref().path.as_deref(),
        Some(Path::new("/dev/sdz"))
    );
    assert!(c.toml.contains("# left out (net.icf:52)"), "{}", c.toml);
}

const SPECS_ONLY: &str = "Version 2008.06.18\n'ACCESS SPECIFICATIONS ===\n'Access specification name,default assignment\n\tAll 4K,ALL\n'size,% of size,% reads,% random,delay,burst,align,reply\n\t4096,100,50,50,0,1,0,0\n'Access specification name,default assignment\n\tUnused,NONE\n'size,% of size,% reads,% random,delay,burst,align,reply\n\t512,100,0,0,0,1,0,0\n'END access specifications\n";

#[test]
fn missing_sections_take_iometers_defaults() {
    let c = conv("specs.icf", SPECS_ONLY, &Options::default()).unwrap();
    let j = job(&c);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(j.worker.len(), cpus, "{}", c.toml);
    assert!(
        j.worker
            .iter()
            .all(|w| w.get_ref().access[0].get_ref().class.as_deref() == Some("All 4K"))
    );
    assert_eq!(j.target.len(), 1);
    assert_eq!(
        j.target[0].get_ref().size.unwrap().0,
        super::plan::SCRATCH_SIZE
    );
    assert_eq!(j.duration.unwrap().0.as_secs(), 30);
    let with_cpus = SPECS_ONLY.replace(
        "'ACCESS",
        "'TEST SETUP\n'Default Disk Workers to Spawn\n\tNUMBER_OF_CPUS\n'END test setup\n'ACCESS",
    );
    let c = conv("specs.icf", &with_cpus, &Options::default()).unwrap();
    assert!(
        c.toml
            .contains(&format!("NUMBER_OF_CPUS: {cpus}, the CPUs of the machine")),
        "{}",
        c.toml
    );
}

fn one_spec(lines: &str, test_type: &str) -> String {
    format!(
        "Version 1.1.0\n'TEST SETUP\n'Test Type\n\t{test_type}\n'END test setup\n'ACCESS SPECIFICATIONS\n'Access specification name,default assignment\n\tX,NONE\n'size,% of size,% reads,% random,delay,burst,align,reply\n{lines}'END access specifications\n'MANAGER LIST\n'Manager ID, manager name\n\t1,M\n'Worker\n\tW\n'Worker type\n\tDISK\n'Assigned access specs\n\tX\n'Target\n\tC:\n'END manager list\n"
    )
}

#[test]
fn transfer_delays_become_a_think_time_only_when_faithful() {
    let c = conv(
        "d.icf",
        &one_spec("\t4096,100,100,0,5,1,0,0\n", "NORMAL"),
        &Options::default(),
    )
    .unwrap();
    assert_eq!(
        job(&c).worker[0]
            .get_ref()
            .think_time
            .unwrap()
            .0
            .as_millis(),
        5
    );
    let e = conv(
        "d.icf",
        &one_spec("\t4096,100,100,0,5,4,0,0\n", "NORMAL"),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "d.icf:10: 4096,100,100,0,5,4,0,0: transfer delay 5 ms between bursts of 4 I/Os"
        ),
        "{e}"
    );
    let e = conv(
        "d.icf",
        &one_spec("\t4096,100,100,0,0,1,0,0\n", "INCREMENT_TARGETS_SERIAL"),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("d.icf:4: Test Type INCREMENT_TARGETS_SERIAL"),
        "{e}"
    );
    let e = conv(
        "d.icf",
        &one_spec("\t512,100,0,0,0,1,0,512\n", "NORMAL"),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("d.icf:10: 512,100,0,0,0,1,0,512: reply size 512 bytes"),
        "{e}"
    );
}

#[test]
fn broken_files_name_file_and_line() {
    let text =
        one_spec("\t4096,100,100,0,0,1,0,0\n", "NORMAL").replace("\tX\n'Target", "\tY\n'Target");
    let e = conv("b.icf", &text, &Options::default())
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("b.icf:20: worker W is assigned access specification `Y`"),
        "{e}"
    );
    let e = conv(
        "b.icf",
        &one_spec("\t4096,100,170,0,0,1,0,0\n", "NORMAL"),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("b.icf:10: % reads 170 is more than 100"), "{e}");
    let e = conv(
        "b.icf",
        &one_spec("\t4096,100,100,0,0,1,0,0\n", "NORMAL").replace("\tC:\n", ""),
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("`Target` has no value"), "{e}");
    let e = conv(
        "b.icf",
        "'TEST SETUP\n'Frobnicate\n\t3\n",
        &Options::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("b.icf:2: 'Frobnicate = 3: not an entry"), "{e}");
}
