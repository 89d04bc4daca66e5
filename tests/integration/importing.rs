//! One way in for other tools' job files: `storlab import FILE` and `storlab run FILE`
//! recognise the format from the content (or `--from`), a converted run records where its job
//! came from, and the flags that only apply to converted jobs are refused on storlab's own.
//! Each format's conversion has its own tests (fioimport, iometer, diskspd, vdbench).

use crate::harness::{load_json, run_in, scratch, str_at};

const FIO_JOB: &str = "[global]\nioengine=psync\ndirect=1\nsize=1m\nruntime=1\ntime_based\n\n[reader]\nrw=randread\nbs=4k\nfilename=data.bin\n";

#[test]
fn a_fio_file_runs_as_it_is_and_its_results_say_it_was_converted() {
    let dir = scratch();
    std::fs::write(dir.path().join("job.fio"), FIO_JOB).unwrap();
    let out = run_in(dir.path(), ["run", "job.fio", "-o", "r.json"]);
    out.expect_ok()
        .stderr_has(&["job.fio: fio file, converted (see it with storlab import job.fio)"]);
    let r = load_json(&dir.path().join("r.json"));
    assert_eq!(str_at(&r, "/invocation/source/kind"), "imported");
    assert_eq!(str_at(&r, "/invocation/source/format"), "fio");
    assert_eq!(str_at(&r, "/invocation/source/from"), "job.fio");
    out.stdout_has(&["fio file job.fio"]);
    // The same file through `storlab import`: the job it ran.
    run_in(dir.path(), ["import", "job.fio"])
        .expect_ok()
        .stdout_has(&["[[worker]]", "name = \"reader\""]);
}

#[test]
fn what_is_not_another_tools_file_is_refused_with_how_to_name_its_format() {
    let dir = scratch();
    std::fs::write(dir.path().join("own.toml"), "duration = \"1s\"\n").unwrap();
    run_in(dir.path(), ["import", "own.toml"])
        .expect_code(2)
        .stderr_has(&["this is a storlab job already: run it with storlab run own.toml"]);
    std::fs::write(dir.path().join("notes.txt"), "hello there\n").unwrap();
    run_in(dir.path(), ["import", "notes.txt"])
        .expect_code(2)
        .stderr_has(&[
            "notes.txt: not a job file storlab can convert",
            "--from fio|iometer|diskspd|vdbench",
        ]);
    run_in(dir.path(), ["import", "notes.txt", "--from", "lotus"])
        .expect_code(2)
        .stderr_has(&["--from: `lotus` is not a format storlab converts; formats: fio, iometer, diskspd, vdbench"]);
    // --from fio reads it as fio does: no job section.
    run_in(dir.path(), ["import", "notes.txt", "--from", "fio"]).expect_code(2);
}

#[test]
fn flags_for_converted_jobs_are_refused_on_storlabs_own() {
    let dir = scratch();
    std::fs::write(dir.path().join("own.toml"), "duration = \"1s\"\n").unwrap();
    for flag in [&["--lenient"][..], &["--map", "C:=/tmp/x"]] {
        let mut args = vec!["run", "own.toml", "--dry-run"];
        args.extend_from_slice(flag);
        run_in(dir.path(), &args)
            .expect_code(2)
            .stderr_has(&[&format!("{} applies to another tool's job file", flag[0])]);
    }
    run_in(dir.path(), ["run", "own.toml", "--map", "nothing"])
        .expect_code(2)
        .stderr_has(&["write TARGET=PATH"]);
}
